#pragma once

#include "wire/status.hpp"

#include <boost/json/value.hpp>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace actor_host::actions {

/// What a program's stdout means (docs/PROGRAM_ACTIONS.md, "stdout: one JSON
/// object per line"): each non-blank line is `{"chunk": v}`, `{"result": v}`
/// or `{"error": ...}`, anything else fails the run. Pure: it sees bytes as
/// they were read, in pieces of any size, and knows nothing of processes,
/// so the rules can be tested without starting one.
///
/// The first failure (an error line, a line outside the protocol, a line
/// over the size cap) decides the outcome; everything after it is ignored.
class program_protocol {
public:
  /// A stdout line longer than this is a protocol violation rather than a
  /// reason to grow without bound.
  static constexpr std::size_t default_max_line_bytes = 64 * 1024 * 1024;

  struct failure_info {
    wire::status_code code;
    std::string message;
  };

  /// `on_chunk` gets each chunk at once, in order; whatever it throws
  /// passes through feed(). `action_name` goes into messages.
  program_protocol(std::string action_name, std::function<void(boost::json::value)> on_chunk,
                   std::size_t max_line_bytes = default_max_line_bytes);

  /// Bytes as read from stdout. Complete lines are handled now; the rest
  /// waits for its newline.
  void feed(std::string_view bytes);

  /// End of stdout: the last line may lack its newline.
  void finish();

  /// Drops what is buffered and all further output: the run is being
  /// stopped and its outcome no longer depends on stdout.
  void ignore_rest();

  /// True once the outcome is a failure.
  bool failed() const noexcept {
    return failure_.has_value();
  }

  const std::optional<failure_info>& failure() const noexcept {
    return failure_;
  }

  /// The last result line's value, if any.
  std::optional<boost::json::value>& result() noexcept {
    return result_;
  }

  /// Complete lines seen so far, blank ones included (the numbering of the
  /// violation message).
  std::size_t lines() const noexcept {
    return line_no_;
  }

private:
  void on_line(std::string_view line);
  void on_error_line(const boost::json::value& error);
  void violation(std::string_view line);
  void fail(wire::status_code code, std::string message);

  std::string action_name_;
  std::function<void(boost::json::value)> on_chunk_;
  std::size_t max_line_bytes_;
  std::string buf_;
  bool ignoring_ = false;
  std::size_t line_no_ = 0;
  std::optional<boost::json::value> result_;
  std::optional<failure_info> failure_;
};

} // namespace actor_host::actions
