#include "actors/call/errors.hpp"

#include <boost/json.hpp>

#include <optional>

#include "wire/iii_protocol.hpp"
#include "wire/jsonrpc.hpp"
#include "wire/status.hpp"

namespace actor_host::manager_errors {

namespace rpc = wire::jsonrpc;
using wire::status_code;

call_error make_error(status_code code, std::string_view message,
                      std::initializer_list<wire::status_detail> details) {
  return call_error{static_cast<std::int32_t>(code), wire::http_status_for(static_cast<int>(code)),
                    std::string{message}, wire::status_error(code, message, details)};
}

call_error no_runtimes() {
  return make_error(status_code::unavailable,
                    "No runtimes found: no runtime is registered with this manager");
}

call_error runtime_not_found(std::string_view id) {
  return make_error(status_code::not_found, "Runtime " + std::string{id} + " not found");
}

call_error service_not_found(std::string_view name) {
  return make_error(status_code::not_found,
                    "No runtime named " + std::string{name}
                      + " is registered (runtimeName names a service: the name its "
                        "replicas registered with)");
}

call_error service_busy(std::string_view service, std::size_t queued) {
  return make_error(status_code::resource_exhausted,
                    "Service " + std::string{service}
                      + " is busy: every replica is at its cap on calls in flight and "
                      + std::to_string(queued)
                      + " call(s) wait in its queue, which is full; retry later or add "
                        "replicas");
}

call_error queue_timed_out(std::string_view service, std::chrono::milliseconds waited) {
  return make_error(status_code::deadline_exceeded,
                    "Call to service " + std::string{service} + " waited " +
                      std::to_string(waited.count())
                      + " ms in its queue (every replica at its cap) and timed out");
}

call_error timed_out(std::string_view runtime_id, std::string_view method,
                     std::chrono::milliseconds after) {
  return make_error(status_code::deadline_exceeded,
                    "Request to runtime " + std::string{runtime_id} + " timed out after "
                      + std::to_string(after.count()) + " ms (" + std::string{method} + ")");
}

call_error connection_closed(std::string_view runtime_id, std::string_view method) {
  return make_error(status_code::unavailable,
                    "Runtime " + std::string{runtime_id}
                      + " connection closed before the response was received ("
                      + std::string{method} + ")");
}

call_error answer_too_large(std::string_view runtime_id, std::uint64_t size, std::size_t cap) {
  return make_error(status_code::resource_exhausted,
                    "Runtime " + std::string{runtime_id} + " sent a message of "
                      + std::to_string(size)
                      + " bytes for this call, over the manager's max_frame_bytes ("
                      + std::to_string(cap)
                      + "): the call failed; make the answer or chunk smaller, or raise "
                        "--max-frame-bytes");
}

call_error node_lost(std::string_view runtime_id, std::string_view node, std::string_view method,
                     std::string_view why) {
  return make_error(status_code::unavailable,
                    "Runtime " + std::string{runtime_id} + " on node " + std::string{node}
                      + " is unreachable: the link to node " + std::string{node} + " was lost ("
                      + std::string{why} + ") before the response was received ("
                      + std::string{method} + ")");
}

call_error shutting_down() {
  return make_error(status_code::unavailable, "Manager is shutting down");
}

call_error invalid_params(std::string_view detail) {
  return rpc_error(rpc::code::invalid_params, "Invalid params: " + std::string{detail});
}

call_error internal(std::string_view detail) {
  return make_error(status_code::internal, detail);
}

call_error too_many_calls(std::size_t cap, std::string_view caller) {
  return make_error(status_code::resource_exhausted,
                    "Too many calls in flight from this " + std::string{caller}
                      + ": max_calls_per_caller is " + std::to_string(cap)
                      + "; wait for some to finish");
}

call_error bidi_input_overflow(std::size_t cap) {
  return make_error(status_code::resource_exhausted,
                    "Bidi input held for a run that has not started exceeds "
                    "max_bidi_input_bytes ("
                      + std::to_string(cap)
                      + " bytes): send less input before the runtime reports runActionState, "
                        "or raise max_bidi_input_bytes");
}

call_error iii_error(std::string_view code, std::string_view message) {
  return call_error{static_cast<std::int32_t>(status_code::unknown), 500, std::string{message},
                    wire::iii::error_object(code, message)};
}

call_error iii_error_as_genkit(std::string_view code, std::string_view message) {
  auto status = wire::iii::genkit_status_of(code);
  auto object = wire::iii::iii_error_to_genkit(code, message);
  return call_error{status, wire::http_status_for(status),
                    message.empty() ? std::string{"iii function failed"} : std::string{message},
                    std::move(object)};
}

namespace {

/// What an error object without a Status stands for, by its JSON-RPC code.
struct rpc_meaning {
  int rpc;
  status_code status;
  int http; // not always the Status's own: an unknown method is a 404
};

constexpr rpc_meaning rpc_meanings[] = {
  {rpc::code::parse_error, status_code::invalid_argument, 400},
  {rpc::code::invalid_request, status_code::invalid_argument, 400},
  {rpc::code::invalid_params, status_code::invalid_argument, 400},
  {rpc::code::method_not_found, status_code::unimplemented, 404},
};
constexpr rpc_meaning no_meaning{0, status_code::unknown, 500};

/// How an error object classifies: its Status (data.code) if it carries
/// one, else the meaning of its JSON-RPC code.
struct classified {
  std::optional<int> status;
  rpc_meaning meaning = no_meaning;
  std::string message; // data.message, else the JSON-RPC message
};

classified classify(std::string_view error_object) {
  classified out;
  auto split = rpc::split_object(error_object);
  if (!split)
    return out;
  auto& err = *split;
  if (auto* data = err.find("data")) {
    if (auto d = rpc::split_object(*data)) {
      if (auto* m = d->find("message"))
        rpc::string_value(*m, out.message);
      double status = 0;
      if (auto* c = d->find("code"); c && rpc::number_value(*c, status))
        if (auto code = wire::status_from_json_number(status))
          out.status = static_cast<int>(*code);
    }
  }
  if (out.message.empty())
    if (auto* m = err.find("message"))
      rpc::string_value(*m, out.message);
  if (out.status)
    return out;
  double code = 0;
  if (auto* c = err.find("code"); c && rpc::number_value(*c, code))
    for (auto& m : rpc_meanings)
      if (m.rpc == code) // compared as doubles: a peer's code may be any number
        out.meaning = m;
  return out;
}

} // namespace

call_error rpc_error(int rpc_code, std::string_view message) {
  auto meaning = no_meaning;
  for (auto& m : rpc_meanings)
    if (m.rpc == rpc_code)
      meaning = m;
  return call_error{static_cast<std::int32_t>(meaning.status), meaning.http, std::string{message},
                    rpc::error_object(rpc_code, message)};
}

call_error error_of(std::string error_object) {
  auto c = classify(error_object);
  call_error out;
  out.status = c.status ? *c.status : static_cast<std::int32_t>(c.meaning.status);
  out.http = c.status ? wire::http_status_for(*c.status) : c.meaning.http;
  out.message = std::move(c.message);
  out.object = std::move(error_object);
  return out;
}

std::string tools_error(const call_error& error) {
  namespace json = boost::json;
  // Reshaped, not classified (the code is error.status). Error objects come
  // from runtimes too: parsed with Boost.JSON's depth cap.
  json::error_code ec;
  auto v = json::parse(error.object, ec);
  json::object status;
  if (auto* o = ec ? nullptr : v.if_object()) {
    if (auto* d = o->if_contains("data"); d && d->is_object())
      status = d->as_object();
    else if (auto* m = o->if_contains("message"); m && m->is_string())
      status["message"] = *m;
  }
  if (!status.contains("code") || !status["code"].is_number())
    status["code"] = error.status;
  if (!status.contains("message") || !status["message"].is_string())
    status["message"] = "the call failed";
  json::object data;
  data["genkitErrorMessage"] = status["message"];
  if (auto* d = status.if_contains("details")) {
    data["genkitErrorDetails"] = *d;
    if (auto* dd = d->if_object())
      if (auto* stack = dd->if_contains("stack"))
        status["stack"] = *stack;
  }
  status["data"] = std::move(data);
  return json::serialize(status);
}

} // namespace actor_host::manager_errors
