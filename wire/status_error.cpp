#include "wire/status_error.hpp"

#include "wire/jsonrpc.hpp"

namespace actor_host::wire {

namespace rpc = wire::jsonrpc;

std::string status_error(status_code code, std::string_view message,
                         std::initializer_list<status_detail> details) {
  return rpc::error_object(rpc::code::server_error, message, status_json(code, message, details));
}

std::string status_json(status_code code, std::string_view message,
                        std::initializer_list<status_detail> details) {
  std::string data = R"({"code":)" + std::to_string(static_cast<int>(code)) + R"(,"message":)"
                     + rpc::quote(message);
  bool any = false;
  for (auto& [name, value] : details) {
    if (value.empty())
      continue;
    data += any ? "," : R"(,"details":{)";
    any = true;
    data += rpc::quote(name);
    data += ':';
    data += rpc::quote(value);
  }
  data += any ? "}}" : "}";
  return data;
}

} // namespace actor_host::wire
