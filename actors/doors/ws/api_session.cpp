#include "actors/doors/ws/api_session.hpp"

#include "actors/call/errors.hpp"
#include "actors/common/frame_bridge.hpp"
#include "actors/doors/ws/dashboard_feed.hpp"
#include "obs/metrics.hpp"
#include "wire/jsonrpc.hpp"
#include "wire/reflection_frames.hpp"

#include <simdjson.h>
#include <spdlog/spdlog.h>

namespace actor_host {

namespace rpc = wire::jsonrpc;

namespace {

using self_ptr = api_session_ptr;

// This door's wire shape of an error: the JSON-RPC error object, as it is.
void send_error(self_ptr self, const std::string& id, const call_error& error) {
  self->state.transport->send_text(rpc::error_response(id, error.object));
}

void send_error(self_ptr self, const std::string& id, int code, const std::string& message) {
  self->state.transport->send_text(rpc::error_response(id, rpc::error_object(code, message)));
}

// Optional params: absent, or an object.
bool object_params(self_ptr self, const rpc::message& m, rpc::object_members& out) {
  if (m.params.empty())
    return true;
  if (auto split = rpc::split_object(m.params)) {
    out = std::move(*split);
    return true;
  }
  if (m.kind == rpc::kind::request)
    send_error(self, m.id, rpc::code::invalid_params, "Invalid params: params must be a JSON object");
  return false;
}

// An optional string member; false (and an error reply) if it has another type.
bool optional_string(self_ptr self, const rpc::message& m, const rpc::object_members& p,
                     const char* key, std::string& out) {
  auto* raw = p.find(key);
  if (!raw || *raw == "null")
    return true;
  if (rpc::string_value(*raw, out))
    return true;
  send_error(self, m.id, rpc::code::invalid_params,
             std::string{"Invalid params: '"} + key + "' must be a string");
  return false;
}

api_session_state::call* find_call(self_ptr self, std::uint64_t tag) {
  auto i = self->state.calls.find(tag);
  return i == self->state.calls.end() ? nullptr : &i->second;
}

/// A streaming run's events as this caller's frames (its own request id); the
/// runtime's connection writes them here directly (stream_sink.hpp).
class frame_sink : public stream_sink {
public:
  frame_sink(net::transport_ptr transport, std::string caller_id)
    : transport_(std::move(transport)), caller_id_(std::move(caller_id)) {
  }

protected:
  void write_trace(const std::string& id, bool) override {
    transport_->send_text(wire::reflection::run_action_state(caller_id_, id));
  }

