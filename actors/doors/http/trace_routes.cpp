#include "actors/doors/http/trace_routes.hpp"

#include "actors/dispatch/call_path.hpp"
#include "actors/doors/http/trpc.hpp"
#include "actors/tracing/trace_keeper.hpp"
#include "actors/tracing/trace_stream.hpp"
#include "registry/runtime_info.hpp"
#include "traces/trace_filter.hpp"
#include "wire/jsonrpc.hpp"

#include <charconv>

namespace actor_host {

namespace rpc = wire::jsonrpc;

namespace {

constexpr const char* json_type = "application/json";
constexpr std::string_view prefix = "/api/traces";

void respond_error(const net::http_responder_ptr& res, int status, int code, std::string message) {
  res->respond(status, json_type, R"({"error":)" + rpc::error_object(code, message) + "}");
}

bool parse_count(const std::string& text, std::uint64_t& out) {
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && p == text.data() + text.size() && !text.empty();
}

/// Asks the keeper on an actor of its own and hands the answer to `done`.
template <class Done, class... Args>
void ask_keeper(caf::actor_system& sys, const caf::actor& keeper,
                const net::http_responder_ptr& res, Done done, Args... args) {
  sys.spawn([keeper, res, done, args...](caf::event_based_actor* self) {
    self->request(keeper, internal_reply_timeout, args...)
      .then(done, [res](caf::error& err) {
        respond_error(res, 503, rpc::code::internal_error,
                      "the trace store did not answer: " + caf::to_string(err));
      });
  });
}

// The tools server's POST /api/streamTrace {traceId}: the trace and its
// span events as JSON lines, the trace id in X-Genkit-Trace-Id.
void serve_stream_trace(caf::actor_system& sys, const caf::actor& keeper, net::http_request& req,
                        const net::http_responder_ptr& res) {
  if (req.method != "POST")
    return res->respond(405, json_type, R"({"error":"POST {\"traceId\": ...} to stream a trace"})",
                        {{"Allow", "POST"}});
  std::string id;
  auto m = rpc::split_object(req.body);
  auto* t = m ? m->find("traceId") : nullptr;
  if (!t || !rpc::string_value(*t, id) || id.empty())
    return res->respond(400, json_type, R"({"error":"traceId is required"})");
  if (!registry::valid_trace_id(id))
    return res->respond(400, json_type, R"({"error":"traceId must be 1-128 of [A-Za-z0-9._-]"})");
  if (!keeper)
    return res->respond(500, json_type,
                        R"({"error":{"message":"Telemetry server URL not configured. Cannot stream )"
                        R"(trace updates (start the manager with --trace-store)."}})");
  start_trace_stream(sys, keeper, std::move(id), res, trace_stream_format::ndjson);
}

} // namespace

/// OTLP/HTTP JSON, as @genkit-ai/telemetry-server takes it: traces are
/// stored; logs and metrics are accepted and not kept (no store for them).
bool serve_otlp_route(caf::actor_system& sys, const caf::actor& keeper, net::http_request& req,
                      const net::http_responder_ptr& res) {
  auto& p = req.path;
  if (p != "/api/otlp" && !p.starts_with("/api/otlp/"))
    return false;
  if (!keeper) {
    respond_error(res, 404, rpc::code::method_not_found,
                  "Not found: " + p + " (no trace store: start the manager with --trace-store)");
    return true;
  }
  if (req.method != "POST") {
    res->respond(405, json_type,
                 R"({"error":)"
                   + rpc::error_object(rpc::code::invalid_request,
                                       "Invalid request: POST an OTLP/HTTP JSON export to " + p)
                   + "}",
                 {{"Allow", "POST"}});
    return true;
  }
  if (p == "/api/otlp/v1/logs" || p == "/api/otlp/v1/metrics") {
    res->respond(200, json_type, "{}");
    return true;
  }
  if (p != "/api/otlp" && p != "/api/otlp/v1/traces") {
    respond_error(res, 404, rpc::code::method_not_found,
                  "Not found: " + p + " (OTLP traces go to /api/otlp/v1/traces)");
    return true;
  }
  ask_keeper(sys, keeper, res,
             [res](std::string& error) {
               if (error.empty())
                 res->respond(200, json_type, "{}");
               else
                 respond_error(res, 400, rpc::code::invalid_params, "Invalid OTLP export: " + error);
             },
             otlp_save_atom_v, std::move(req.body));
  return true;
}

