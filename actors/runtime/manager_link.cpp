#include "actors/runtime/manager_link.hpp"

#include "actors/common/frame_bridge.hpp"
#include "actors/common/span_exporter.hpp"
#include "actors/runtime/active_action.hpp"
#include "actors/runtime/bidi_session.hpp"
#include "actors/runtime/run_params.hpp"
#include "net/access_policy.hpp"
#include "net/liveness.hpp"
#include "wire/jsonrpc.hpp"
#include "wire/reflection_frames.hpp"
#include "wire/url.hpp"

#include <simdjson.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>

namespace actor_host {

namespace rpc = wire::jsonrpc;

manager_link_state::~manager_link_state() {
  if (transport)
    transport->close(1001, "runtime link going away");
  for (auto& [id, r] : runs)
    caf::anon_send_exit(r.action, caf::exit_reason::user_shutdown);
  for (auto& [addr, action] : displaced)
    caf::anon_send_exit(action, caf::exit_reason::user_shutdown);
}

namespace {

using self_ptr = caf::stateful_actor<manager_link_state>*;

void send(self_ptr self, std::string frame) {
  // Like the Go and JS runtimes: nothing is queued while disconnected.
  if (auto& t = self->state.transport)
    t->send_text(std::move(frame));
}

void reply_error(self_ptr self, const std::string& id, int code, const std::string& message) {
  send(self, rpc::error_response(id, rpc::error_object(code, message)));
}

caf::timespan backoff(self_ptr self) {
  auto& st = self->state;
  auto d = st.opts.backoff_base;
  for (unsigned i = 0; i < st.attempt && d < st.opts.backoff_max; ++i)
    d *= 2;
  return std::min(d, st.opts.backoff_max);
}

/// The manager in use, for logs (no token).
std::string manager_url(self_ptr self) {
  auto& st = self->state;
  return net::redact_token(st.opts.manager_urls[st.manager]);
}

/// The register answer's managerUrls (the cluster's other nodes): added to
/// the list, with the token of the manager that answered, so this runtime
/// moves to them when its node goes. Checked: ws:// or wss:// URLs only.
void learn_managers(self_ptr self, std::string_view answer) {
  auto& st = self->state;
  std::string owner{answer};
  std::string_view raw;
  if (!rpc::find_members(owner, {"managerUrls"}, &raw) || raw.empty())
    return;
  std::string token;
  if (auto current = wire::parse_url(st.opts.manager_urls[st.manager])) {
    std::string path;
    std::map<std::string, std::string> query;
    wire::split_target(current->target, path, query);
    if (auto i = query.find("token"); i != query.end())
      token = i->second;
  }
  std::vector<std::string> learned;
  simdjson::ondemand::parser parser;
  simdjson::padded_string padded(raw);
  simdjson::ondemand::document doc;
  simdjson::ondemand::array list;
  bool ok = !parser.iterate(padded).get(doc) && !doc.get_array().get(list);
  for (auto element : list) {
    if (!ok)
      break;
    std::string_view url;
    ok = !element.get_string().get(url) && url.size() <= 2048
         && learned.size() < max_manager_urls;
    auto parsed = ok ? wire::parse_url(url) : std::nullopt;
    // Printable and without a query: it reaches our log and gets our token.
    ok = parsed && (parsed->scheme == "ws" || parsed->scheme == "wss")
         && url.find_first_of("?# ") == std::string_view::npos
         && std::all_of(url.begin(), url.end(), [](char c) { return c > 0x20 && c < 0x7f; });
    if (ok)
      learned.emplace_back(url);
  }
  if (!ok) {
    spdlog::warn("manager {}: managerUrls in its register answer is not a list of at most {} "
                 "ws:// URLs without a query; ignored",
                 manager_url(self), max_manager_urls);
    return;
  }
  auto known = [&](const std::string& url) {
    return std::any_of(st.opts.manager_urls.begin(), st.opts.manager_urls.end(),
                       [&](const std::string& u) { return u.substr(0, u.find('?')) == url; });
  };
  std::string added;
  for (auto& url : learned) {
    if (known(url) || st.opts.manager_urls.size() >= max_manager_urls)
      continue;
    added += (added.empty() ? "" : ", ") + url;
    st.opts.manager_urls.push_back(token.empty() ? url : net::url_with_token(url, token));
  }
  if (!added.empty())
    spdlog::info("learned the cluster's other managers from {}: {}", manager_url(self), added);
}

/// The manager in use failed or dropped: the next one at once while some
/// have not failed in this row, else the backoff (then the next one).
void schedule_reconnect(self_ptr self) {
  auto& st = self->state;
  if (st.stopping)
    return;
  auto n = st.opts.manager_urls.size();
  st.manager = (st.manager + 1) % n;
  if (++st.failed_in_row < n) {
    spdlog::info("trying manager {} next", manager_url(self));
    self->send(self, reconnect_atom_v);
    self->become(st.waiting);
    return;
  }
  st.failed_in_row = 0;
  auto d = backoff(self);
  ++st.attempt;
  spdlog::debug("reconnecting to {} in {} ms", manager_url(self),
                std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
  self->delayed_send(self, d, reconnect_atom_v);
  self->become(st.waiting);
}

/// The next liveness probe of the link in use (link_options::liveness_interval).
void arm_liveness(self_ptr self) {
  auto& st = self->state;
  if (st.opts.liveness_interval.count() > 0)
    self->delayed_send(self, st.opts.liveness_interval, probe_atom_v, st.link_generation);
}

/// A probe is due: the last ping unanswered means a dead manager (its link
/// is dropped; closed_atom follows as for any close), else the next ping.
void probe_liveness(self_ptr self, std::uint64_t generation) {
  auto& st = self->state;
  if (generation != st.link_generation || !st.transport)
    return;
  if (st.ping_outstanding) {
    spdlog::warn("manager {} answered no ping for {} ms: leaving its link", manager_url(self),
                 std::chrono::duration_cast<std::chrono::milliseconds>(st.opts.liveness_interval)
                   .count());
    st.transport->drop();
    return;
  }
  auto* p = dynamic_cast<net::pingable*>(st.transport.get());
  if (!p)
    return;
  st.ping_outstanding = true;
  p->ping([link = caf::actor{self}, generation] {
    caf::anon_send(link, pong_atom_v, generation);
  });
  arm_liveness(self);
}

void send_register(self_ptr self) {
  auto& st = self->state;
  st.register_id = '"' + std::to_string(st.next_request_id++) + '"';
  auto params = R"({"id":)" + rpc::quote(st.opts.runtime_id) + R"(,"pid":)"
                + std::to_string(st.opts.pid) + R"(,"name":)" + rpc::quote(st.opts.name)
                + R"(,"genkitVersion":"cpp/)" ACTOR_HOST_VERSION
                  R"(","reflectionApiSpecVersion":1,"envs":["dev"]})";
  send(self, rpc::request("register", params, st.register_id));
}