  void write_chunk(std::string chunk, bool) override {
    transport_->send_text(wire::reflection::stream_chunk(caller_id_, chunk));
  }

private:
  net::transport_ptr transport_;
  std::string caller_id_;
};

/// Nothing of the call is written after its last word.
void close_events(api_session_state::call& c) {
  if (auto* sink = c.sink())
    sink->close();
}

void forget(self_ptr self, std::uint64_t tag) {
  auto& st = self->state;
  if (auto i = st.calls.find(tag); i != st.calls.end()) {
    close_events(i->second);
    st.by_id.erase(tag);
    st.calls.erase(i);
  }
}

void on_accepted(self_ptr self, std::uint64_t tag, call_handle& pending) {
  // A call finished (or failed here) before we learned who runs it is aborted.
  if (take_accepted(self, find_call(self, tag), pending))
    pending.monitor(self);
}

void on_done(self_ptr self, std::uint64_t tag, const call_end& end) {
  auto* c = find_call(self, tag);
  if (!c)
    return;
  c->pending.demonitor(self);
  close_events(*c);
  auto& t = self->state.transport;
  if (end.ok && c->rare && c->rare->target) {
    std::string out;
    auto err = describe_from_listing(end.result, *c->rare->target, c->rare->runtime, out);
    t->send_text(!err ? rpc::result_response(c->caller_id, out)
                      : rpc::error_response(c->caller_id, err->object));
    return forget(self, tag);
  }
  t->send_text(end.ok ? rpc::result_response(c->caller_id, end.result)
                      : rpc::error_response(c->caller_id, end.error.object));
  forget(self, tag);
}

// A caller that pipelines calls faster than runtimes answer them would
// otherwise hold any number of them in flight.
bool under_call_cap(self_ptr self, const rpc::message& m) {
  auto& st = self->state;
  auto cap = st.door.policy.max_calls_per_caller;
  if (cap == 0 || st.calls.size() < cap) {
    st.over_call_cap = false;
    return true;
  }
  obs::global().calls_over_cap.fetch_add(1, std::memory_order_relaxed);
  if (!st.over_call_cap) {
    st.over_call_cap = true;
    spdlog::warn("caller {} on /api/ws has {} calls in flight (max_calls_per_caller); "
                 "refusing more until some finish",
                 st.transport->peer(), st.calls.size());
  }
  send_error(self, m.id, manager_errors::too_many_calls(cap, "connection"));
  return false;
}

void begin(self_ptr self, const rpc::message& m, call_request req, bool events,
           std::optional<describe_target> describe = std::nullopt, std::string runtime_id = {}) {
  auto& st = self->state;
  if (!under_call_cap(self, m))
    return;
  if (st.by_id.contains(std::string_view{m.id})) {
    send_error(self, m.id, rpc::code::invalid_request,
               "Invalid request: id " + m.id + " is already in use by a call in flight");
    return;
  }
  auto tag = st.next_tag++;
  auto& c = st.calls[tag];
  c.caller_id = m.id;
  c.events = events;
  using rare_part = api_session_state::call::rare_part;
  if (describe)
    c.rare = std::make_unique<rare_part>(rare_part{{}, std::move(*describe), std::move(runtime_id)});
  st.by_id.insert(tag);
  req.tag = tag;
  if (events && req.stream) {
    if (!c.rare)
      c.rare = std::make_unique<rare_part>();
    c.rare->sink = std::make_shared<frame_sink>(st.transport, c.caller_id);
    req.sink = c.rare->sink;
  }
  start_call(
    self, st.door, std::move(req), self,
    [self, tag](call_handle pending) { on_accepted(self, tag, pending); },
    [self, tag](call_end end) { on_done(self, tag, end); });
}

// listRuntimes -> {runtimes: [...]}, listServices -> {services: [...]}.
template <class Atom>
void on_listing(self_ptr self, const rpc::message& m, Atom what, const char* member) {
  self->request(self->state.door.directory, internal_reply_timeout, what)
    .then(
      [self, id = m.id, member](const std::string& list) {
        self->state.transport->send_text(
          rpc::result_response(id, "{\"" + std::string{member} + "\":" + list + "}"));
      },
      [self, id = m.id, member](caf::error& err) {
        send_error(self, id,
                   manager_errors::internal("listing " + std::string{member}
                                            + " failed: " + to_string(err)));
      });
}

/// The error answer of a request the supervisor refused ("<what> failed:
/// why"): its own refusals carry their reason as the error's text.
auto supervisor_refusal(self_ptr self, std::string id, std::string what) {
  return [self, id = std::move(id), what = std::move(what)](caf::error& err) {
    auto why = err.context().match_elements<std::string>() ? err.context().get_as<std::string>(0)
                                                           : to_string(err);
    send_error(self, id,
               manager_errors::make_error(wire::status_code::failed_precondition,
                                          what + " failed: " + why));
  };
}

// `restartService {name}`: a rolling restart of a service the manager runs
// (rolling_restart.hpp); answered when every replica is back. A restart of
// a large service takes a while: the answer has no deadline of its own here
// (each step has its own).
void on_restart_service(self_ptr self, const rpc::message& m, std::string name) {
  auto& st = self->state;
  if (!st.door.supervisor)
    return send_error(self, m.id, rpc::code::method_not_found, "Method not found: restartService");
  self->request(st.door.supervisor, caf::infinite, restart_atom_v, std::move(name))
    .then(
      [self, id = m.id](std::string& summary) {
        self->state.transport->send_text(rpc::result_response(id, summary));
      },
      supervisor_refusal(self, m.id, "restart"));
}

// `drainNode {}`: `actor-host drain`: this node drains and stops as on
// SIGTERM (manager_supervisor); answered as the drain begins.
void on_drain_node(self_ptr self, const rpc::message& m) {
  auto& st = self->state;
  if (!st.door.supervisor)
    return send_error(self, m.id, rpc::code::method_not_found, "Method not found: drainNode");
  self->request(st.door.supervisor, internal_reply_timeout, drain_atom_v)
    .then(
      [self, id = m.id](std::string& summary) {
        self->state.transport->send_text(
          rpc::result_response(id, "{\"message\":" + rpc::quote(summary) + "}"));
      },
      supervisor_refusal(self, m.id, "drain"));
}

// `watch {topics?: [name...]}`: the dashboard feed pushes every watched
// topic now and on each change (dashboard_feed.hpp). Without topics, all.
void on_watch(self_ptr self, const rpc::message& m, const rpc::object_members& p) {
  auto& st = self->state;
  if (!st.door.feed)
    return send_error(self, m.id, rpc::code::method_not_found, "Method not found: watch");
  std::uint32_t topics = 0;
  std::string names;
  auto bad = [&] {
    send_error(self, m.id, rpc::code::invalid_params,
               "Invalid params: 'topics' must be an array of topic names (" + feed_topic_names()
                 + ")");
  };
  if (auto* raw = p.find("topics"); raw && *raw != "null") {
    simdjson::ondemand::parser parser;
    simdjson::padded_string padded(*raw);
    simdjson::ondemand::document doc;
    simdjson::ondemand::array arr;
    if (parser.iterate(padded).get(doc) || doc.get_array().get(arr))
      return bad();
    for (auto v : arr) {
      std::string_view name;
      if (v.get_string().get(name))
        return bad();
      auto b = feed_topic_bit(name);
      if (b == 0)
        return send_error(self, m.id, rpc::code::invalid_params,
                          "Invalid params: unknown topic '" + std::string{name.substr(0, 64)}
                            + "'; topics are " + feed_topic_names());
      if (!(topics & b))
        names += (names.empty() ? "" : ",") + rpc::quote(name);
      topics |= b;
    }
  } else {
    topics = all_feed_topics;
    names = feed_topics_json(topics);
  }
  // The feed answers before it sends the first updates, so the answer is
  // written first.
  self->request(st.door.feed, internal_reply_timeout, subscribe_atom_v,
                caf::actor_cast<caf::actor>(self), topics)
    .then(
      [self, id = m.id, names](caf::ok_atom) {
        self->state.transport->send_text(
          rpc::result_response(id, R"({"topics":[)" + names + "]}"));
      },
      [self, id = m.id](caf::error& err) {
        send_error(self, id,
                   manager_errors::make_error(wire::status_code::resource_exhausted,
                                              "cannot watch: " + caf::to_string(err)));
      });
}

void on_run_action(self_ptr self, rpc::message& m) {
  call_request req;
  // Moved, not copied: it keeps the padding decode reserved.
  auto error = parse_run_action(std::move(m.params), self->state.door.policy, {}, req);
  if (error)
    return send_error(self, m.id, *error);
  begin(self, m, std::move(req), true);
}

void on_input(self_ptr self, const rpc::message& m, bool end) {
  rpc::object_members p;
  if (!object_params(self, m, p))
    return;
  auto& st = self->state;
  auto* rid = p.find("requestId");
  auto i = rid ? st.by_id.find(std::string_view{*rid}) : st.by_id.end();
  if (i == st.by_id.end()) {
    spdlog::debug("{} for unknown requestId from caller {}", m.method, st.transport->peer());
    if (m.kind == rpc::kind::request)
      send_error(self, m.id, rpc::code::invalid_params,
                 "Invalid params: no run in flight with requestId "
                   + (rid ? *rid : std::string{"(missing)"}));
    return;
  }
  auto tag = *i;
  auto& c = st.calls[tag];
  std::string chunk;
  if (!end) {
    auto* raw = p.find("chunk");
    if (!raw) {
      if (m.kind == rpc::kind::request)
        send_error(self, m.id, rpc::code::invalid_params, "Invalid params: 'chunk' is missing");
      return;
    }
    chunk = *raw;
  }
  if (c.input_ended) {
    // Nothing goes to the runtime after endInputStream, as runtimes drop it.
    if (m.kind == rpc::kind::request)
      send_error(self, m.id, rpc::code::invalid_params,
                 "Invalid params: the input of request " + *rid + " has already ended");
    return;
  }
  c.input_ended = end;
  if (!c.pending) {
    // Not routed yet: keep wire order by queueing behind the runAction,
    // within the same cap as the pending request holds input to.
    auto cap = st.door.policy.max_bidi_input_bytes;
    if (end)
      c.held.hold_end();
    else if (!c.held.hold(std::move(chunk), cap)) {
      obs::global().bidi_input_overflows.fetch_add(1, std::memory_order_relaxed);
      spdlog::warn("caller {}: bidi input held for run {} exceeds max_bidi_input_bytes ({} "
                   "bytes) before the run started; failing it",
                   st.transport->peer(), c.caller_id, cap);
      if (m.kind == rpc::kind::request)
        st.transport->send_text(rpc::result_response(m.id, "{}"));
      return on_done(self, tag, failed(manager_errors::bidi_input_overflow(cap)));
    }
  } else if (end) {
    c.pending.send_end_input(self);
  } else {
    c.pending.send_input(self, std::move(chunk));
  }
  if (m.kind == rpc::kind::request)
    st.transport->send_text(rpc::result_response(m.id, "{}"));
}

void on_frame(self_ptr self, std::string& frame) {
  auto& st = self->state;
  rpc::message m;
  rpc::decode_error err;
  if (!rpc::decode(frame, m, err))
    return send_error(self, err.id, err.code, err.message);
  if (m.kind == rpc::kind::response)
    return; // we never send requests to callers
  if (m.method == "sendInputStreamChunk")
    return on_input(self, m, false);
  if (m.method == "endInputStream")
    return on_input(self, m, true);
  if (m.kind != rpc::kind::request) {
    spdlog::debug("ignoring notification {} from caller {}", m.method, st.transport->peer());
    return;
  }
  if (m.method == "listRuntimes")
    return on_listing(self, m, list_atom_v, "runtimes");
  if (m.method == "listServices")
    return on_listing(self, m, services_atom_v, "services");
  if (m.method == "getCluster")
    return st.transport->send_text(rpc::result_response(m.id, cluster_json(st.door)));
  if (m.method == "runAction")
    return on_run_action(self, m);
  rpc::object_members p;
  if (!object_params(self, m, p))
    return;
  std::string runtime_id;
  if (!optional_string(self, m, p, "runtimeId", runtime_id))
    return;
  auto& policy = st.door.policy;
  if (m.method == "watch")
    return on_watch(self, m, p);
  if (m.method == "listActions")
    return begin(self, m, list_actions_call(std::move(runtime_id), policy), false);
  if (m.method == "describe") {
    std::string symbol;
    auto* raw = p.find("symbol");
    if (raw && !rpc::string_value(*raw, symbol))
      return send_error(self, m.id, rpc::code::invalid_params,
                        "Invalid params: 'symbol' must be a string");
    describe_target t;
    if (auto err = parse_describe_symbol(symbol, t))
      return send_error(self, m.id, *err);
    auto call = describe_call(t, runtime_id, policy);
    return begin(self, m, std::move(call), false, std::move(t), std::move(runtime_id));
  }
  if (m.method == "listValues") {
    std::string type;
    auto* raw = p.find("type");
    if (!raw || !rpc::string_value(*raw, type) || type.empty())
      return send_error(self, m.id, rpc::code::invalid_params,
                        "Invalid params: 'type' must be a string such as \"defaultModel\"");
    return begin(self, m, list_values_call(std::move(runtime_id), type, policy), false);
  }
  if (m.method == "restartService") {
    std::string name;
    auto* raw = p.find("name");
    if (!raw || !rpc::string_value(*raw, name) || name.empty() || name.size() > 256)
      return send_error(self, m.id, rpc::code::invalid_params,
                        "Invalid params: 'name' must be the name of a service (1-256 characters)");
    return on_restart_service(self, m, std::move(name));
  }
  if (m.method == "drainNode")
    return on_drain_node(self, m);
  if (m.method == "cancelAction") {
    std::string trace;
    auto* raw = p.find("traceId");
    if (!raw || !rpc::string_value(*raw, trace) || trace.empty())
      return send_error(self, m.id, rpc::code::invalid_params,
                        "Invalid params: 'traceId' must be a non-empty string");
    return begin(self, m, cancel_action_call(std::move(runtime_id), trace, policy), false);
  }
  send_error(self, m.id, rpc::code::method_not_found, "Method not found: " + m.method);
}

} // namespace

api_session_actor::behavior_type api_session(self_ptr self, net::transport_ptr transport,
                                             front_door door) {
  auto& st = self->state;
  st.transport = transport;
  st.door = std::move(door);
  close_on_exit(self, std::move(transport));
  // A call's own actor that dies without a `done` (manager shutdown) still
  // owes its caller an answer. (A runtime's pending request answers as it
  // ends and is not monitored: call_handle::answers_at_end.)
  self->set_down_handler([self](caf::down_msg& dm) {
    for (auto& [tag, c] : self->state.calls) {
      if (c.pending && c.pending.own_actor() && c.pending.actor.address() == dm.source) {
        auto error = dm.reason == caf::exit_reason::user_shutdown
                       ? manager_errors::shutting_down()
                       : manager_errors::internal("the request ended unexpectedly");
        close_events(c);
        send_error(self, c.caller_id, std::move(error));
        forget(self, tag);
        return;
      }
    }
  });
  // On manager shutdown, answer what is in flight before the socket closes.
  self->set_exit_handler([self](caf::exit_msg& em) {
    if (em.reason == caf::exit_reason::normal)
      return;
    for (auto& [tag, c] : self->state.calls) {
      close_events(c);
      send_error(self, c.caller_id, manager_errors::shutting_down());
    }
    self->state.by_id.clear();
    self->state.calls.clear();
    self->quit(em.reason);
  });
  return {
    [self](frame_atom, std::string& frame) {
      on_frame(self, frame);
      self->state.transport->frame_processed();
    },
    // Our pending requests monitor us: quitting abandons (cancels) the runs.
    [self](closed_atom, const std::string&) { self->quit(); },
    [self](trace_atom, std::uint64_t tag, const std::string& trace) {
      auto* c = find_call(self, tag);
      if (!c || !c->events)
        return;
      if (auto* sink = c->sink())
        return sink->trace(trace); // unless the connection wrote it
      self->state.transport->send_text(wire::reflection::run_action_state(c->caller_id, trace));
    },
    [self](chunk_atom, std::uint64_t tag, std::string& chunk) {
      auto* c = find_call(self, tag);
      if (!c || !c->events)
        return;
      if (auto* sink = c->sink())
        return sink->chunk(std::move(chunk));
      self->state.transport->send_text(wire::reflection::stream_chunk(c->caller_id, chunk));
    },
    [self](done_atom, std::uint64_t tag, const call_end& end) { on_done(self, tag, end); },
    [self](feed_atom, const std::string& text) { self->state.transport->send_text(text); },
  };
}

} // namespace actor_host
