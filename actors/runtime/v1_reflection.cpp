#include "actors/runtime/v1_reflection.hpp"

#include "actors/common/span_exporter.hpp"
#include "actors/runtime/active_action.hpp"
#include "actors/runtime/run_params.hpp"
#include "wire/jsonrpc.hpp"
#include "wire/secure_random.hpp"
#include "wire/status_error.hpp"

#include <spdlog/spdlog.h>

namespace actor_host {

namespace rpc = wire::jsonrpc;

namespace {

using self_ptr = caf::stateful_actor<v1_reflection_state>*;

constexpr const char* json_type = "application/json";

net::http_headers version_header() {
  return {{"X-Genkit-Version", runtime_genkit_version}};
}

/// {"error": Status} from an active_action's failure (a JSON-RPC error
/// object whose data is the Status).
std::string error_record(std::string raw) {
  std::string_view data;
  if (rpc::find_members(raw, {"data"}, &data) && !data.empty())
    return R"({"error":)" + std::string{data} + "}";
  return R"({"error":{"code":13,"message":"run failed"}})";
}

void maybe_finish_stop(self_ptr self) {
  auto& st = self->state;
  if (st.stopping && st.runs.empty()) {
    st.stopped.deliver(caf::ok_atom_v);
    self->quit();
  }
}

void on_run(self_ptr self, std::string& body, bool stream, net::http_responder_ptr& res) {
  auto& st = self->state;
  if (st.stopping)
    return res->respond(503, "text/plain", "runtime shutting down", version_header());
  run_params p;
  std::string why;
  switch (read_run_params(body, *st.catalog, p, why)) {
    case run_params_fault::none:
      break;
    case run_params_fault::unknown_action: // JS: 404, plain text
      return res->respond(404, "text/plain", why, version_header());
    case run_params_fault::invalid:
      return res->respond(400, json_type,
                          R"({"error":)"
                            + wire::status_json(wire::status_code::invalid_argument,
                                                          why)
                            + "}",
                          version_header());
  }
  if (p.stream_input)
    return res->respond(400, json_type,
                        R"({"error":)"
                          + wire::status_json(
                            wire::status_code::invalid_argument,
                            "Invalid params: bidi input (streamInput) needs Reflection V2")
                          + "}",
                        version_header());
  if (st.runs.size() >= st.max_runs)
    return res->respond(429, json_type,
                        R"({"error":)"
                          + wire::status_json(wire::status_code::resource_exhausted,
                                                  "this runtime already has "
                                                    + std::to_string(st.runs.size())
                                                    + " runs in flight (max_calls_per_caller)")
                          + "}",
                        version_header());
  auto id = "v1-" + std::to_string(st.next_run++);
  run_request req;
  req.request_id = id;
  req.catalog = st.catalog;
  req.action = p.action;
  req.input = std::move(p.input);
  req.init = std::move(p.init);
  req.context = std::move(p.context);
  req.stream = stream || p.stream;
  req.spans = st.spans;
  req.cancel = std::make_shared<actions::cancel_flag>();
  v1_reflection_state::run r;
  r.key = p.key;
  r.stream = req.stream;
  r.res = res;
  // The client leaving abandons its run: nobody would read its answer.
  res->on_abort([hub = caf::actor{self}, id] { caf::anon_send(hub, v1_gone_atom_v, id); });
  r.action = self->spawn<caf::monitored>(active_action, std::move(req), caf::actor{self},
                                         caf::actor{});
  st.runs.emplace(std::move(id), std::move(r));
}

void on_cancel(self_ptr self, std::string& body, net::http_responder_ptr& res) {
  auto& st = self->state;
  std::string trace;
  if (auto p = rpc::split_object(body))
    if (auto* t = p->find("traceId"))
      rpc::string_value(*t, trace);
  if (trace.empty())
    return res->respond(400, json_type, R"({"error":"traceId is required"})", version_header());
  auto i = st.by_trace.find(trace);
  auto r = i == st.by_trace.end() ? st.runs.end() : st.runs.find(i->second);
  if (r == st.runs.end())
    return res->respond(404, json_type, R"({"message":"Action not found or already completed"})",
                        version_header());
  self->send(r->second.action, cancel_atom_v);
  st.by_trace.erase(i);
  res->respond(200, json_type, R"({"message":"Action cancelled"})", version_header());
}

void on_done(self_ptr self, const std::string& id, bool ok, std::string& raw) {
  auto& st = self->state;
  auto r = st.runs.find(id);
  if (r == st.runs.end())
    return;
  auto& run = r->second;
  if (!run.trace_id.empty())
    st.by_trace.erase(run.trace_id);
  if (!run.res)
    return;
  auto record = ok ? std::move(raw) : error_record(std::move(raw));
  if (run.started) {
    run.res->write(std::move(record));
    run.res->finish();
  } else {
    // Failed before its trace began (its input did not pass the schema).
    run.res->respond(200, json_type, std::move(record), version_header());
  }
  run.res = nullptr;
}

} // namespace

v1_reflection_state::~v1_reflection_state() {
  for (auto& [id, r] : runs) {
    if (r.res && !r.started)
      r.res->respond(503, "text/plain", "runtime shutting down", version_header());
    else if (r.res)
      r.res->finish();
    caf::anon_send_exit(r.action, caf::exit_reason::user_shutdown);
  }
}

caf::behavior v1_reflection(caf::stateful_actor<v1_reflection_state>* self,
                            actions::catalog_ptr catalog, caf::actor spans,
                            std::size_t max_runs) {
  auto& st = self->state;
  st.max_runs = max_runs;
  st.catalog = std::move(catalog);
  st.spans = std::move(spans);
  self->set_down_handler([self](caf::down_msg& dm) {
    auto& st = self->state;
    for (auto i = st.runs.begin(); i != st.runs.end(); ++i) {
      if (i->second.action.address() != dm.source)
        continue;
      auto& r = i->second;
      if (r.res) {
        // Ended without an answer (killed): the client still gets one.
        auto why = self->system().render(dm.reason);
        spdlog::error("run of {} ({}) ended without an answer: {}", r.key, i->first, why);
        std::string record = R"({"error":)"
                             + wire::status_json(wire::status_code::internal,
                                                           "run of " + r.key
                                                             + " ended unexpectedly: " + why)
                             + "}";
        if (r.started) {
          r.res->write(std::move(record));
          r.res->finish();
        } else {
          r.res->respond(200, json_type, std::move(record), version_header());
        }
      }
      if (!r.trace_id.empty())
        st.by_trace.erase(r.trace_id);
      st.runs.erase(i);
      break;
    }
    maybe_finish_stop(self);
  });
  return {
    [self](v1_run_atom, std::string& body, bool stream, net::http_responder_ptr& res) {
      on_run(self, body, stream, res);
    },
    [self](v1_cancel_atom, std::string& body, net::http_responder_ptr& res) {
      on_cancel(self, body, res);
    },
    [self](v1_gone_atom, const std::string& id) {
      auto& st = self->state;
      if (auto r = st.runs.find(id); r != st.runs.end()) {
        r->second.res = nullptr;
        self->send(r->second.action, cancel_atom_v);
      }
    },
    [self](v1_notify_atom, std::string& url) {
      if (auto& spans = self->state.spans)
        self->send(spans, span_target_atom_v, std::move(url));
    },
    [self](action_trace_atom, const std::string& id, const std::string& trace) {
      auto& st = self->state;
      auto r = st.runs.find(id);
      if (r == st.runs.end())
        return;
      auto& run = r->second;
      run.trace_id = trace;
      st.by_trace[trace] = id;
      if (!run.res)
        return;
      // The head goes out now, so a caller can cancel by trace id while the
      // run is still going (Genkit flushes its headers at the root span).
      run.started = true;
      run.res->start_stream(200, run.stream ? "text/plain" : json_type,
                            {{"X-Genkit-Trace-Id", trace},
                             {"X-Genkit-Span-Id", root_span_id(trace)},
                             {"X-Genkit-Version", runtime_genkit_version}});
    },
    [self](action_chunk_atom, const std::string& id, std::string& chunk) {
      auto& st = self->state;
      auto r = st.runs.find(id);
      if (r != st.runs.end() && r->second.res && r->second.started && r->second.stream)
        r->second.res->write(std::move(chunk) + "\n");
    },
    [self](action_done_atom, const std::string& id, bool ok, std::string& raw) {
      on_done(self, id, ok, raw);
    },
    [self](shutdown_atom) -> caf::result<caf::ok_atom> {
      auto& st = self->state;
      st.stopping = true;
      for (auto& [id, r] : st.runs)
        self->send(r.action, cancel_atom_v);
      st.stopped = self->make_response_promise();
      auto rp = st.stopped;
      maybe_finish_stop(self);
      return rp;
    },
  };
}

} // namespace actor_host
