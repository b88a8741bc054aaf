#include "actions/program_protocol.hpp"

#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include <utility>

namespace actor_host::actions {

namespace {

namespace json = boost::json;

/// A failure status from an error line: a name or its number, never OK.
std::optional<wire::status_code> parse_status(const json::value& v) {
  constexpr int last = static_cast<int>(wire::status_code::unauthenticated);
  if (auto* s = v.if_string()) {
    // OK is no failure status.
    if (auto code = wire::status_from_name(*s); code && *code != wire::status_code::ok)
      return code;
  } else if (auto n = v.if_int64(); n && *n >= 1 && *n <= last) {
    return static_cast<wire::status_code>(*n);
  }
  return std::nullopt;
}

} // namespace

program_protocol::program_protocol(std::string action_name,
                                   std::function<void(json::value)> on_chunk,
                                   std::size_t max_line_bytes)
  : action_name_(std::move(action_name)),
    on_chunk_(std::move(on_chunk)),
    max_line_bytes_(max_line_bytes) {
}

void program_protocol::feed(std::string_view bytes) {
  if (ignoring_)
    return;
  std::size_t old_size = buf_.size();
  buf_.append(bytes);
  // Only the new bytes can hold the next newline.
  std::size_t begin = 0;
  for (auto nl = buf_.find('\n', old_size); nl != std::string::npos;
       nl = buf_.find('\n', begin)) {
    on_line(std::string_view{buf_}.substr(begin, nl - begin));
    if (ignoring_) {
      buf_.clear();
      return;
    }
    begin = nl + 1;
  }
  buf_.erase(0, begin);
  if (buf_.size() > max_line_bytes_) {
    buf_.clear();
    fail(wire::status_code::internal,
         "program wrote a stdout line longer than " + std::to_string(max_line_bytes_) + " bytes");
  }
}

void program_protocol::finish() {
  if (ignoring_ || buf_.empty())
    return;
  auto line = std::move(buf_);
  buf_.clear();
  on_line(line);
}

void program_protocol::ignore_rest() {
  ignoring_ = true;
  buf_.clear();
}

void program_protocol::on_line(std::string_view line) {
  ++line_no_;
  if (failure_)
    return;
  if (!line.empty() && line.back() == '\r')
    line.remove_suffix(1);
  if (line.find_first_not_of(" \t") == std::string_view::npos)
    return;
  boost::system::error_code ec;
  auto v = json::parse(line, ec);
  auto* obj = ec ? nullptr : v.if_object();
  if (obj == nullptr || obj->size() != 1) {
    violation(line);
    return;
  }
  auto& [key, value] = *obj->begin();
  if (key == "chunk") {
    on_chunk_(std::move(value));
  } else if (key == "result") {
    result_ = std::move(value);
  } else if (key == "error") {
    on_error_line(value);
  } else {
    violation(line);
  }
}

void program_protocol::on_error_line(const json::value& error) {
  auto code = wire::status_code::internal;
  std::string message = "program action " + action_name_ + " failed";
  if (auto* obj = error.if_object()) {
    if (auto* status = obj->if_contains("status"))
      code = parse_status(*status).value_or(wire::status_code::unknown);
    if (auto* msg = obj->if_contains("message"); msg && msg->is_string())
      message = std::string{msg->get_string()};
  } else if (auto* s = error.if_string()) {
    message = std::string{*s};
  }
  fail(code, std::move(message));
}

void program_protocol::violation(std::string_view line) {
  constexpr std::size_t shown = 200;
  std::string text{line.substr(0, shown)};
  if (line.size() > shown)
    text += "...";
  spdlog::warn("program action {}: stdout line {} is not a protocol message: {}", action_name_,
               line_no_, text);
  fail(wire::status_code::internal, "program wrote stdout line " + std::to_string(line_no_)
                                          + " that is not a protocol message (log to stderr): "
                                          + text);
}

void program_protocol::fail(wire::status_code code, std::string message) {
  if (failure_)
    return;
  failure_.emplace(failure_info{code, std::move(message)});
  ignoring_ = true;
}

} // namespace actor_host::actions
