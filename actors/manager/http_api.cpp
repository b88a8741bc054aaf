#include "actors/manager/http_api.hpp"

#include "actors/common/live_counts.hpp"
#include "actors/common/messages.hpp"
#include "actors/manager/call_client.hpp"
#include "actors/manager/errors.hpp"
#include "net/jsonrpc.hpp"

#include "obs/metrics.hpp"

#include <spdlog/spdlog.h>

#include <mutex>
#include <unordered_map>

namespace actor_host {

namespace rpc = net::jsonrpc;

namespace {

constexpr const char* json_type = "application/json";
constexpr const char* ndjson_type = "application/x-ndjson";

enum class route {
  runtimes,
  actions,
  values,
  run_action,
  stream_action,
  cancel_action,
  send_bidi_input,
  end_bidi_input,
};

// Calls in flight per peer address. A plain HTTP caller is its address, not
// its connection: a client can open any number of connections, and one
// connection carries one request at a time anyway.
class caller_slots {
public:
  explicit caller_slots(std::size_t cap) : cap_(cap) {
  }

  /// Takes a slot for `peer` ("ip:port"), or returns false at the cap.
  bool acquire(const std::string& address) {
    std::lock_guard<std::mutex> g{mtx_};
    auto& e = in_flight_[address];
    if (cap_ > 0 && e.calls >= cap_) {
      if (!e.warned) {
        e.warned = true;
        spdlog::warn("HTTP caller {} has {} calls in flight (max_calls_per_caller); refusing "
                     "more with 429 until some finish",
                     address, e.calls);
      }
      return false;
    }
    e.warned = false;
    ++e.calls;
    return true;
  }

  void release(const std::string& address) {
    std::lock_guard<std::mutex> g{mtx_};
    auto i = in_flight_.find(address);
    if (i != in_flight_.end() && --i->second.calls == 0)
      in_flight_.erase(i);
  }

