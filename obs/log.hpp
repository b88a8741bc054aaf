#pragma once

#include <string>
#include <string_view>

/// Logging setup and per-call context. Lines logged while a scoped_log_fields
/// is alive on the thread carry its fields: as `key=value` after the message
/// in text format, as JSON members in json format.
namespace actor_host::obs {

struct log_fields {
  std::string_view trace_id{};
  std::string_view runtime_id{};
  std::string_view action{};
  std::string_view service{};
};

/// Sets the fields for the current thread until destroyed (nests: the inner
/// scope's non-empty fields win, the rest are inherited).
class scoped_log_fields {
public:
  explicit scoped_log_fields(log_fields f);
  ~scoped_log_fields();
  scoped_log_fields(const scoped_log_fields&) = delete;
  scoped_log_fields& operator=(const scoped_log_fields&) = delete;

private:
  log_fields saved_;
};

/// The fields in effect on this thread.
const log_fields& current_log_fields();

/// Installs the process logger on stderr: `format` is "text" (readable,
/// colored on a terminal) or "json" (one object per line); `level` one of
/// trace|debug|info|warn|error. Returns "" or why not.
std::string setup_logging(std::string_view format, std::string_view level);

} // namespace actor_host::obs
