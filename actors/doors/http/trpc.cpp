#include "actors/doors/http/trpc.hpp"

#include "wire/jsonrpc.hpp"

namespace actor_host::trpc {

namespace rpc = wire::jsonrpc;

namespace {

struct trpc_code {
  int http;
  int code;
  const char* name;
};

// tRPC's TRPC_ERROR_CODES_BY_KEY, by the HTTP status we would answer.
trpc_code by_status(int http) {
  switch (http) {
    case 400: return {400, -32600, "BAD_REQUEST"};
    case 401: return {401, -32001, "UNAUTHORIZED"};
    case 403: return {403, -32003, "FORBIDDEN"};
    case 404: return {404, -32004, "NOT_FOUND"};
    case 405: return {405, -32005, "METHOD_NOT_SUPPORTED"};
    case 408: case 504: return {408, -32008, "TIMEOUT"};
    case 409: return {409, -32009, "CONFLICT"};
    case 412: return {412, -32012, "PRECONDITION_FAILED"};
    case 413: return {413, -32013, "PAYLOAD_TOO_LARGE"};
    case 429: return {429, -32029, "TOO_MANY_REQUESTS"};
    case 499: return {499, -32099, "CLIENT_CLOSED_REQUEST"};
    case 501: return {501, -32603, "NOT_IMPLEMENTED"};
    default: return {500, -32603, "INTERNAL_SERVER_ERROR"};
  }
}

std::string shaped(std::string_view message, trpc_code c, std::string_view procedure) {
  return R"({"error":{"message":)" + rpc::quote(message) + R"(,"code":)" + std::to_string(c.code)
         + R"(,"data":{"code":")" + c.name + R"(","httpStatus":)" + std::to_string(c.http)
         + R"(,"path":)" + rpc::quote(procedure) + "}}}";
}

} // namespace

std::string result(std::string data) {
  return R"({"result":{"data":)" + std::move(data) + "}}";
}

std::string error(std::string_view message, int http_status, std::string_view procedure) {
  return shaped(message.empty() ? "error" : message, by_status(http_status), procedure);
}

std::string error(const call_error& error, std::string_view procedure) {
  return trpc::error(error.message, error.http, procedure);
}

std::string bad_request(std::string_view message, std::string_view procedure) {
  return shaped(message, by_status(400), procedure);
}

wire::expected<std::map<std::string, std::string>> input_as_query(const std::string& input) {
  std::map<std::string, std::string> query;
  if (input.empty())
    return query;
  auto o = rpc::split_object(input);
  if (!o || !rpc::validate(input))
    return wire::unexpected{"input must be a JSON object"};
  for (auto& [k, raw] : o->members) {
    std::string text;
    if (rpc::string_value(raw, text))
      query[k] = std::move(text);
    else if (raw != "null")
      query[k] = raw; // numbers as their text (limit)
  }
  return query;
}

} // namespace actor_host::trpc
