#pragma once

// Shared helpers for the actor tests: a fixture on CAF's deterministic
// scheduler, a probe actor that records what a caller receives, JSON access
// for what the fake transports captured, and live-count bookkeeping.
//
// Include after `#define CAF_SUITE <name>`; never together with
// unit_test_impl.hpp (main.cpp has the only copy).

#include <caf/test/dsl.hpp>

#include "actors/common/live_counts.hpp"
#include "actors/common/messages.hpp"
#include "actors/dispatch/call_path.hpp"
#include "actors/dispatch/runtime_connection.hpp"
#include "actors/dispatch/runtime_directory.hpp"
#include "actors/doors/ws/api_session.hpp"
#include "fake_transport.hpp"

#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace actor_host::testing {

// -- JSON ---------------------------------------------------------------------

/// Parses `text`; a failed check (not an abort: CAF 0.17 aborts the whole
/// binary on CAF_FAIL/CAF_REQUIRE) and null when it is not JSON.
inline boost::json::value parse_json(const std::string& text) {
  boost::json::error_code ec;
  auto v = boost::json::parse(text, ec);
  if (ec) {
    CAF_MESSAGE("not valid JSON (" << ec.message() << "): " << text);
    CAF_CHECK(!ec);
    return nullptr;
  }
  return v;
}

/// Compact JSON of the member at `path` inside `text`, or "<missing>".
/// member(R"({"a":{"b":"x"}})", {"a", "b"}) == R"("x")".
inline std::string member(const std::string& text, std::initializer_list<std::string_view> path) {
  auto v = parse_json(text);
  const boost::json::value* cur = &v;
  for (auto key : path) {
    auto* obj = cur->if_object();
    if (!obj)
      return "<missing>";
    auto* next = obj->if_contains(key);
    if (!next)
      return "<missing>";
    cur = next;
  }
  return boost::json::serialize(*cur);
}

/// Same as member() but for a JSON string: its decoded text, or "<not a string>".
inline std::string member_str(const std::string& text,
                              std::initializer_list<std::string_view> path) {
  auto v = parse_json(text);
  const boost::json::value* cur = &v;
  for (auto key : path) {
    auto* obj = cur->if_object();
    if (!obj || !obj->if_contains(key))
      return "<missing>";
    cur = obj->if_contains(key);
  }
  if (auto* s = cur->if_string())
    return std::string{s->data(), s->size()};
  return "<not a string>";
}

inline bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

/// A `register` frame from a runtime; `id` is the raw JSON-RPC id, empty for a
/// notification. Its `name` (the service it is a replica of) is `name`, by
/// default its runtime id (a service of its own).
inline std::string register_frame(std::string_view runtime_id, std::string_view id = R"("1")",
                                  std::string_view pid = "4242", std::string_view name = {}) {
  std::string s = R"({"jsonrpc":"2.0","method":"register","params":{"id":")";
  s += runtime_id;
  s += R"(","pid":)";
  s += pid;
  s += R"(,"name":")";
  s += name.empty() ? runtime_id : name;
  s += R"(","genkitVersion":"js/1.0.0","reflectionApiSpecVersion":2})";
  if (!id.empty()) {
    s += R"(,"id":)";
    s += id;
  }
  s += '}';
  return s;
}

/// A call as a front door would hand it to a connection (parse_run_action's
/// output for runAction: the key read from the params).
inline call_request make_call(std::uint64_t tag, const std::string& method, std::string params = {},
                              caf::timespan timeout = caf::timespan{0}) {
  call_request c;
  c.tag = tag;
  for (auto m : {call_method::run_action, call_method::list_actions, call_method::list_values,
                 call_method::cancel_action})
    if (method_name(m) == method)
      c.method = m;
  CAF_CHECK_EQUAL(method_name(c.method), method);
  if (c.method == call_method::run_action) {
    auto v = boost::json::parse(params);
    c.key = boost::json::value_to<std::string>(v.at("key"));
  }
  c.params = std::move(params);
  c.timeout = timeout;
  return c;
}

// -- probe: a caller that records everything --------------------------------

struct probe_event {
  std::string kind; // trace, chunk, done, actor (reply to call_atom)
  std::uint64_t tag = 0;
  bool ok = false;
  std::string text;
  caf::actor actor;
};

struct probe_state {
  std::vector<probe_event> events;
  static inline const char* name = "probe";
};

