#include "actors/manager/errors.hpp"

#include <optional>

#include "net/jsonrpc.hpp"

namespace actor_host::manager_errors {

namespace rpc = net::jsonrpc;
using registry::status_code;

std::string status_error(status_code code, std::string_view message) {
  auto data = R"({"code":)" + std::to_string(static_cast<int>(code)) + R"(,"message":)"
              + rpc::quote(message) + "}";
  return rpc::error_object(rpc::code::server_error, message, data);
}

std::string no_runtimes() {
  return status_error(status_code::unavailable,
                      "No runtimes found: no runtime is registered with this manager");
}

std::string runtime_not_found(std::string_view id) {
  return status_error(status_code::not_found, "Runtime " + std::string{id} + " not found");
}

std::string timed_out(std::string_view runtime_id, std::string_view method,
                      std::chrono::milliseconds after) {
  return status_error(status_code::deadline_exceeded,
                      "Request to runtime " + std::string{runtime_id} + " timed out after "
                        + std::to_string(after.count()) + " ms (" + std::string{method} + ")");
}

std::string connection_closed(std::string_view runtime_id, std::string_view method) {
  return status_error(status_code::unavailable,
                      "Runtime " + std::string{runtime_id}
                        + " connection closed before the response was received ("
                        + std::string{method} + ")");
}

std::string shutting_down() {
  return status_error(status_code::unavailable, "Manager is shutting down");
}

std::string invalid_params(std::string_view detail) {
  return rpc::error_object(rpc::code::invalid_params, "Invalid params: " + std::string{detail});
}

std::string internal(std::string_view detail) {
  return status_error(status_code::internal, detail);
}

std::string too_many_calls(std::size_t cap, std::string_view caller) {
  return status_error(status_code::resource_exhausted,
                      "Too many calls in flight from this " + std::string{caller}
                        + ": max_calls_per_caller is " + std::to_string(cap)
                        + "; wait for some to finish");
}

std::string bidi_input_overflow(std::size_t cap) {
  return status_error(status_code::resource_exhausted,
                      "Bidi input held for a run that has not started exceeds "
                      "max_bidi_input_bytes ("
                        + std::to_string(cap)
                        + " bytes): send less input before the runtime reports runActionState, "
                          "or raise max_bidi_input_bytes");
}

namespace {

/// data.code of an error object, if it carries a Status.
std::optional<int> data_status(const rpc::object_members& err) {
  std::string why;
  if (auto* data = err.find("data")) {
    rpc::object_members d;
    double status = 0;
    if (rpc::split_object(*data, d, why))
      if (auto* c = d.find("code"); c && rpc::number_value(*c, status))
        return static_cast<int>(status);
  }
  return std::nullopt;
}

std::optional<int> rpc_code(const rpc::object_members& err) {
  double code = 0;
  if (auto* c = err.find("code"); c && rpc::number_value(*c, code))
    return static_cast<int>(code);
  return std::nullopt;
}

} // namespace

int http_status(std::string_view error_object) {
  rpc::object_members err;
  std::string why;
  if (!rpc::split_object(error_object, err, why))
    return 500;
  if (auto status = data_status(err))
    return registry::http_status_for(*status);
  switch (rpc_code(err).value_or(0)) {
    case rpc::code::parse_error:
    case rpc::code::invalid_request:
    case rpc::code::invalid_params:
      return 400;
    case rpc::code::method_not_found:
      return 404;
    default:
      return 500;
  }
}

int status_code_of(std::string_view error_object) {
  using registry::status_code;
  rpc::object_members err;
  std::string why;
  if (!rpc::split_object(error_object, err, why))
    return static_cast<int>(status_code::unknown);
  if (auto status = data_status(err))
    return *status;
  switch (rpc_code(err).value_or(0)) {
    case rpc::code::parse_error:
    case rpc::code::invalid_request:
    case rpc::code::invalid_params:
      return static_cast<int>(status_code::invalid_argument);
    case rpc::code::method_not_found:
      return static_cast<int>(status_code::unimplemented);
    default:
      return static_cast<int>(status_code::unknown);
  }
}

} // namespace actor_host::manager_errors

