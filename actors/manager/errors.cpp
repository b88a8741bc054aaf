#include "actors/manager/errors.hpp"

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

int http_status(std::string_view error_object) {
  rpc::object_members err;
  std::string why;
  if (!rpc::split_object(error_object, err, why))
    return 500;
  if (auto* data = err.find("data")) {
    rpc::object_members d;
    double status = 0;
    if (rpc::split_object(*data, d, why))
      if (auto* c = d.find("code"); c && rpc::number_value(*c, status))
        return registry::http_status_for(static_cast<int>(status));
  }
  double code = 0;
  if (auto* c = err.find("code"); c && rpc::number_value(*c, code)) {
    switch (static_cast<int>(code)) {
      case rpc::code::parse_error:
      case rpc::code::invalid_request:
      case rpc::code::invalid_params:
        return 400;
      case rpc::code::method_not_found:
        return 404;
      default:
        break;
    }
  }
  return 500;
}

} // namespace actor_host::manager_errors