void reply_run_failure(self_ptr self, const std::string& id, const std::string& key,
                       const caf::error& reason) {
  auto why = self->system().render(reason);
  spdlog::error("run of {} (request {}) ended without an answer: {}", key, id, why);
  send(self, rpc::error_response(id, run_failure(wire::status_code::internal,
                                                 "run of " + key + " ended unexpectedly: " + why,
                                                 {}, {})));
}

void maybe_finish_stop(self_ptr self) {
  auto& st = self->state;
  if (st.stopping && st.runs.empty() && st.displaced.empty()) {
    if (st.transport)
      st.transport->close(1001, "runtime stopping");
    st.transport = nullptr;
    st.stopped.deliver(caf::ok_atom_v);
    self->quit();
  }
}

// -- requests from the manager ----------------------------------------------

void on_run_action(self_ptr self, const rpc::message& m) {
  auto& st = self->state;
  run_params p;
  std::string why;
  // An unknown key: -32602 without Status data, what Genkit's own manager expects.
  if (read_run_params(m.params, *st.catalog, p, why) != run_params_fault::none)
    return reply_error(self, m.id, rpc::code::invalid_params, why);
  auto* action = p.action;
  auto key = p.key;
  bool stream_input = p.stream_input;
  run_request req;
  req.request_id = m.id;
  req.catalog = st.catalog;
  req.action = action;
  req.input = std::move(p.input);
  req.init = std::move(p.init);
  req.context = std::move(p.context);
  req.stream = p.stream;
  req.spans = st.opts.spans;
  req.cancel = std::make_shared<actions::cancel_flag>();
  manager_link_state::run r;
  r.key = key;
  if (stream_input) {
    // Registered now, before the action starts, so input that is already on
    // the wire behind this frame is kept, in order.
    req.inputs = std::make_shared<actions::input_queue>(*req.cancel);
    r.bidi = self->spawn(bidi_session, req.inputs, action->input_validator,
                         st.opts.max_bidi_input_bytes);
  }
  if (auto old = st.runs.find(m.id); old != st.runs.end()) {
    // A manager restarted its id counter: the old run's input is orphaned.
    if (old->second.bidi)
      self->send_exit(old->second.bidi, caf::exit_reason::user_shutdown);
    st.displaced.emplace(old->second.action.address(), old->second.action);
  }
  r.action = self->spawn<caf::monitored>(active_action, std::move(req), caf::actor{self}, r.bidi);
  // Before any input we route to it, so a bad chunk can always fail the run.
  if (r.bidi)
    self->send(r.bidi, r.action);
  st.runs[m.id] = std::move(r);
}

