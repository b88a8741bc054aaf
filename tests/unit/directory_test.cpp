#define CAF_SUITE directory

#include "test_support.hpp"

#include "actors/call/call_request.hpp"
#include "actors/call/errors.hpp"
#include "actors/dispatch/runtime_directory.hpp"
#include "actors/manager/manager_supervisor.hpp"
#include "obs/metrics.hpp"
#include "wire/iii_protocol.hpp"

using namespace actor_host;
using namespace actor_host::testing;

namespace {

std::string info(const std::string& id, int n = 0) {
  return R"({"id":")" + id + R"(","pid":)" + std::to_string(1000 + n) + "}";
}

struct directory_fixture : actor_fixture {
  directory_actor dir = spawn_directory();

  // Dummies stand in for connections: the directory only monitors and
  // routes to them in these tests.
  static connection_actor as_conn(const caf::actor& dummy) {
    return caf::actor_cast<connection_actor>(dummy);
  }

  void reg(const std::string& id, const caf::actor& conn, int n = 0) {
    caf::anon_send(dir, register_atom_v, runtime_registration{id, id, info(id, n), nullptr},
                   as_conn(conn));
    sched.run();
  }

  std::string list() {
    return std::get<0>(ask<std::string>(dir, list_atom_v));
  }

  std::tuple<bool, call_handle> find(const std::string& trace) {
    return ask<bool, call_handle>(dir, bidi_find_atom_v, trace);
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(directory_tests, directory_fixture)

CAF_TEST(route without runtimes is unavailable) {
  auto [ok, conn, err] = route("");
  CAF_CHECK(!ok);
  CAF_CHECK(!conn);
  CAF_CHECK_EQUAL(member(err, {"code"}), "-32000");
  CAF_CHECK_EQUAL(member(err, {"data", "code"}), "14");
  CAF_CHECK_EQUAL(member_str(err, {"message"}),
                  "No runtimes found: no runtime is registered with this manager");
  CAF_CHECK_EQUAL(list(), "[]");
}

CAF_TEST(route by id and to the most recent) {
  auto c1 = spawn_dummy();
  auto c2 = spawn_dummy();
  reg("a", c1);
  reg("b", c2);
  CAF_CHECK_EQUAL(registered_runtimes.load(), 2);
  {
    auto [ok, conn, id] = route("");
    CAF_CHECK(ok);
    CAF_CHECK(conn == c2);
    CAF_CHECK_EQUAL(id, "b");
  }
  {
    auto [ok, conn, id] = route("a");
    CAF_CHECK(ok);
    CAF_CHECK(conn == c1);
    CAF_CHECK_EQUAL(id, "a");
  }
  {
    auto [ok, conn, err] = route("x");
    CAF_CHECK(!ok);
    CAF_CHECK(!conn);
    CAF_CHECK_EQUAL(member(err, {"code"}), "-32000");
    CAF_CHECK_EQUAL(member(err, {"data", "code"}), "5");
    CAF_CHECK_EQUAL(member_str(err, {"message"}), "Runtime x not found");
    CAF_CHECK_EQUAL(member_str(err, {"data", "message"}), "Runtime x not found");
  }
  CAF_CHECK_EQUAL(list(), "[" + info("a") + "," + info("b") + "]");
  stop(c1);
  stop(c2);
}

CAF_TEST(re-registering keeps the position and the new connection wins) {
  auto c1 = spawn_dummy();
  auto c2 = spawn_dummy();
  auto c3 = spawn_dummy();
  reg("a", c1, 1);
  reg("b", c2, 2);
  reg("a", c3, 3);
  CAF_CHECK_EQUAL(registered_runtimes.load(), 2);
  // "b" is still the most recent: the re-registration did not move "a".
  {
    auto [ok, conn, id] = route("");
    CAF_CHECK(ok);
    CAF_CHECK(conn == c2);
    CAF_CHECK_EQUAL(id, "b");
  }
  {
    auto [ok, conn, id] = route("a");
    CAF_CHECK(ok);
    CAF_CHECK(conn == c3);
  }
  // The info is the newest one, in the old place.
  CAF_CHECK_EQUAL(list(), "[" + info("a", 3) + "," + info("b", 2) + "]");
  // A stale connection cannot deregister the id.
  caf::anon_send(dir, deregister_atom_v, std::string{"a"}, as_conn(c1));
  sched.run();
  {
    auto [ok, conn, id] = route("a");
    CAF_CHECK(ok);
    CAF_CHECK(conn == c3);
  }
  // The owner can.
  caf::anon_send(dir, deregister_atom_v, std::string{"a"}, as_conn(c3));
  sched.run();
  CAF_CHECK(!std::get<0>(route("a")));
  CAF_CHECK_EQUAL(registered_runtimes.load(), 1);
  CAF_CHECK_EQUAL(list(), "[" + info("b", 2) + "]");
  stop(c1);
  stop(c2);
  stop(c3);
}

CAF_TEST(a dying connection removes only the entries it still owns) {
  auto old_conn = spawn_dummy();
  auto new_conn = spawn_dummy();
  auto other = spawn_dummy();
  reg("a", old_conn);
  reg("b", old_conn);
  reg("c", other);
  reg("a", new_conn);
  stop(old_conn);
  // "b" belonged to the dead connection; "a" had moved on to a newer one.
  CAF_CHECK(!std::get<0>(route("b")));
  {
    auto [ok, conn, id] = route("a");
    CAF_CHECK(ok);
    CAF_CHECK(conn == new_conn);
  }
  CAF_CHECK_EQUAL(list(), "[" + info("a") + "," + info("c") + "]");
  CAF_CHECK_EQUAL(registered_runtimes.load(), 2);
  stop(new_conn);
  CAF_CHECK(!std::get<0>(route("a")));
  auto recent = route(""); // CAF_CHECK_EQUAL binds references: keep the tuple alive
  CAF_CHECK_EQUAL(std::get<2>(recent), "c");
  stop(other);
  auto [ok, conn, err] = route("");
  CAF_CHECK(!ok);
  CAF_CHECK_EQUAL(member(err, {"data", "code"}), "14");
  CAF_CHECK_EQUAL(registered_runtimes.load(), 0);
}

// The directory finds an entry by id and a dead connection's entries by
// the connection (a fleet dropping at once was a scan per disconnect): both
// indexes follow every move and deregistration, so a connection that comes
// and goes leaves nothing in them.
CAF_TEST(the indexes by id and by connection follow every change) {
  using directory_impl = std::remove_pointer_t<directory_actor::stateful_pointer<directory_state>>;
  auto& st = dynamic_cast<directory_impl&>(*caf::actor_cast<caf::abstract_actor*>(dir)).state;
  auto only = [&](const caf::actor& conn, std::vector<std::string> ids) {
    auto i = st.ids_of_conn.find(conn.address());
    CAF_REQUIRE(i != st.ids_of_conn.end());
    CAF_CHECK_EQUAL(i->second, ids);
  };
  // Connections that come, register, deregister and go leave nothing.
  for (int round = 0; round < 3; ++round) {
    auto c = spawn_dummy();
    reg("a", c);
    reg("b", c);
    only(c, {"a", "b"});
    caf::anon_send(dir, deregister_atom_v, std::string{"b"}, as_conn(c));
    sched.run();
    only(c, {"a"});
    stop(c);
    CAF_CHECK(st.entries.empty());
    CAF_CHECK(st.by_id.empty());
    CAF_CHECK(st.ids_of_conn.empty());
  }
  // An id taken over by a new connection (the old one does not answer its
  // probe and is stopped) is the new one's alone.
  auto c1 = spawn_dummy();
  auto c2 = spawn_dummy();
  reg("a", c1);
  reg("b", c2);
  reg("a", c2);
  CAF_CHECK_EQUAL(st.ids_of_conn.count(c1.address()), 0u);
  only(c2, {"b", "a"});
  CAF_CHECK_EQUAL(st.by_id.size(), 2u);
  CAF_CHECK_EQUAL(list(), "[" + info("a") + "," + info("b") + "]");
  stop(c2);
  CAF_CHECK(st.entries.empty());
  CAF_CHECK(st.by_id.empty());
  CAF_CHECK(st.ids_of_conn.empty());
  stop(c1);
}

CAF_TEST(bidi open find and close) {
  auto p1 = spawn_dummy();
  auto p2 = spawn_dummy();
  caf::anon_send(dir, bidi_open_atom_v, std::string{"t1"},
                 call_handle{caf::actor_cast<call_actor>(p1), 0});
  caf::anon_send(dir, bidi_open_atom_v, std::string{"t2"},
                 call_handle{caf::actor_cast<call_actor>(p2), 0});
  sched.run();
  {
    auto [ok, p] = find("t1");
    CAF_CHECK(ok);
    CAF_CHECK(caf::actor_cast<caf::actor>(p.actor) == p1);
  }
  {
    auto [ok, p] = find("t3");
    CAF_CHECK(!ok);
    CAF_CHECK(!p);
  }
  caf::anon_send(dir, bidi_close_atom_v, std::string{"t1"});
  sched.run();
  CAF_CHECK(!std::get<0>(find("t1")));
  CAF_CHECK(std::get<0>(find("t2")));
  // A pending request that dies takes its bidi entry with it.
  stop(p2);
  CAF_CHECK(!std::get<0>(find("t2")));
  stop(p1);
}

CAF_TEST(a burst of registrations or disconnects publishes the routes once) {
  // A fleet connecting (or dropping) at once must not rebuild the whole
  // table per runtime: 10,000 runtimes took 13 s to register that way.
  constexpr int n = 50;
  std::vector<caf::actor> conns;
  for (int i = 0; i < n; ++i)
    conns.push_back(spawn_dummy());
  auto published = [before = obs::global().route_publishes.load()]() mutable {
    auto now = obs::global().route_publishes.load();
    auto since = now - before;
    before = now;
    return since;
  };
  for (int i = 0; i < n; ++i) {
    auto id = "r" + std::to_string(i);
    caf::anon_send(dir, register_atom_v, runtime_registration{id, id, info(id), nullptr},
                   as_conn(conns[i]));
  }
  sched.run();
  CAF_CHECK_EQUAL(published(), 1u);
  CAF_CHECK_EQUAL(registered_runtimes.load(), n);
  for (int i = 0; i < n; ++i) {
    auto [ok, conn, id] = route("r" + std::to_string(i));
    CAF_CHECK(ok);
    CAF_CHECK(conn == conns[i]);
  }
  auto recent = route("");
  CAF_CHECK_EQUAL(std::get<2>(recent), "r" + std::to_string(n - 1));
  // One change with nothing behind it publishes at once.
  auto lone = spawn_dummy();
  reg("lone", lone);
  CAF_CHECK_EQUAL(published(), 1u);
  CAF_CHECK(std::get<0>(route("lone")));
  for (auto& c : conns)
    caf::anon_send_exit(c, caf::exit_reason::kill);
  sched.run();
  CAF_CHECK_EQUAL(published(), 1u);
  CAF_CHECK_EQUAL(registered_runtimes.load(), 1);
  CAF_CHECK(!std::get<0>(route("r0")));
  auto last = route(""); // CAF_CHECK_EQUAL binds references: keep the tuple alive
  CAF_CHECK_EQUAL(std::get<2>(last), "lone");
  stop(lone);
}

CAF_TEST(a listing asked in a burst finds its runtimes in the routes) {
  auto c1 = spawn_dummy();
  auto c2 = spawn_dummy();
  caf::anon_send(dir, register_atom_v, runtime_registration{"a", "a", info("a"), nullptr},
                 as_conn(c1));
  auto listing = self->request(dir, caf::infinite, list_atom_v);
  caf::anon_send(dir, register_atom_v, runtime_registration{"b", "b", info("b"), nullptr},
                 as_conn(c2));
  sched.run_once(); // "a" registers; the listing and "b" wait: the routes are held
  CAF_CHECK(!std::get<0>(route("a")));
  sched.run_once(); // the listing names "a": the routes carry it first
  CAF_CHECK(std::get<0>(route("a")));
  CAF_CHECK(!std::get<0>(route("b")));
  sched.run();
  CAF_CHECK(std::get<0>(route("b")));
  std::string listed;
  listing.receive([&](std::string& s) { listed = std::move(s); },
                  [&](caf::error& err) { CAF_FAIL("list failed: " << sys.render(err)); });
  CAF_CHECK_EQUAL(listed, "[" + info("a") + "]");
  stop(c1);
  stop(c2);
}

CAF_TEST(the directory itself is counted and leaves nothing behind) {
  CAF_CHECK_EQUAL(live_delta(actor_kind::runtime_directory), 1);
  auto c = spawn_dummy();
  reg("a", c);
  CAF_CHECK_EQUAL(registered_runtimes.load(), 1);
  stop(dir);
  // Exiting resets the published runtime count.
  CAF_CHECK_EQUAL(registered_runtimes.load(), 0);
  stop(c);
  check_no_leaks();
}

CAF_TEST_FIXTURE_SCOPE_END()

// -- manager_supervisor -------------------------------------------------------

CAF_TEST_FIXTURE_SCOPE(supervisor_tests, actor_fixture)

CAF_TEST(shutdown stops every child and answers after the last one) {
  auto sup = sys.spawn(manager_supervisor, supervisor_config{});
  sched.run();
  auto dir = spawn_directory();
  auto t = make_fake_transport();
  auto conn = spawn_connection(t, dir);
  adopt(sup, dir);
  adopt(sup, conn);
  sched.run();
  CAF_CHECK_EQUAL(live_delta(actor_kind::manager_supervisor), 1);
  CAF_CHECK_EQUAL(live_delta(actor_kind::runtime_directory), 1);
  CAF_CHECK_EQUAL(live_delta(actor_kind::runtime_connection), 1);
  auto [ok] = ask<caf::ok_atom>(sup, shutdown_atom_v);
  (void)ok;
  check_no_leaks();
  // The connection's socket was closed on the way out.
  CAF_CHECK_EQUAL(t->close_calls(), 1);
}

CAF_TEST(shutdown without children answers at once) {
  auto sup = sys.spawn(manager_supervisor, supervisor_config{});
  sched.run();
  ask<caf::ok_atom>(sup, shutdown_atom_v);
  check_no_leaks();
}

CAF_TEST(a child that ends on its own is forgotten) {
  auto sup = sys.spawn(manager_supervisor, supervisor_config{});
  sched.run();
  auto a = spawn_dummy();
  auto dir = spawn_directory();
  adopt(sup, a);
  adopt(sup, dir);
  sched.run();
  stop(a);
  CAF_CHECK_EQUAL(deref<caf::stateful_actor<supervisor_state>>(sup).state.children.size(), 1u);
  ask<caf::ok_atom>(sup, shutdown_atom_v);
  check_no_leaks();
}

CAF_TEST(a child adopted while stopping is stopped too) {
  auto sup = sys.spawn(manager_supervisor, supervisor_config{});
  sched.run();
  auto dir1 = spawn_directory();
  auto dir2 = spawn_directory();
  adopt(sup, dir1);
  sched.run();
  auto hdl = self->request(sup, caf::infinite, shutdown_atom_v);
  adopt(sup, dir2);
  sched.run();
  CAF_REQUIRE(!self->mailbox().empty());
  hdl.receive([](caf::ok_atom) {}, [&](caf::error& err) { CAF_FAIL(sys.render(err)); });
  check_no_leaks();
}

CAF_TEST_FIXTURE_SCOPE_END()

// -- helpers of the manager ----------------------------------------------------

CAF_TEST(read_timeout) {
  using namespace std::chrono_literals;
  caf::timespan out{};
  CAF_CHECK(read_timeout(nullptr, 30s, out));
  CAF_CHECK(out == caf::timespan{30s});
  std::string null_raw = "null";
  CAF_CHECK(read_timeout(&null_raw, 5s, out));
  CAF_CHECK(out == caf::timespan{5s});
  std::string ms = "250";
  CAF_CHECK(read_timeout(&ms, 5s, out));
  CAF_CHECK(out == caf::timespan{250ms});
  std::string frac = "1.5";
  CAF_CHECK(read_timeout(&frac, 5s, out));
  CAF_CHECK(out == caf::timespan{1500us});
  std::string zero = "0";
  CAF_CHECK(read_timeout(&zero, 5s, out));
  CAF_CHECK(out == caf::timespan{0});
  for (std::string bad : {"-1", R"("100")", "true", "{}"}) {
    CAF_MESSAGE("timeoutMs " << bad);
    CAF_CHECK(!read_timeout(&bad, 5s, out));
  }
}

CAF_TEST(errors in the tools servers shape carry the Status and what the Dev UI reads) {
  auto e = manager_errors::tools_error(manager_errors::error_of(
    R"({"code":-32000,"message":"m","data":{"code":7,"message":"no","details":{"stack":"s","traceId":"t"}}})"));
  CAF_CHECK_EQUAL(member(e, {"code"}), "7");
  CAF_CHECK_EQUAL(member_str(e, {"message"}), "no");
  CAF_CHECK_EQUAL(member_str(e, {"stack"}), "s");
  CAF_CHECK_EQUAL(member_str(e, {"details", "traceId"}), "t");
  CAF_CHECK_EQUAL(member_str(e, {"data", "genkitErrorMessage"}), "no");
  CAF_CHECK_EQUAL(member_str(e, {"data", "genkitErrorDetails", "stack"}), "s");
  // A JSON-RPC error without a Status: one from its code and message.
  auto p = manager_errors::tools_error(manager_errors::error_of(R"({"code":-32602,"message":"bad key"})"));
  CAF_CHECK_EQUAL(member(p, {"code"}), "3");
  CAF_CHECK_EQUAL(member_str(p, {"message"}), "bad key");
  CAF_CHECK_EQUAL(member(p, {"stack"}), "<missing>");
  CAF_CHECK_EQUAL(member(p, {"data", "genkitErrorDetails"}), "<missing>");
  // What a peer sent that is not an error object still gives one.
  for (std::string bad : {"garbage", "[]", R"({"data":5,"message":7})",
                          R"({"data":{"code":"x","details":[1]}})"}) {
    CAF_MESSAGE("error object " << bad);
    auto g = manager_errors::tools_error(manager_errors::error_of(bad));
    CAF_CHECK_EQUAL(member(g, {"code"}).find('"'), std::string::npos); // a number
    CAF_CHECK(!member_str(g, {"message"}).empty());
  }
}

CAF_TEST(manager error objects) {
  using namespace std::chrono_literals;
  auto t = manager_errors::timed_out("rt1", "listActions", 1500ms);
  CAF_CHECK_EQUAL(member(t.object, {"code"}), "-32000");
  CAF_CHECK_EQUAL(member_str(t.object, {"message"}),
                  "Request to runtime rt1 timed out after 1500 ms (listActions)");
  CAF_CHECK_EQUAL(member(t.object, {"data", "code"}), "4");
  auto c = manager_errors::connection_closed("rt1", "runAction");
  CAF_CHECK_EQUAL(member_str(c.object, {"message"}),
                  "Runtime rt1 connection closed before the response was received (runAction)");
  CAF_CHECK_EQUAL(member(c.object, {"data", "code"}), "14");
  CAF_CHECK_EQUAL(member(manager_errors::invalid_params("x").object, {"code"}), "-32602");
  CAF_CHECK_EQUAL(member(manager_errors::invalid_params("x").object, {"data"}), "<missing>");
  // Quotes in ids are escaped, not pasted.
  CAF_CHECK_EQUAL(member_str(manager_errors::runtime_not_found("a\"b").object, {"message"}),
                  "Runtime a\"b not found");
  // HTTP statuses per docs/API.md.
  CAF_CHECK_EQUAL(manager_errors::no_runtimes().http, 503);
  CAF_CHECK_EQUAL(manager_errors::runtime_not_found("x").http, 404);
  CAF_CHECK_EQUAL(t.http, 504);
  CAF_CHECK_EQUAL(manager_errors::error_of(R"({"code":-32601,"message":"m"})").http, 404);
  CAF_CHECK_EQUAL(manager_errors::error_of(R"({"code":-32602,"message":"m"})").http, 400);
  CAF_CHECK_EQUAL(manager_errors::error_of(R"({"code":-32700,"message":"m"})").http, 400);
  CAF_CHECK_EQUAL(manager_errors::error_of(R"({"code":-32000,"message":"m"})").http, 500);
  CAF_CHECK_EQUAL(manager_errors::error_of("garbage").http, 500);
  // A peer's numbers that are no Status or JSON-RPC code are not converted
  // to int (undefined); the JSON-RPC code then decides.
  CAF_CHECK_EQUAL(manager_errors::error_of(R"({"code":-32602,"message":"m","data":{"code":1e300}})").http, 400);
  CAF_CHECK_EQUAL(manager_errors::error_of(R"({"code":1e300,"message":"m"})").http, 500);
  CAF_CHECK_EQUAL(manager_errors::error_of(R"({"code":-32000,"message":"m","data":{"code":3.5}})").status, 2);
  // Ours are values made with their fields; classifying their objects, as a
  // peer that gets them does, finds the same.
  for (auto& ours : {t, c, manager_errors::invalid_params("x"), manager_errors::shutting_down(),
                     manager_errors::service_busy("svc", 3),
                     manager_errors::iii_error(wire::iii::code::function_not_found, "f not found"),
                     manager_errors::iii_error_as_genkit(wire::iii::code::timeout, "timed out"),
                     manager_errors::iii_error_as_genkit(wire::iii::code::forbidden, "")}) {
    auto seen = manager_errors::error_of(ours.object);
    CAF_CHECK_EQUAL(seen.status, ours.status);
    CAF_CHECK_EQUAL(seen.http, ours.http);
    CAF_CHECK_EQUAL(seen.message, ours.message);
  }
  // The engine's own iii errors, in Genkit's shape, keep the code they map to.
  CAF_CHECK_EQUAL(manager_errors::iii_error_as_genkit(wire::iii::code::timeout, "t").status, 4);
  CAF_CHECK_EQUAL(manager_errors::iii_error_as_genkit(wire::iii::code::forbidden, "f").http, 403);
  CAF_CHECK_EQUAL(manager_errors::iii_error_as_genkit("thrown", "f").status, 13);
  CAF_CHECK_EQUAL(member_str(manager_errors::iii_error(wire::iii::code::forbidden, "no").object,
                             {"code"}),
                  "FORBIDDEN");
}

// docs/API.md, "Errors": a runtime that disconnects mid-request and a manager
// that shuts down are both 503 (Status 14).
CAF_TEST(http status of manager errors per API.md) {
  auto closed = manager_errors::connection_closed("rt1", "runAction");
  auto down = manager_errors::shutting_down();
  CAF_CHECK_EQUAL(member(closed.object, {"data", "code"}), "14");
  CAF_CHECK_EQUAL(member(down.object, {"data", "code"}), "14");
  CAF_CHECK_EQUAL(member_str(down.object, {"message"}), "Manager is shutting down");
  CAF_CHECK_EQUAL(closed.http, 503);
  CAF_CHECK_EQUAL(down.http, 503);
}
