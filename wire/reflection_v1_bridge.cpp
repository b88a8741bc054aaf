#include "wire/reflection_v1_bridge.hpp"

#include "wire/jsonrpc.hpp"
#include "wire/status_error.hpp"
#include "wire/url.hpp"

namespace actor_host::wire::v1 {

namespace rpc = jsonrpc;
using wire::status_code;

namespace {

// A runtime's plain-text error goes into a message a caller reads: bounded.
constexpr std::size_t max_quoted_text = 1024;

std::string clipped(std::string_view text) {
  if (text.size() <= max_quoted_text)
    return std::string{text};
  return std::string{text.substr(0, max_quoted_text)} + "...";
}

bool read_flag(const rpc::object_members& m, std::string_view name) {
  bool b = false;
  auto* raw = m.find(name);
  return raw && rpc::is_bool(*raw, b) && b;
}

std::string error_frame(std::string_view id, const std::string& error_object) {
  return rpc::error_response(id, error_object);
}

status_code code_for_http(int status) {
  switch (status) {
  case 400: return status_code::invalid_argument;
  case 401: return status_code::unauthenticated;
  case 403: return status_code::permission_denied;
  case 404: return status_code::not_found;
  case 429: return status_code::resource_exhausted;
  case 501: return status_code::unimplemented;
  case 503: return status_code::unavailable;
  case 504: return status_code::deadline_exceeded;
  default: return status_code::internal;
  }
}

// A Status the runtime sent ({code, message, ...}), checked before it is
// relayed: an object with a numeric code and a string message.
bool read_status(std::string_view raw, std::string& message) {
  auto m = rpc::split_object(raw);
  if (!m || !rpc::validate(raw))
    return false;
  auto* code = m->find("code");
  auto* msg = m->find("message");
  double n = 0;
  return code && rpc::number_value(*code, n) && msg && rpc::string_value(*msg, message);
}

// The runtime's text of a refused request: the `error`/`message` of a JSON
// body, else the body itself.
std::string refusal_text(std::string_view body) {
  std::string text;
  if (auto m = rpc::split_object(body))
    for (auto name : {"error", "message"})
      if (auto* v = m->find(name); v && rpc::string_value(*v, text))
        return clipped(text);
  return clipped(body);
}

// The Status in an `{"error": Status}` body (the Genkit tools server's
// envelope, and a manager's HTTP door when a V1 runtime file names one):
// its raw text, empty when the body has none.
std::string enveloped_status(std::string_view body, std::string& message) {
  auto m = rpc::split_object(body);
  if (!m)
    return {};
  auto* err = m->find("error");
  if (err == nullptr || !read_status(*err, message))
    return {};
  return *err;
}

// An HTTP status other than 200: the V2 error a V2 runtime gives for it.
std::string http_error(const http_plan& plan, std::string_view id, int status,
                       std::string_view body) {
  std::string message;
  if (read_status(body, message)) // Go's envelope: a bare Status
    return error_frame(id, rpc::error_object(rpc::code::server_error, message, body));
  // Relayed as the Status it is, code and all: quoted whole as a message
  // instead, an error that comes back through managers doubled its escapes
  // at every hop.
  if (auto status_raw = enveloped_status(body, message); !status_raw.empty())
    return error_frame(id, rpc::error_object(rpc::code::server_error, message, status_raw));
  if (status == 404 && plan.what == http_plan::kind::cancel)
    return error_frame(id, rpc::error_object(rpc::code::invalid_params,
                                             "Action not found or already completed"));
  if (status == 400 || (status == 404 && plan.what == http_plan::kind::run))
    // As a V2 runtime refuses an unknown key or a bad argument.
    return error_frame(id, rpc::error_object(rpc::code::invalid_params, refusal_text(body)));
  auto text = "the runtime answered HTTP " + std::to_string(status)
              + (body.empty() ? std::string{} : ": " + refusal_text(body));
  return error_frame(id, wire::status_error(code_for_http(status), text));
}

std::string bad_answer(std::string_view id, std::string_view what) {
  return error_frame(id, wire::status_error(status_code::internal,
                                                "the runtime's answer is not valid: "
                                                  + std::string{what}));
}

// The final record of a run: {"result", "telemetry"} or {"error": Status}.
std::string run_answer(std::string_view id, std::string& record, std::string_view header_trace) {
  auto m = rpc::split_object(record);
  if (!m)
    return bad_answer(id, "runAction: " + m.error());
  if (std::string why; !rpc::validate(record, &why))
    return bad_answer(id, "runAction: " + why);
  if (auto* err = m->find("error")) {
    std::string message;
    if (!read_status(*err, message))
      return bad_answer(id, "runAction: error is not a Status");
    return error_frame(id, rpc::error_object(rpc::code::server_error, message, *err));
  }
  if (m->find("telemetry") || header_trace.empty())
    return rpc::result_response(id, record);
  // Old runtimes leave telemetry out: the head's trace id fills it in.
  std::string out = "{";
  for (auto& [k, v] : m->members)
    if (k == "result")
      out += R"("result":)" + v + ',';
  out += R"("telemetry":{"traceId":)" + rpc::quote(header_trace) + "}}";
  return rpc::result_response(id, out);
}

std::string wrapped(std::string_view id, std::string_view member, std::string& body) {
  if (auto m = rpc::split_object(body); !m)
    return bad_answer(id, std::string{member} + ": " + m.error());
  if (std::string why; !rpc::validate(body, &why))
    return bad_answer(id, std::string{member} + ": " + why);
  return rpc::result_response(id, "{" + rpc::quote(member) + ":" + body + "}");
}

} // namespace

http_plan plan_request(std::string_view method, std::string params) {
  http_plan p;
  rpc::object_members m; // none when there are no params
  if (!params.empty()) {
    auto split = rpc::split_object(params);
    if (!split) {
      p.refusal = rpc::error_object(rpc::code::invalid_params, "Invalid params: " + split.error());
      return p;
    }
    m = std::move(*split);
  }
  // A manager's HTTP door counts the calls that came back through it in
  // every request's params (runs and listings alike); the link sends it on.
  double hops = 0;
  if (auto* h = m.find("actorHostHops"); h && rpc::number_value(*h, hops) && hops >= 0
                                            && hops <= 1000)
    p.hops = static_cast<std::uint32_t>(hops);
  if (method == "runAction") {
    if (read_flag(m, "streamInput")) {
      p.refusal = wire::status_error(
        status_code::unimplemented,
        "bidi input needs a Reflection V2 runtime; this runtime speaks V1 (HTTP)");
      return p;
    }
    p.what = http_plan::kind::run;
    p.post = true;
    p.stream = read_flag(m, "stream");
    p.target = p.stream ? "/api/runAction?stream=true" : "/api/runAction";
    // The params go on as the body: V1 runtimes read key, input, context,
    // telemetryLabels and ignore the rest, as V2 runtimes do.
    p.body = params.empty() ? "{}" : std::move(params);
  } else if (method == "listActions") {
    p.what = http_plan::kind::list_actions;
    p.target = "/api/actions";
  } else if (method == "listValues") {
    std::string type;
    auto* t = m.find("type");
    if (!t || !rpc::string_value(*t, type)) {
      p.refusal = rpc::error_object(rpc::code::invalid_params, R"(Invalid params: "type" must be a string)");
      return p;
    }
    p.what = http_plan::kind::list_values;
    p.target = with_query("/api/values", "type", type);
  } else if (method == "cancelAction") {
    std::string trace;
    auto* t = m.find("traceId");
    if (!t || !rpc::string_value(*t, trace)) {
      p.refusal = rpc::error_object(rpc::code::invalid_params, "traceId is required");
      return p;
    }
    p.what = http_plan::kind::cancel;
    p.post = true;
    p.target = "/api/cancelAction";
    p.body = R"({"traceId":)" + rpc::quote(trace) + "}";
  }
  return p;
}

std::string run_state_frame(std::string_view request_id, std::string_view trace_id) {
  return rpc::notification("runActionState", R"({"requestId":)" + std::string{request_id}
                                                + R"(,"state":{"traceId":)"
                                                + rpc::quote(trace_id) + "}}");
}

std::string chunk_frame(std::string_view request_id, std::string_view line) {
  if (line.empty() || !rpc::validate(line))
    return {};
  return rpc::notification("streamChunk", R"({"requestId":)" + std::string{request_id}
                                             + R"(,"chunk":)" + std::string{line} + "}");
}

std::string answer_frame(const http_plan& plan, std::string_view request_id, int status,
                         std::string body, std::string_view header_trace) {
  using kind = http_plan::kind;
  if (plan.what == kind::list_values && status == 404)
    return rpc::result_response(request_id, R"({"values":{}})"); // as Genkit's manager
  if (status != 200)
    return http_error(plan, request_id, status, body);
  switch (plan.what) {
  case kind::run: return run_answer(request_id, body, header_trace);
  case kind::list_actions: return wrapped(request_id, "actions", body);
  case kind::list_values: return wrapped(request_id, "values", body);
  case kind::cancel: {
    std::string why;
    if (!rpc::validate(body, &why))
      return bad_answer(request_id, "cancelAction: " + why);
    return rpc::result_response(request_id, body);
  }
  case kind::none: break;
  }
  return bad_answer(request_id, "no request was made");
}

std::string failure_frame(std::string_view request_id, std::string_view runtime_id,
                          std::string_view why) {
  return error_frame(request_id,
                     wire::status_error(status_code::unavailable,
                                            "Runtime " + std::string{runtime_id}
                                              + " (Reflection V1) did not answer: "
                                              + std::string{why}));
}

} // namespace actor_host::wire::v1