inline caf::behavior probe_actor(caf::stateful_actor<probe_state>* self) {
  auto add = [self](probe_event e) { self->state.events.push_back(std::move(e)); };
  return {
    [add](trace_atom, std::uint64_t tag, std::string& trace) {
      add({"trace", tag, false, std::move(trace), {}});
    },
    [add](chunk_atom, std::uint64_t tag, std::string& chunk) {
      add({"chunk", tag, false, std::move(chunk), {}});
    },
    [add](done_atom, std::uint64_t tag, call_end& end) {
      add({"done", tag, end.ok, end.ok ? std::move(end.result) : std::move(end.error.object), {}});
    },
    // The reply to an async (call_atom, ...) sent as the probe.
    // `ok`: the call's actor answers at its end by itself (answers_at_end).
    [add](call_handle& pending) {
      add({"actor", pending.id, pending.answers_at_end, {},
           caf::actor_cast<caf::actor>(pending.actor)});
    },
  };
}

/// "trace 1 t-1 | chunk 1 {..} | done 1 ok {..}": one string for one check.
inline std::string render(const std::vector<probe_event>& events) {
  std::string out;
  for (auto& e : events) {
    if (!out.empty())
      out += " | ";
    out += e.kind + ' ' + std::to_string(e.tag);
    if (e.kind == "done")
      out += e.ok ? " ok" : " failed";
    if (!e.text.empty())
      out += ' ' + e.text;
  }
  return out;
}

// -- fixture ------------------------------------------------------------------

/// Every kind of actor: a test leaves none more alive than it found.
constexpr auto all_kinds = [] {
  std::array<actor_kind, static_cast<std::size_t>(actor_kind::count_)> out{};
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<actor_kind>(i);
  return out;
}();

struct actor_fixture : test_coordinator_fixture<> {
  std::array<std::int64_t, all_kinds.size()> live_at_start{};
  // Where the fixture's directories publish their routes.
  route_board_ptr board = std::make_shared<route_board>();

  actor_fixture() {
    spdlog::set_level(spdlog::level::off);
    for (std::size_t i = 0; i < all_kinds.size(); ++i)
      live_at_start[i] = live_actors(all_kinds[i]);
  }

  // Every spawn runs the scheduler: under the test coordinator an actor's
  // init (its behavior function) runs only when it is first scheduled.

  directory_actor spawn_directory() {
    auto d = sys.spawn(runtime_directory, board, std::chrono::milliseconds{0});
    sched.run();
    return d;
  }

  /// What a front door's caller starts calls with.
  front_door door(const directory_actor& dir, call_policy policy = {},
                  caf::actor functions = {}) const {
    return front_door{board, dir, caf::actor_cast<iii_catalog_actor>(std::move(functions)), policy,
                      nullptr, {}, {}, {}, {}};
  }

  /// How the published routes send a call for `runtime_id` ("" = the most
  /// recent runtime): (ok, connection, runtime id or error object).
  std::tuple<bool, caf::actor, std::string> route(const std::string& runtime_id) const {
    auto r = route_call(*board->current(), list_actions_call(runtime_id, {}));
    if (r.how != call_route::kind::runtime)
      return {false, caf::actor{}, r.error.object};
    return {true, caf::actor_cast<caf::actor>(r.conn), r.runtime_id};
  }

  connection_actor spawn_connection(const fake_transport_ptr& t, const directory_actor& dir,
                              connection_options opts = default_connection_options()) {
    auto c = sys.spawn(runtime_connection, net::transport_ptr{t}, dir, std::move(opts));
    sched.run();
    return c;
  }

  api_session_actor spawn_session(const fake_transport_ptr& t, const directory_actor& dir,
                           call_policy policy = {}) {
    auto s = sys.spawn(api_session, net::transport_ptr{t}, door(dir, policy));
    sched.run();
    return s;
  }

  caf::actor spawn_probe() {
    auto p = sys.spawn(probe_actor);
    sched.run();
    return p;
  }

  /// A plain actor, e.g. a stand-in connection for the directory.
  caf::actor spawn_dummy() {
    auto d = sys.spawn([](caf::event_based_actor*) -> caf::behavior { return {[](int) {}}; });
    sched.run();
    return d;
  }

  static connection_options default_connection_options() {
    connection_options o;
    o.reflection_url = "ws://localhost:3100";
    return o;
  }

  std::vector<probe_event>& events(const caf::actor& probe) {
    return deref<caf::stateful_actor<probe_state>>(probe).state.events;
  }

  /// Delivers one socket frame and runs every message (but moves no time).
  void send_frame(const socket_owner_actor& to, std::string text) {
    caf::anon_send(to, frame_atom_v, std::move(text));
    sched.run();
  }