void on_cancel_action(self_ptr self, const rpc::message& m) {
  auto& st = self->state;
  std::string trace;
  if (!m.params.empty())
    if (auto p = rpc::split_object(m.params))
      if (auto* t = p->find("traceId"))
        rpc::string_value(*t, trace);
  if (trace.empty())
    return reply_error(self, m.id, rpc::code::invalid_params, "traceId is required");
  auto i = st.by_trace.find(trace);
  if (i == st.by_trace.end())
    return reply_error(self, m.id, rpc::code::invalid_params,
                       "Action not found or already completed");
  self->send(i->second, cancel_atom_v);
  st.by_trace.erase(i);
  send(self, rpc::result_response(m.id, R"({"message":"Action cancelled"})"));
}

void on_list_values(self_ptr self, const rpc::message& m) {
  std::string type;
  if (!m.params.empty())
    if (auto p = rpc::split_object(m.params))
      if (auto* t = p->find("type"))
        rpc::string_value(*t, type);
  if (type.empty())
    return reply_error(self, m.id, rpc::code::invalid_params,
                       "Invalid params: 'type' must be a string");
  if (auto values = self->state.catalog->list_values_json(type))
    return send(self, rpc::result_response(m.id, *values));
  reply_error(self, m.id, rpc::code::invalid_params,
              "'type' " + type + " is not supported. Only 'defaultModel' and 'middleware' are supported");
}

void on_input(self_ptr self, const rpc::message& m, bool end) {
  auto& st = self->state;
  auto split = rpc::split_object(m.params); // none (also for empty params): nothing to do
  if (!split)
    return;
  auto& p = *split;
  auto* rid = p.find("requestId");
  auto i = rid ? st.runs.find(*rid) : st.runs.end();
  if (i == st.runs.end() || !i->second.bidi) {
    spdlog::debug("{} for unknown request id {}", m.method, rid ? *rid : "(none)");
    return;
  }
  if (end) {
    self->send(i->second.bidi, end_input_atom_v);
  } else if (auto* chunk = p.find("chunk")) {
    self->send(i->second.bidi, input_atom_v, *chunk);
  }
}

void on_frame(self_ptr self, std::string& frame) {
  auto& st = self->state;
  rpc::message m;
  rpc::decode_error err;
  if (!rpc::decode(frame, m, err)) {
    spdlog::warn("bad frame from manager: {}", err.message);
    return reply_error(self, err.id, err.code, err.message);
  }
  if (m.kind == rpc::kind::response) {
    if (m.id != st.register_id) {
      spdlog::debug("response for unknown request id {}", m.id);
    } else if (!m.error.empty()) {
      spdlog::warn("Failed to register with manager {}: {}", manager_url(self), m.error);
    } else {
      spdlog::info("Registered with manager {} as {}", manager_url(self), st.opts.runtime_id);
      learn_managers(self, m.result);
      std::string_view url;
      std::string text;
      if (st.opts.spans && rpc::find_members(m.result, {"telemetryServerUrl"}, &url)
          && rpc::string_value(url, text))
        self->send(st.opts.spans, span_target_atom_v, std::move(text));
    }
    return;
  }
  if (m.method == "sendInputStreamChunk")
    return on_input(self, m, false);
  if (m.method == "endInputStream")
    return on_input(self, m, true);
  if (m.kind != rpc::kind::request) {
    if (m.method != "configure")
      spdlog::debug("ignoring notification {}", m.method);
    return;
  }
  if (m.method == "listActions")
    return send(self, rpc::result_response(m.id, st.catalog->list_actions_json()));
  if (m.method == "listValues")
    return on_list_values(self, m);
  if (m.method == "runAction")
    return on_run_action(self, m);
  if (m.method == "cancelAction")
    return on_cancel_action(self, m);
  reply_error(self, m.id, rpc::code::method_not_found, "Method not found: " + m.method);
}

void on_link_lost(self_ptr self, const std::string& reason) {
  auto& st = self->state;
  spdlog::warn("lost the manager link ({}): {} run(s) continue", reason, st.runs.size());
  st.transport = nullptr;
  st.register_id.clear();
  // Nobody can send the rest of an input stream now.
  for (auto& [id, r] : st.runs)
    if (r.bidi)
      self->send(r.bidi, end_input_atom_v);
  if (st.stopping)
    return maybe_finish_stop(self);
  schedule_reconnect(self);
}

} // namespace