  std::size_t cap() const {
    return cap_;
  }

private:
  struct entry {
    std::size_t calls = 0;
    bool warned = false; // once per stretch at the cap
  };
  const std::size_t cap_;
  std::mutex mtx_;
  std::unordered_map<std::string, entry> in_flight_;
};

std::string address_of(const std::string& peer) {
  auto colon = peer.rfind(':');
  return colon == std::string::npos ? peer : peer.substr(0, colon);
}

// Held by an http_call for its lifetime, whichever way it ends.
struct caller_slot {
  std::shared_ptr<caller_slots> slots;
  std::string address;
  caller_slot() = default;
  caller_slot(const caller_slot&) = delete;
  caller_slot& operator=(const caller_slot&) = delete;
  ~caller_slot() {
    if (slots)
      slots->release(address);
  }
};

struct http_call_state {
  live_count live{actor_kind::caller_session};
  caller_slot slot;
  net::http_request req;
  net::http_responder_ptr res;
  caf::actor directory;
  call_policy policy;
  route kind = route::runtimes;
  bool bidi = false;
  caf::actor pending;
  std::string trace_id;
  bool head_sent = false;
  bool bidi_registered = false;
  static inline const char* name = "http_call";
};

using self_ptr = caf::stateful_actor<http_call_state>*;
constexpr std::uint64_t the_call = 1;

void respond_json(self_ptr self, int status, std::string body, net::http_headers extra = {}) {
  self->state.res->respond(status, json_type, std::move(body), std::move(extra));
  self->quit();
}

void respond_error(self_ptr self, const std::string& error_object) {
  respond_json(self, manager_errors::http_status(error_object),
               R"({"error":)" + error_object + "}");
}

void respond_error(self_ptr self, int code, const std::string& message) {
  respond_error(self, rpc::error_object(code, message));
}

// The body of a POST as an object; answers the error itself when it is not.
bool body_object(self_ptr self, rpc::object_members& out) {
  auto& body = self->state.req.body;
  std::string why;
  if (body.empty()) {
    respond_error(self, rpc::code::invalid_request, "Invalid request: a JSON object body is required");
    return false;
  }
  if (!rpc::validate(body, &why)) {
    respond_error(self, rpc::code::parse_error, "Parse error: " + why);
    return false;
  }
  if (!rpc::split_object(body, out, why)) {
    respond_error(self, rpc::code::invalid_params, "Invalid params: the body must be a JSON object");
    return false;
  }
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
  auto& q = self->state.req.query;
  auto i = q.find(key);
  return i == q.end() ? std::string{} : i->second;
}

// A member of a result object, e.g. "actions" of {"actions":{...}}.
bool unwrap(const std::string& result, const char* key, std::string& out) {
  rpc::object_members o;
  std::string why;
  if (!rpc::split_object(result, o, why))
    return false;
  if (auto* v = o.find(key)) {
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

void start_run(self_ptr self, bool stream) {
  rpc::object_members body;
  if (!body_object(self, body))
    return;
  std::string key, runtime_id;
  if (!string_member(self, body, "key", true, key)
      || !string_member(self, body, "runtimeId", false, runtime_id))
    return;
  caf::timespan timeout;
  if (!read_timeout(body.find("timeoutMs"), self->state.policy.run_timeout, timeout))
    return respond_error(self, rpc::code::invalid_params,
                         "Invalid params: 'timeoutMs' must be a non-negative number");
  // Forward the body as Genkit's manager does ({...request, stream,
  // streamInput}), with the flags this route decides.
  std::string params = "{";
  for (auto& [k, v] : body.members) {
    if (k == "stream" || k == "streamInput")
      continue;
    params += rpc::quote(k) + ":" + v + ",";
  }
  params += stream ? R"("stream":true,)" : R"("stream":false,)";
  params += self->state.bidi ? R"("streamInput":true})" : R"("streamInput":false})";
  start_call(self, self->state.directory,
             {the_call, std::move(runtime_id), "runAction", std::move(params), timeout});
}

void start_simple(self_ptr self, std::string method, std::string params, std::string runtime_id) {
  start_call(self, self->state.directory,
             {the_call, std::move(runtime_id), std::move(method), std::move(params),
              self->state.policy.request_timeout});
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
  self->request(self->state.directory, caf::infinite, bidi_find_atom_v, trace)
    .then([self, end, chunk = std::move(chunk)](bool found, caf::actor& pending) mutable {
      if (!found) {
        self->state.res->respond(404, "text/plain", "Stream not found");
        return self->quit();
      }
      if (end)
        self->send(pending, end_input_atom_v);
      else
        self->send(pending, input_atom_v, std::move(chunk));
      self->state.res->respond(200, "text/plain", "OK");
      self->quit();
    });
}

void start(self_ptr self) {
  auto& st = self->state;
  switch (st.kind) {
    case route::runtimes:
      self->request(st.directory, caf::infinite, list_atom_v).then([self](std::string& list) {
        respond_json(self, 200, std::move(list));
      });
      return;
    case route::actions:
      return start_simple(self, "listActions", {}, query(self, "runtimeId"));
    case route::values: {
      auto type = query(self, "type");
      if (type.empty())
        return respond_error(self, rpc::code::invalid_params,
                             "Invalid params: query parameter 'type' is required "
                             "(defaultModel or middleware)");
      return start_simple(self, "listValues", R"({"type":)" + rpc::quote(type) + "}",
                          query(self, "runtimeId"));
    }
    case route::run_action:
      return start_run(self, false);
    case route::stream_action:
      return start_run(self, true);
    case route::cancel_action: {
      rpc::object_members body;
      std::string trace, runtime_id;
      if (!body_object(self, body) || !string_member(self, body, "traceId", true, trace)
          || !string_member(self, body, "runtimeId", false, runtime_id))
        return;
      return start_simple(self, "cancelAction", R"({"traceId":)" + rpc::quote(trace) + "}",
                          std::move(runtime_id));
    }
    case route::send_bidi_input:
      return bidi_input(self, false);
    case route::end_bidi_input:
      return bidi_input(self, true);
  }
}

void maybe_register_bidi(self_ptr self) {
  auto& st = self->state;
  if (st.bidi && !st.bidi_registered && st.pending && !st.trace_id.empty()) {
    st.bidi_registered = true;
    self->send(st.directory, bidi_open_atom_v, st.trace_id, st.pending);
  }
}

void send_head(self_ptr self) {
  auto& st = self->state;
  if (st.head_sent)
    return;
  st.head_sent = true;
  net::http_headers h;
  if (!st.trace_id.empty())
    h.emplace_back("X-Genkit-Trace-Id", st.trace_id);
  st.res->start_stream(200, ndjson_type, std::move(h));
}

void on_done(self_ptr self, bool ok, std::string& raw) {
  auto& st = self->state;
  if (st.bidi_registered)
    self->send(st.directory, bidi_close_atom_v, st.trace_id);
  if (st.trace_id.empty() && ok)
    st.trace_id = trace_from_result(raw);
  switch (st.kind) {
    case route::actions:
    case route::values: {
      if (!ok)
        return respond_error(self, raw);
      std::string inner;
      if (!unwrap(raw, st.kind == route::actions ? "actions" : "values", inner))
        return respond_error(self, manager_errors::internal(
                                     "the runtime answered without the expected result member"));
      return respond_json(self, 200, std::move(inner));
    }
    case route::stream_action:
      if (!ok && !st.head_sent) {
        st.res->respond(manager_errors::http_status(raw), ndjson_type,
                        R"({"error":)" + raw + "}\n");
        return self->quit();
      }
      send_head(self);
      st.res->write(ok ? raw + "\n" : R"({"error":)" + raw + "}\n");
      st.res->finish();
      return self->quit();
    default:
      if (!ok)
        return respond_error(self, raw);
      net::http_headers h;
      if (!st.trace_id.empty())
        h.emplace_back("X-Genkit-Trace-Id", st.trace_id);
      return respond_json(self, 200, std::move(raw), std::move(h));
  }
}

caf::behavior http_call(self_ptr self, net::http_request req, net::http_responder_ptr res,
                        caf::actor directory, call_policy policy, route kind,
                        std::shared_ptr<caller_slots> slots) {
  auto& st = self->state;
  st.slot.address = address_of(req.peer);
  st.slot.slots = std::move(slots);
  st.req = std::move(req);
  st.res = std::move(res);
  st.directory = std::move(directory);
  st.policy = policy;
  st.kind = kind;
  st.bidi = kind == route::stream_action && st.req.query.count("bidi")
            && st.req.query["bidi"] != "false";
  // The client hanging up ends this actor; the pending request monitors it
  // and cancels the run.
  st.res->on_abort([hdl = caf::actor{self}] {
    caf::anon_send_exit(hdl, caf::exit_reason::user_shutdown);
  });
  self->set_down_handler([self](caf::down_msg& dm) {
    auto& st = self->state;
    if (dm.source != st.pending.address())
      return;
    std::string err = dm.reason == caf::exit_reason::user_shutdown
                        ? manager_errors::shutting_down()
                        : manager_errors::internal("the request ended unexpectedly");
    on_done(self, false, err);
  });
  start(self);
  return {
    [self](accepted_atom, std::uint64_t, caf::actor& pending) {
      self->state.pending = pending;
      self->monitor(pending);
      maybe_register_bidi(self);
    },
    [self](trace_atom, std::uint64_t, std::string& trace) {
      auto& st = self->state;
      st.trace_id = std::move(trace);
      if (st.kind == route::stream_action)
        send_head(self);
      maybe_register_bidi(self);
    },
    [self](chunk_atom, std::uint64_t, const std::string& chunk) {
      auto& st = self->state;
      if (st.kind != route::stream_action)
        return;
      send_head(self);
      st.res->write(chunk + "\n");
    },
    [self](done_atom, std::uint64_t, bool ok, std::string& raw) {
      if (self->state.pending)
        self->demonitor(self->state.pending);
      on_done(self, ok, raw);
    },
  };
}

void respond_plain(const net::http_responder_ptr& res, int status, std::string body) {
  res->respond(status, "text/plain", std::move(body));
}

} // namespace

net::http_handler make_http_api(http_api_context ctx) {
  auto slots = std::make_shared<caller_slots>(ctx.policy.max_calls_per_caller);
  return [ctx = std::move(ctx), slots](net::http_request req, net::http_responder_ptr res) {
    auto& p = req.path;
    bool get = req.method == "GET";
    bool post = req.method == "POST";
    if (get && p == "/api/__health")
      return respond_plain(res, 200, "OK");
    if (get && p == "/api/__stats")
      return res->respond(200, json_type, ctx.stats_json());
    // Operator endpoints: cheap, answered on the I/O thread.
    if (get && p == "/metrics")
      return res->respond(200, "text/plain; version=0.0.4; charset=utf-8", ctx.metrics_text());
    if (get && p == "/healthz")
      return respond_plain(res, 200, "ok\n");
    if (get && p == "/readyz") {
      auto why_not = ctx.not_ready_reason();
      return why_not.empty() ? respond_plain(res, 200, "ready\n")
                             : respond_plain(res, 503, "not ready: " + why_not + "\n");
    }
    static const std::pair<const char*, std::pair<bool, route>> table[] = {
      {"/api/runtimes", {false, route::runtimes}},
      {"/api/actions", {false, route::actions}},
      {"/api/values", {false, route::values}},
      {"/api/runAction", {true, route::run_action}},
      {"/api/streamAction", {true, route::stream_action}},
      {"/api/cancelAction", {true, route::cancel_action}},
      {"/api/sendBidiInput", {true, route::send_bidi_input}},
      {"/api/endBidiInput", {true, route::end_bidi_input}},
    };
    for (auto& [path, spec] : table) {
      if (p != path)
        continue;
      auto [needs_post, kind] = spec;
      if ((needs_post && !post) || (!needs_post && !get)) {
        auto body = R"({"error":)"
                    + rpc::error_object(rpc::code::invalid_request,
                                        std::string{"Invalid request: use "}
                                          + (needs_post ? "POST" : "GET") + " for " + p)
                    + "}";
        return res->respond(405, json_type, std::move(body),
                            {{"Allow", needs_post ? "POST" : "GET"}});
      }
      // The slot is taken here, on the I/O thread, so that a flood is
      // refused before it spawns anything; the call's state gives it back.
      if (!slots->acquire(address_of(req.peer))) {
        obs::global().calls_over_cap.fetch_add(1, std::memory_order_relaxed);
        auto body = R"({"error":)" + manager_errors::too_many_calls(slots->cap(), "address") + "}";
        return res->respond(429, json_type, std::move(body), {{"Retry-After", "1"}});
      }
      ctx.system->spawn(http_call, std::move(req), res, *ctx.directory, ctx.policy, kind, slots);
      return;
    }
    auto body = R"({"error":)"
                + rpc::error_object(rpc::code::method_not_found, "Not found: " + p) + "}";
    res->respond(404, json_type, std::move(body));
  };
}

} // namespace actor_host
