#include "actors/doors/http/http_caller.hpp"

#include "actors/doors/http/trpc.hpp"
#include "wire/jsonrpc.hpp"


#include <boost/json.hpp>


namespace actor_host {

namespace rpc = wire::jsonrpc;

namespace {

using self_ptr = caller_actor::stateful_pointer<http_caller_state>;

constexpr const char* json_type = "application/json";
constexpr const char* ndjson_type = "application/x-ndjson";
constexpr std::uint64_t the_call = 1;

/// RuntimeInfo as the tools server lists it: with `projectName`, the base
/// name of the project root.
std::string tools_runtimes(const std::string& list, bool newest_only,
                           const std::string& project_name) {
  boost::json::error_code ec;
  auto v = boost::json::parse(list, ec);
  auto* a = ec ? nullptr : v.if_array();
  if (!a)
    return newest_only ? "{}" : "[]";
  for (auto& r : *a)
    if (auto* o = r.if_object())
      (*o)["projectName"] = project_name;
  // Genkit's getMostRecentRuntime: the newest registration.
  if (newest_only)
    return a->empty() ? std::string{"{}"} : boost::json::serialize(a->back());
  return boost::json::serialize(*a);
}

void respond_json(self_ptr self, int status, std::string body, net::http_headers extra = {}) {
  auto& st = self->state;
  if (!st.args.trpc.empty() && status < 300)
    body = trpc::result(std::move(body));
  st.args.res->respond(status, json_type, std::move(body), std::move(extra));
  self->quit();
}

/// `{"error": ...}` in the shape of the route (tools server or JSON-RPC).
std::string error_body(bool tools_shape, const call_error& error) {
  return R"({"error":)" + (tools_shape ? manager_errors::tools_error(error) : error.object)
         + "}";
}

std::string error_body(self_ptr self, const call_error& error) {
  return error_body(self->state.args.tools_shape, error);
}

void respond_error(self_ptr self, const call_error& error) {
  auto& st = self->state;
  respond_call_error(*st.args.res, error, st.args.trpc, st.args.tools_shape);
  self->quit();
}

void respond_error(self_ptr self, int code, const std::string& message) {
  respond_error(self, manager_errors::rpc_error(code, message));
}

// The body of a POST as an object; answers the error itself when it is not.
bool body_object(self_ptr self, rpc::object_members& out) {
  auto& body = self->state.args.req.body;
  std::string why;
  if (body.empty()) {
    respond_error(self, rpc::code::invalid_request, "Invalid request: a JSON object body is required");
    return false;
  }
  if (!rpc::validate(body, &why)) {
    respond_error(self, rpc::code::parse_error, "Parse error: " + why);
    return false;
  }
  auto split = rpc::split_object(body);
  if (!split) {
    respond_error(self, rpc::code::invalid_params, "Invalid params: the body must be a JSON object");
    return false;
  }
  out = std::move(*split);
  return true;
}

bool string_member(self_ptr self, const rpc::object_members& o, const char* key, bool required,
                   std::string& out) {
  auto* raw = o.find(key);
  if ((!raw || *raw == "null") && !required)
    return true;
  if (raw && rpc::string_value(*raw, out) && !out.empty())
    return true;
  respond_error(self, rpc::code::invalid_params,
                std::string{"Invalid params: '"} + key + "' must be a non-empty string");
  return false;
}

std::string query(self_ptr self, const char* key) {
  auto& q = self->state.args.req.query;
  auto i = q.find(key);
  return i == q.end() ? std::string{} : i->second;
}

// A member of a result object, e.g. "actions" of {"actions":{...}}.
bool unwrap(const std::string& result, const char* key, std::string& out) {
  auto o = rpc::split_object(result);
  if (!o)
    return false;
  if (auto* v = o->find(key)) {
    out = *v;
    return true;
  }
  return false;
}

std::string trace_from_result(const std::string& result) {
  std::string telemetry, trace_raw, trace;
  if (unwrap(result, "telemetry", telemetry) && unwrap(telemetry, "traceId", trace_raw))
    rpc::string_value(trace_raw, trace);
  return trace;
}

/// A bidi run takes input by its trace id (POST /api/streamAction/input)
/// once both its call and its trace id are known: registered with the
/// directory when the second of the two arrives (each arrives once).
bool bidi_open(const http_caller_state& st) {
  return st.bidi && st.pending && !st.trace_id.empty();
}

void maybe_register_bidi(self_ptr self) {
  auto& st = self->state;
  if (bidi_open(st))
    self->send(st.args.door.directory, bidi_open_atom_v, st.trace_id, st.pending);
}

void send_head(net::http_responder& res, const std::string& trace_id) {
  net::http_headers h;
  if (!trace_id.empty())
    h.emplace_back("X-Genkit-Trace-Id", trace_id);
  res.start_stream(200, ndjson_type, std::move(h));
}

/// A streamAction's NDJSON body: the 200 head goes with the trace id or the
/// first chunk, whichever comes first, then a line per chunk. The runtime's
/// connection writes here directly (stream_sink.hpp).
class ndjson_sink : public stream_sink {
public:
  explicit ndjson_sink(net::http_responder_ptr res) : res_(std::move(res)) {
  }

protected:
  void write_trace(const std::string& id, bool first) override {
    if (first)
      send_head(*res_, id);
  }