caf::behavior manager_link(caf::stateful_actor<manager_link_state>* self, link_options opts,
                           actions::catalog_ptr catalog, link_connector connect) {
  auto& st = self->state;
  st.opts = std::move(opts);
  st.catalog = std::move(catalog);
  st.connect = std::move(connect);
  // A run ends when its actor does, whichever way; the run takes its bidi
  // session down itself.
  self->set_down_handler([self](caf::down_msg& dm) {
    auto& st = self->state;
    std::erase_if(st.by_trace, [&](auto& kv) { return kv.second.address() == dm.source; });
    st.displaced.erase(dm.source);
    for (auto i = st.runs.begin(); i != st.runs.end(); ++i) {
      if (i->second.action.address() != dm.source)
        continue;
      // A run quits normally only after its answer; any other end means the
      // manager would wait for nothing.
      if (dm.reason)
        reply_run_failure(self, i->first, i->second.key, dm.reason);
      st.runs.erase(i);
      break;
    }
    maybe_finish_stop(self);
  });
  caf::message_handler run_events{
    [self](probe_atom, std::uint64_t generation) { probe_liveness(self, generation); },
    [self](pong_atom, std::uint64_t generation) {
      if (generation == self->state.link_generation)
        self->state.ping_outstanding = false;
    },
    [self](action_trace_atom, const std::string& request_id, const std::string& trace) {
      auto& st = self->state;
      // Keyed to the actor, not the request id: a reused id must not make an
      // old trace cancel a newer run.
      st.by_trace[trace] = caf::actor_cast<caf::actor>(self->current_sender());
      send(self, wire::reflection::run_action_state(request_id, trace));
    },
    [self](action_chunk_atom, const std::string& request_id, const std::string& chunk) {
      send(self, wire::reflection::stream_chunk(request_id, chunk));
    },
    [self](action_done_atom, const std::string& request_id, bool ok, const std::string& raw) {
      // The runs map entry goes with the actor's down message; the trace id
      // must not be cancellable from here on.
      auto& st = self->state;
      auto sender = self->current_sender();
      std::erase_if(st.by_trace, [&](auto& kv) { return kv.second.address() == sender; });
      send(self, ok ? rpc::result_response(request_id, raw) : rpc::error_response(request_id, raw));
    },
    [self](shutdown_atom) -> caf::result<caf::ok_atom> {
      auto& st = self->state;
      st.stopping = true;
      for (auto& [id, r] : st.runs)
        self->send(r.action, cancel_atom_v);
      for (auto& [addr, action] : st.displaced)
        self->send(action, cancel_atom_v);
      st.stopped = self->make_response_promise();
      auto rp = st.stopped;
      maybe_finish_stop(self);
      return rp;
    },
  };
  caf::message_handler connecting{
    [self](connected_atom, net::transport_ptr& t) {
      auto& st = self->state;
      spdlog::info("Connected to manager {}", manager_url(self));
      st.transport = std::move(t);
      st.attempt = 0;
      st.failed_in_row = 0;
      ++st.link_generation;
      st.ping_outstanding = false;
      arm_liveness(self);
      if (st.stopping)
        return maybe_finish_stop(self);
      send_register(self);
      self->become(st.connected);
    },
    [self](connect_failed_atom, const std::string& reason) {
      spdlog::warn("cannot reach manager {}: {}", manager_url(self), reason);
      schedule_reconnect(self);
    }};
  caf::message_handler connected{
    [self](frame_atom, std::string& frame) {
      on_frame(self, frame);
      if (auto& t = self->state.transport) // read window (frame_bridge.hpp)
        t->frame_processed();
    },
    [self](closed_atom, const std::string& reason) { on_link_lost(self, reason); }};
  caf::message_handler waiting{[self](reconnect_atom) {
    auto& st = self->state;
    if (st.stopping)
      return;
    self->become(st.connecting);
    st.connect(caf::actor{self}, st.opts.manager_urls[st.manager]);
  }};
  st.connecting = connecting.or_else(run_events);
  st.connected = connected.or_else(run_events);
  st.waiting = waiting.or_else(run_events);
  if (st.opts.manager_urls.empty())
    st.opts.manager_urls.emplace_back("the manager");
  st.connect(caf::actor{self}, st.opts.manager_urls[st.manager]);
  return st.connecting;
}

} // namespace actor_host