bool serve_trace_route(caf::actor_system& sys, const caf::actor& keeper, net::http_request& req,
                       const net::http_responder_ptr& res) {
  if (serve_otlp_route(sys, keeper, req, res))
    return true;
  auto& p = req.path;
  if (p == "/api/streamTrace")
    return serve_stream_trace(sys, keeper, req, res), true;
  if (!p.starts_with(prefix) || (p.size() > prefix.size() && p[prefix.size()] != '/'))
    return false;
  if (!keeper) {
    respond_error(res, 404, rpc::code::method_not_found,
                  "Not found: " + p + " (no trace store: start the manager with --trace-store)");
    return true;
  }
  if (p == prefix && req.method == "POST") {
    ask_keeper(sys, keeper, res,
               [res](std::string& error) {
                 if (error.empty())
                   res->respond(200, "text/plain", "OK");
                 else
                   respond_error(res, 400, rpc::code::invalid_params,
                                 "Invalid TraceData: " + error);
               },
               trace_save_atom_v, std::move(req.body));
    return true;
  }
  if (req.method != "GET") {
    res->respond(405, json_type,
                 R"({"error":)"
                   + rpc::error_object(rpc::code::invalid_request,
                                       "Invalid request: use GET for " + p
                                         + (p == prefix ? " (or POST a TraceData document)" : ""))
                   + "}",
                 {{"Allow", p == prefix ? "GET, POST" : "GET"}});
    return true;
  }
  if (p == prefix) {
    std::uint64_t limit = 10;
    std::uint64_t offset = 0;
    if (auto i = req.query.find("limit"); i != req.query.end())
      if (!parse_count(i->second, limit) || limit < 1 || limit > 1000) {
        respond_error(res, 400, rpc::code::invalid_params,
                      "Invalid params: limit must be a whole number from 1 to 1000");
        return true;
      }
    if (auto i = req.query.find("continuationToken"); i != req.query.end())
      if (!parse_count(i->second, offset)) {
        respond_error(res, 400, rpc::code::invalid_params,
                      "Invalid params: continuationToken must be one a listing returned");
        return true;
      }
    std::string filter;
    if (auto i = req.query.find("filter"); i != req.query.end()) {
      traces::trace_filter f;
      if (auto why = traces::trace_filter::parse(i->second, f); !why.empty()) {
        respond_error(res, 400, rpc::code::invalid_params, "Invalid params: " + why);
        return true;
      }
      filter = i->second;
    }
    ask_keeper(sys, keeper, res,
               [res](std::string& list) { res->respond(200, json_type, std::move(list)); },
               trace_list_atom_v, limit, offset, std::move(filter));
    return true;
  }
  auto id = p.substr(prefix.size() + 1);
  bool stream = id.ends_with("/stream");
  if (stream)
    id.resize(id.size() - 7);
  if (!registry::valid_trace_id(id)) {
    respond_error(res, 400, rpc::code::invalid_params,
                  "Invalid params: a trace id is 1-128 of [A-Za-z0-9._-]");
    return true;
  }
  if (stream) {
    start_trace_stream(sys, keeper, id, res, trace_stream_format::sse);
    return true;
  }
  ask_keeper(sys, keeper, res,
             [res, id](bool found, std::string& trace) {
               if (found)
                 res->respond(200, json_type, std::move(trace));
               else
                 respond_error(res, 404, rpc::code::invalid_params, "Trace " + id + " not found");
             },
             trace_get_atom_v, id);
  return true;
}

void serve_trace_procedure(caf::actor_system& sys, const caf::actor& keeper,
                           const std::string& procedure,
                           const std::map<std::string, std::string>& input,
                           const net::http_responder_ptr& res) {
  auto bad = [&](std::string message) {
    res->respond(400, json_type, trpc::bad_request(message, procedure));
  };
  auto arg = [&](const char* k) {
    auto i = input.find(k);
    return i == input.end() ? std::string{} : i->second;
  };
  auto failed = [res, procedure](caf::error& err) {
    res->respond(500, json_type,
                 trpc::error("the trace store did not answer: " + caf::to_string(err), 500,
                             procedure));
  };
  if (procedure == "listTraces") {
    std::uint64_t limit = 10;
    std::uint64_t offset = 0;
    if (auto l = arg("limit"); !l.empty() && (!parse_count(l, limit) || limit < 1 || limit > 1000))
      return bad("limit must be a whole number from 1 to 1000");
    if (auto t = arg("continuationToken"); !t.empty() && !parse_count(t, offset))
      return bad("continuationToken must be one a listing returned");
    auto filter = arg("filter");
    if (traces::trace_filter f; !filter.empty())
      if (auto why = traces::trace_filter::parse(filter, f); !why.empty())
        return bad(why);
    if (!keeper)
      return res->respond(200, json_type, trpc::result(R"({"traces":[]})"));
    sys.spawn([keeper, res, limit, offset, filter, failed](caf::event_based_actor* self) {
      self->request(keeper, internal_reply_timeout, trace_list_atom_v, limit, offset, filter)
        .then([res](std::string& list) { res->respond(200, json_type, trpc::result(list)); },
              failed);
    });
    return;
  }
  auto id = arg("traceId");
  if (!registry::valid_trace_id(id))
    return bad("traceId must be 1-128 of [A-Za-z0-9._-]");
  auto not_found = [res, procedure, id] {
    res->respond(404, json_type, trpc::error("Trace " + id + " not found", 404, procedure));
  };
  if (!keeper)
    return not_found();
  sys.spawn([keeper, res, id, failed, not_found](caf::event_based_actor* self) {
    self->request(keeper, internal_reply_timeout, trace_get_atom_v, id)
      .then(
        [res, not_found](bool found, std::string& trace) {
          if (found)
            res->respond(200, json_type, trpc::result(trace));
          else
            not_found();
        },
        failed);
  });
}

} // namespace actor_host