  void write_chunk(std::string chunk, bool first) override {
    if (first)
      send_head(*res_, {});
    chunk += '\n';
    res_->write(std::move(chunk));
  }

private:
  net::http_responder_ptr res_;
};

void on_done(self_ptr self, call_end& end) {
  auto& st = self->state;
  st.pending.demonitor(self);
  if (bidi_open(st))
    self->send(st.args.door.directory, bidi_close_atom_v, st.trace_id);
  if (st.trace_id.empty() && end.ok)
    st.trace_id = trace_from_result(end.result);
  auto& res = st.args.res;
  switch (st.args.route) {
    case http_route::describe: {
      if (!end.ok)
        return respond_error(self, end.error);
      std::string out;
      if (auto err = describe_from_listing(end.result, st.described, query(self, "runtimeId"), out))
        return respond_error(self, *err);
      return respond_json(self, 200, std::move(out));
    }
    case http_route::actions:
    case http_route::values: {
      if (!end.ok)
        return respond_error(self, end.error);
      std::string inner;
      if (!unwrap(end.result, st.args.route == http_route::actions ? "actions" : "values", inner))
        return respond_error(self, manager_errors::internal(
                                     "the runtime answered without the expected result member"));
      return respond_json(self, 200, std::move(inner));
    }
    case http_route::stream_action: {
      // Nothing is written behind the last line.
      const bool head_out = st.sink->close();
      if (!end.ok && !head_out) {
        res->respond(end.error.http, ndjson_type, error_body(self, end.error) + "\n");
        return self->quit();
      }
      if (!head_out)
        send_head(*res, st.trace_id);
      res->write(end.ok ? end.result + "\n" : error_body(self, end.error) + "\n");
      res->finish();
      return self->quit();
    }
    default:
      respond_end(*res, end, std::move(st.trace_id), st.args.trpc, st.args.tools_shape);
      return self->quit();
  }
}

void on_accepted(self_ptr self, call_handle& pending) {
  self->state.pending = pending;
  pending.monitor(self);
  maybe_register_bidi(self);
}

void begin(self_ptr self, call_request req) {
  // Every call the door makes (runs, listings, cancels): a listing that
  // comes back through a manager loops as well as a run does.
  if (auto error = count_hop(self->state.args.req.header("x-actor-host-hops"), req))
    return respond_error(self, *error);
  req.tag = the_call;
  start_call(
    self, self->state.args.door, std::move(req), self,
    [self](call_handle pending) { on_accepted(self, pending); },
    [self](call_end end) { on_done(self, end); });
}

void start_run(self_ptr self, bool stream) {
  auto& st = self->state;
  call_request req;
  auto error = parse_run_action(std::move(st.args.req.body), st.args.door.policy,
                                {stream, st.bidi}, req);
  if (error)
    return respond_error(self, *error);
  // A bidi run's head waits for its registration (above): its events come
  // through this actor, not straight from the connection.
  if (!st.bidi)
    req.sink = st.sink;
  begin(self, std::move(req));
}

void bidi_input(self_ptr self, bool end) {
  rpc::object_members body;
  std::string trace;
  if (!body_object(self, body) || !string_member(self, body, "traceId", true, trace))
    return;
  std::string chunk;
  if (!end) {
    auto* raw = body.find("chunk");
    if (!raw)
      return respond_error(self, rpc::code::invalid_params, "Invalid params: 'chunk' is missing");
    chunk = *raw;
  }
  self->request(self->state.args.door.directory, internal_reply_timeout, bidi_find_atom_v, trace)
    .then(
      [self, end, chunk = std::move(chunk)](bool found, call_handle& pending) mutable {
        auto& res = self->state.args.res;
        if (!found) {
          res->respond(404, "text/plain", "Stream not found");
          return self->quit();
        }
        if (end)
          pending.send_end_input(self);
        else
          pending.send_input(self, std::move(chunk));
        res->respond(200, "text/plain", "OK");
        self->quit();
      },
      [self](caf::error& err) {
        respond_error(self, manager_errors::internal("finding the bidi run failed: "
                                                     + to_string(err)));
      });
}

void start(self_ptr self) {
  auto& st = self->state;
  auto& policy = st.args.door.policy;
  switch (st.args.route) {
    case http_route::runtimes:
      self->request(st.args.door.directory, internal_reply_timeout, list_atom_v)
        .then(
          [self](std::string& list) {
            respond_json(self, 200,
                         self->state.args.trpc.empty() ? std::move(list)
                                                       : tools_runtimes(list, false, self->state.args.door.project_name));
          },
              [self](caf::error& err) {
                respond_error(self,
                              manager_errors::internal("listing runtimes failed: " + to_string(err)));
              });
      return;
    case http_route::services:
      self->request(st.args.door.directory, internal_reply_timeout, services_atom_v)
        .then([self](std::string& list) { respond_json(self, 200, std::move(list)); },
              [self](caf::error& err) {
                respond_error(self,
                              manager_errors::internal("listing services failed: " + to_string(err)));
              });
      return;
    case http_route::current_runtime:
      self->request(st.args.door.directory, internal_reply_timeout, list_atom_v)
        .then(
          [self](std::string& list) { respond_json(self, 200, tools_runtimes(list, true, self->state.args.door.project_name));
          },
          [self](caf::error& err) {
            respond_error(self,
                          manager_errors::internal("listing runtimes failed: " + to_string(err)));
          });
      return;
    case http_route::actions:
      return begin(self, list_actions_call(query(self, "runtimeId"), policy));
    case http_route::describe:
      if (auto err = parse_describe_symbol(query(self, "symbol"), st.described))
        return respond_error(self, *err);
      return begin(self, describe_call(st.described, query(self, "runtimeId"), policy));
    case http_route::values: {
      auto type = query(self, "type");
      if (type.empty())
        return respond_error(self, rpc::code::invalid_params,
                             "Invalid params: query parameter 'type' is required "
                             "(defaultModel or middleware)");
      return begin(self, list_values_call(query(self, "runtimeId"), type, policy));
    }
    case http_route::run_action:
      return start_run(self, false);
    case http_route::stream_action:
      return start_run(self, true);
    case http_route::cancel_action: {
      rpc::object_members body;
      std::string trace, runtime_id;
      if (!body_object(self, body) || !string_member(self, body, "traceId", true, trace)
          || !string_member(self, body, "runtimeId", false, runtime_id))
        return;
      return begin(self, cancel_action_call(std::move(runtime_id), trace, policy));
    }
    case http_route::send_bidi_input:
      return bidi_input(self, false);
    case http_route::end_bidi_input:
      return bidi_input(self, true);
    case http_route::readiness:
      self->request(st.args.supervisor, internal_reply_timeout, readiness_atom_v)
        .then(
          [self](const std::string& not_ready_reason) { // "" = ready
            auto& res = self->state.args.res;
            if (not_ready_reason.empty())
              res->respond(200, "text/plain", "ready\n");
            else
              res->respond(503, "text/plain", "not ready: " + not_ready_reason + "\n");
            self->quit();
          },
          [self](caf::error&) {
            // A supervisor that does not answer is no ready manager.
            self->state.args.res->respond(503, "text/plain", "not ready: shutting down\n");
            self->quit();
          });
      return;
  }
}

// The caller's behaviors. Every route but streamAction answers once, at the
// end; streamAction writes its events through its sink (the 200 head with
// the trace id or the first chunk, then a line per chunk) and the last line.

caller_actor::behavior_type answering(self_ptr self) {
  return {
    [self](trace_atom, std::uint64_t, std::string& trace) {
      self->state.trace_id = std::move(trace);
    },
    [](chunk_atom, std::uint64_t, const std::string&) {},
    [self](done_atom, std::uint64_t, call_end& end) { on_done(self, end); },
  };
}

// The events that come as messages (a run on another node, or one whose
// connection has no route for them) go through the same sink as those the
// connection writes itself; the sink writes the first trace id once.
caller_actor::behavior_type streaming(self_ptr self) {
  return {
    [self](trace_atom, std::uint64_t, std::string& trace) {
      auto& st = self->state;
      st.trace_id = std::move(trace);
      // A bidi run takes input by its trace id: registered before the head
      // that tells the client the id.
      maybe_register_bidi(self);
      st.sink->trace(st.trace_id);
    },
    [self](chunk_atom, std::uint64_t, std::string& chunk) {
      self->state.sink->chunk(std::move(chunk));
    },
    [self](done_atom, std::uint64_t, call_end& end) { on_done(self, end); },
  };
}

} // namespace

void respond_call_error(net::http_responder& res, const call_error& error,
                        const std::string& trpc, bool tools_shape) {
  // RESOURCE_EXHAUSTED (a full service queue, a caller over its cap): worth
  // a retry soon, as HTTP clients and proxies read it.
  net::http_headers extra;
  if (error.http == 429)
    extra.emplace_back("Retry-After", "1");
  if (!trpc.empty())
    return res.respond(error.http, json_type, trpc::error(error, trpc), std::move(extra));
  res.respond(error.http, json_type, error_body(tools_shape, error), std::move(extra));
}

void respond_end(net::http_responder& res, call_end& end, std::string trace_id,
                 const std::string& trpc, bool tools_shape) {
  if (!end.ok)
    return respond_call_error(res, end.error, trpc, tools_shape);
  if (trace_id.empty())
    trace_id = trace_from_result(end.result);
  net::http_headers h;
  if (!trace_id.empty())
    h.emplace_back("X-Genkit-Trace-Id", std::move(trace_id));
  auto body = trpc.empty() ? std::move(end.result) : trpc::result(std::move(end.result));
  res.respond(200, json_type, std::move(body), std::move(h));
}

// Calls that came back through a manager this many times are refused
// (count_hop).
constexpr std::uint32_t max_call_hops = 8;

std::optional<call_error> count_hop(const std::string* header, call_request& req) {
  double n = 0;
  if (!header || header->empty() || header->size() > 4 || !rpc::number_value(*header, n)
      || n < 1 || n != static_cast<double>(static_cast<std::uint32_t>(n)))
    return header ? std::optional{manager_errors::rpc_error(
                      rpc::code::invalid_request,
                      "Invalid request: X-Actor-Host-Hops must be a count from 1")}
                  : std::nullopt;
  auto hops = static_cast<std::uint32_t>(n);
  if (hops >= max_call_hops)
    return manager_errors::make_error(
      wire::status_code::failed_precondition,
      "this call came back through a manager " + std::to_string(hops)
        + " times: a runtime's URL leads back to a manager (a call loop); fix the runtime "
          "file or the proxy in front of it");
  boost::json::parse_options deep;
  deep.max_depth = wire::jsonrpc::max_json_depth;
  boost::system::error_code ec;
  auto params = boost::json::parse(req.params.empty() ? std::string_view{"{}"}
                                                      : std::string_view{req.params},
                                   ec, {}, deep);
  if (ec || !params.is_object())
    return manager_errors::invalid_params(ec.message());
  params.as_object()["actorHostHops"] = hops;
  req.params = boost::json::serialize(params);
  return {};
}

caller_actor::behavior_type http_caller(self_ptr self, http_caller_args args) {
  auto& st = self->state;
  st.args = std::move(args);
  auto& q = st.args.req.query;
  st.bidi = st.args.route == http_route::stream_action && q.count("bidi") && q["bidi"] != "false";
  if (st.args.route == http_route::stream_action) {
    st.sink = std::make_shared<ndjson_sink>(st.args.res);
    // However this caller ends, the connection writes nothing more for it.
    self->attach_functor([sink = st.sink] { sink->close(); });
  }
  // The client hanging up ends this actor; the pending request monitors it
  // and cancels the run.
  st.args.res->on_abort([hdl = caf::actor_cast<caf::actor>(self)] {
    caf::anon_send_exit(hdl, caf::exit_reason::user_shutdown);
  });
  self->set_down_handler([self](caf::down_msg& dm) {
    auto& st = self->state;
    if (!st.pending || dm.source != st.pending.actor.address())
      return;
    // As the call's end, to the behavior this caller is in.
    self->send(self, done_atom_v, std::uint64_t{0},
               failed(dm.reason == caf::exit_reason::user_shutdown
                        ? manager_errors::shutting_down()
                        : manager_errors::internal("the request ended unexpectedly")));
  });
  start(self);
  return st.args.route == http_route::stream_action ? streaming(self) : answering(self);
}

} // namespace actor_host