  /// Request from the fixture's scoped actor; runs messages only (no timeouts).
  template <class... Ts, class Handle, class... Us>
  std::tuple<Ts...> ask(const Handle& dest, Us&&... xs) {
    auto hdl = self->request(dest, caf::infinite, std::forward<Us>(xs)...);
    sched.run();
    std::tuple<Ts...> result;
    if (self->mailbox().empty()) {
      CAF_MESSAGE("no reply to the request");
      CAF_CHECK(!self->mailbox().empty());
      return result;
    }
    hdl.receive([&](Ts&... ys) { result = std::make_tuple(std::move(ys)...); },
                [&](caf::error& err) {
                  CAF_MESSAGE("request failed: " << sys.render(err));
                  CAF_CHECK(!err);
                });
    return result;
  }

  /// The caller's error a request is refused with (call_refusal), or none
  /// when it is answered otherwise.
  template <class Handle, class... Us>
  std::optional<call_error> ask_refusal(const Handle& dest, Us&&... xs) {
    auto hdl = self->request(dest, caf::infinite, std::forward<Us>(xs)...);
    sched.run();
    std::optional<call_error> out;
    if (self->mailbox().empty())
      return out;
    hdl.receive([](const caf::message&) {},
                [&](caf::error& err) {
                  if (err.category() == caf::atom("refused")
                      && err.context().match_elements<call_error>())
                    out = err.context().get_as<call_error>(0);
                });
    return out;
  }

  /// Hands `child` (typed or not) to a manager_supervisor, which watches
  /// actors by their plain handle (as manager.cpp's spawner does).
  template <class Handle>
  static void adopt(const caf::actor& sup, const Handle& child) {
    caf::anon_send(sup, adopt_atom_v, caf::actor_cast<caf::actor>(child));
  }

  /// Ends `who` (kill cannot be trapped) and runs the consequences.
  template <class Handle>
  void stop(const Handle& who, caf::exit_reason reason = caf::exit_reason::kill) {
    caf::anon_send_exit(who, reason);
    sched.run();
  }

  std::int64_t live(actor_kind k) const {
    return live_actors(k);
  }

  std::int64_t live_delta(actor_kind k) const {
    for (std::size_t i = 0; i < all_kinds.size(); ++i)
      if (all_kinds[i] == k)
        return live_actors(k) - live_at_start[i];
    return 0;
  }

  /// Every kind of actor is back to what lived when the test began.
  void check_no_leaks() {
    for (auto k : all_kinds) {
      CAF_MESSAGE("live " << actor_kind_name(k) << ": " << live_delta(k) << " more than at start");
      CAF_CHECK_EQUAL(live_delta(k), 0);
    }
  }
};

/// A runtime's connection with its socket, a directory and a caller probe
/// (the runtime_connection and stream_sink suites).
struct connection_fixture : actor_fixture {
  fake_transport_ptr rt = make_fake_transport("127.0.0.1:40001");
  directory_actor dir = spawn_directory();
  connection_actor conn = spawn_connection(rt, dir);
  caf::actor caller = spawn_probe();

  /// Registers "rt1" and forgets the reply frame.
  void register_runtime(const std::string& id = "rt1") {
    send_frame(conn, register_frame(id));
    CAF_REQUIRE_EQUAL(rt->size(), 1u);
    rt->clear();
  }

  /// Starts a call as `caller` and returns the pending_request it got back.
  caf::actor call(std::uint64_t tag, std::string method, std::string params = {},
                  caf::timespan timeout = caf::timespan{0}) {
    auto before = events(caller).size();
    caf::send_as(caller, conn, call_atom_v, make_call(tag, method, std::move(params), timeout),
                 caf::actor_cast<caller_actor>(caller));
    sched.run();
    auto& ev = events(caller);
    CAF_REQUIRE_EQUAL(ev.size(), before + 1);
    CAF_REQUIRE_EQUAL(ev.back().kind, "actor");
    auto p = ev.back().actor;
    // A runtime's request answers at its end: its callers do not monitor it.
    CAF_CHECK(ev.back().ok);
    ev.pop_back();
    CAF_REQUIRE(p);
    return p;
  }

  /// Everything in this fixture ends; the counts must be back where they were.
  void finish() {
    stop(caller);
    stop(conn, caf::exit_reason::user_shutdown);
    stop(dir);
    check_no_leaks();
  }
};

} // namespace actor_host::testing
