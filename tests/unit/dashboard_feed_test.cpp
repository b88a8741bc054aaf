#define CAF_SUITE dashboard_feed

#include "test_support.hpp"

#include "actors/doors/ws/dashboard_feed.hpp"
#include "obs/metrics.hpp"

#include <cmath>

using namespace actor_host;
using namespace actor_host::testing;

namespace {

std::string watch(std::string_view topics, int id = 1) {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id)
         + R"(,"method":"watch","params":{"topics":)" + std::string{topics} + "}}";
}

struct feed_fixture : actor_fixture {
  directory_actor dir = spawn_directory();
  caf::actor feed;

  explicit feed_fixture(dashboard_feed_config cfg = {}) {
    feed = sys.spawn(dashboard_feed, std::move(cfg), dir, iii_catalog_actor{});
    sched.run();
  }

  api_session_actor session(const fake_transport_ptr& t) {
    auto d = door(dir);
    d.feed = feed;
    auto s = sys.spawn(api_session, net::transport_ptr{t}, d);
    sched.run();
    return s;
  }

  void reg(const std::string& id, const caf::actor& conn) {
    caf::anon_send(dir, register_atom_v, runtime_registration{id, id, R"({"id":")" + id + R"("})", nullptr},
                   caf::actor_cast<connection_actor>(conn));
  }

  /// The updates among `frames` as (topic, data).
  static std::vector<std::pair<std::string, std::string>>
  updates(const std::vector<std::string>& frames) {
    std::vector<std::pair<std::string, std::string>> out;
    for (auto& f : frames)
      if (member_str(f, {"method"}) == "update")
        out.emplace_back(member_str(f, {"params", "topic"}), member(f, {"params", "data"}));
    return out;
  }

  void finish(std::initializer_list<caf::actor> more = {}) {
    for (auto& a : more)
      stop(a);
    stop(feed);
    stop(dir);
    check_no_leaks();
  }
};

struct small_feed_fixture : feed_fixture {
  static dashboard_feed_config cfg() {
    dashboard_feed_config c;
    c.max_watchers = 1;
    c.history = 3;
    return c;
  }
  small_feed_fixture() : feed_fixture(cfg()) {
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(dashboard_feed_tests, feed_fixture)

CAF_TEST(watch answers first then sends every watched topic then each change) {
  auto t = make_fake_transport();
  auto s = session(t);
  send_frame(s, watch(R"(["runtimes","services"])"));
  auto frames = t->take();
  CAF_REQUIRE_EQUAL(frames.size(), 3u);
  CAF_CHECK_EQUAL(member(frames[0], {"id"}), "1");
  CAF_CHECK_EQUAL(member(frames[0], {"result"}), R"({"topics":["runtimes","services"]})");
  auto u = updates(frames);
  CAF_REQUIRE_EQUAL(u.size(), 2u);
  CAF_CHECK_EQUAL(u[0].first, "runtimes");
  CAF_CHECK_EQUAL(u[0].second, "[]");
  CAF_CHECK_EQUAL(u[1].first, "services");
  CAF_CHECK_EQUAL(u[1].second, "[]");
  // A runtime registers: the listing is pushed, without being asked.
  auto conn = spawn_dummy();
  reg("rt1", conn);
  sched.run();
  u = updates(t->take());
  CAF_REQUIRE_EQUAL(u.size(), 1u);
  CAF_CHECK_EQUAL(u[0].first, "runtimes");
  CAF_CHECK(contains(u[0].second, R"("id":"rt1")"));
  // A service changes state; topics not watched (health) stay silent.
  caf::anon_send(feed, service_atom_v, std::string{"svc"},
                 std::string{R"({"name":"svc","state":"ready"})"});
  caf::anon_send(feed, sample_atom_v);
  sched.run();
  u = updates(t->take());
  CAF_REQUIRE_EQUAL(u.size(), 1u);
  CAF_CHECK_EQUAL(u[0].first, "services");
  CAF_CHECK_EQUAL(u[0].second, R"([{"name":"svc","state":"ready"}])");
  // The runtime leaves: pushed again.
  stop(conn);
  u = updates(t->take());
  CAF_REQUIRE_EQUAL(u.size(), 1u);
  CAF_CHECK_EQUAL(u[0].second, "[]");
  finish({caf::actor_cast<caf::actor>(s)});
}

CAF_TEST(a burst of changes is one fetch and one update) {
  auto t = make_fake_transport();
  auto s = session(t);
  send_frame(s, watch(R"(["runtimes"])"));
  t->clear();
  std::vector<caf::actor> conns{spawn_dummy(), spawn_dummy(), spawn_dummy()};
  // Three registrations before the feed runs: one fetch sees all three,
  // the second (asked for by the later changes) finds nothing new.
  reg("a", conns[0]);
  reg("b", conns[1]);
  reg("c", conns[2]);
  sched.run();
  auto u = updates(t->take());
  CAF_REQUIRE_EQUAL(u.size(), 1u);
  CAF_CHECK(contains(u[0].second, R"("id":"a")"));
  CAF_CHECK(contains(u[0].second, R"("id":"c")"));
  for (auto& c : conns)
    stop(c);
  finish({caf::actor_cast<caf::actor>(s)});
}

// Nobody watching: changes are not fetched and no listing is kept. The
// first watcher gets the listing fetched then, in the usual order.
CAF_TEST(a listing nobody watches is fetched when a watcher comes) {
  auto& st = deref<caf::stateful_actor<dashboard_feed_state>>(feed).state;
  std::vector<caf::actor> conns{spawn_dummy(), spawn_dummy()};
  reg("a", conns[0]);
  reg("b", conns[1]);
  sched.run();
  CAF_CHECK(st.runtimes.stale);
  CAF_CHECK_EQUAL(st.runtimes.json, "[]");
  CAF_CHECK(!st.runtimes.fetching);
  auto t = make_fake_transport();
  auto s = session(t);
  send_frame(s, watch(R"(["services","runtimes"])"));
  auto frames = t->take();
  CAF_REQUIRE_EQUAL(frames.size(), 3u);
  CAF_CHECK_EQUAL(member(frames[0], {"result"}), R"({"topics":["services","runtimes"]})");
  auto u = updates(frames);
  CAF_REQUIRE_EQUAL(u.size(), 2u);
  CAF_CHECK_EQUAL(u[0].first, "runtimes");
  CAF_CHECK(contains(u[0].second, R"("id":"a")"));
  CAF_CHECK(contains(u[0].second, R"("id":"b")"));
  CAF_CHECK_EQUAL(u[1].first, "services");
  CAF_CHECK(!st.runtimes.stale);
  // Watched now: a change is pushed.
  stop(conns[0]);
  u = updates(t->take());
  CAF_REQUIRE_EQUAL(u.size(), 1u);
  CAF_CHECK(!contains(u[0].second, R"("id":"a")"));
  // The watcher goes: the next change drops the listing again.
  stop(s);
  stop(conns[1]);
  CAF_CHECK(st.runtimes.stale);
  CAF_CHECK_EQUAL(st.runtimes.json, "[]");
  finish();
}

CAF_TEST(watch without topics watches every topic) {
  auto t = make_fake_transport();
  auto s = session(t);
  send_frame(s, R"({"jsonrpc":"2.0","id":1,"method":"watch"})");
  auto frames = t->take();
  CAF_REQUIRE_EQUAL(frames.size(), 6u);
  CAF_CHECK_EQUAL(member(frames[0], {"result"}),
                  R"({"topics":["runtimes","workers","services","cluster","health"]})");
  CAF_CHECK_EQUAL(updates(frames).size(), 5u);
  finish({caf::actor_cast<caf::actor>(s)});
}

CAF_TEST(bad topics are invalid params naming the topics) {
  auto t = make_fake_transport();
  auto s = session(t);
  send_frame(s, watch(R"(["runtimes","nope"])"));
  auto f = t->last();
  CAF_CHECK_EQUAL(member(f, {"error", "code"}), "-32602");
  CAF_CHECK_EQUAL(member_str(f, {"error", "message"}),
                  "Invalid params: unknown topic 'nope'; topics are runtimes, workers, services, "
                  "cluster, health");
  send_frame(s, watch(R"("runtimes")", 2));
  CAF_CHECK_EQUAL(member(t->last(), {"error", "code"}), "-32602");
  send_frame(s, watch("[1]", 3));
  CAF_CHECK_EQUAL(member(t->last(), {"error", "code"}), "-32602");
  // Nothing was subscribed: a registration pushes nothing.
  t->clear();
  auto conn = spawn_dummy();
  reg("rt1", conn);
  sched.run();
  CAF_CHECK_EQUAL(t->size(), 0u);
  stop(conn);
  finish({caf::actor_cast<caf::actor>(s)});
}

CAF_TEST(a session that ends stops being a watcher) {
  auto before = obs::global().dashboard_watchers.load();
  auto t = make_fake_transport();
  auto s = session(t);
  send_frame(s, watch(R"(["runtimes"])"));
  // Watching again replaces the topics; still one watcher.
  send_frame(s, watch(R"(["services"])", 2));
  CAF_CHECK_EQUAL(obs::global().dashboard_watchers.load(), before + 1);
  auto& st = deref<caf::stateful_actor<dashboard_feed_state>>(feed).state;
  CAF_CHECK_EQUAL(st.watchers.size(), 1u);
  t->clear();
  auto conn = spawn_dummy();
  reg("rt1", conn);
  sched.run();
  CAF_CHECK_EQUAL(updates(t->take()).size(), 0u); // runtimes no longer watched
  stop(s);
  CAF_CHECK_EQUAL(st.watchers.size(), 0u);
  CAF_CHECK_EQUAL(obs::global().dashboard_watchers.load(), before);
  stop(conn);
  finish();
}

CAF_TEST_FIXTURE_SCOPE_END()

CAF_TEST_FIXTURE_SCOPE(dashboard_feed_limits, small_feed_fixture)

CAF_TEST(watchers over the cap get RESOURCE_EXHAUSTED) {
  auto refused = obs::global().dashboard_watches_refused.load();
  auto t1 = make_fake_transport();
  auto t2 = make_fake_transport("127.0.0.1:50002");
  auto s1 = session(t1);
  auto s2 = session(t2);
  send_frame(s1, watch(R"(["runtimes"])"));
  CAF_CHECK_EQUAL(member(t1->take().front(), {"result"}), R"({"topics":["runtimes"]})");
  send_frame(s2, watch(R"(["runtimes"])"));
  auto f = t2->last();
  CAF_CHECK_EQUAL(member(f, {"error", "data", "code"}), "8");
  CAF_CHECK(contains(member_str(f, {"error", "message"}), "maximum of 1 watchers"));
  CAF_CHECK_EQUAL(obs::global().dashboard_watches_refused.load(), refused + 1);
  // The first one's end frees the place.
  stop(s1);
  t2->clear();
  send_frame(s2, watch(R"(["runtimes"])", 2));
  CAF_CHECK_EQUAL(member(t2->take().front(), {"result"}), R"({"topics":["runtimes"]})");
  finish({caf::actor_cast<caf::actor>(s2)});
}

CAF_TEST(health keeps the last samples only) {
  for (int i = 0; i < 5; ++i)
    caf::anon_send(feed, sample_atom_v);
  sched.run();
  auto t = make_fake_transport();
  auto s = session(t);
  send_frame(s, watch(R"(["health"])"));
  auto u = updates(t->take());
  CAF_REQUIRE_EQUAL(u.size(), 1u);
  auto v = parse_json(u[0].second);
  CAF_CHECK_EQUAL(v.at("reset").as_bool(), true);
  CAF_CHECK_EQUAL(v.at("intervalMs").as_int64(), 2000);
  CAF_CHECK_EQUAL(v.at("samples").as_array().size(), 3u);
  // Each later sample is pushed alone.
  caf::anon_send(feed, sample_atom_v);
  sched.run();
  u = updates(t->take());
  CAF_REQUIRE_EQUAL(u.size(), 1u);
  v = parse_json(u[0].second);
  CAF_CHECK_EQUAL(v.at("reset").as_bool(), false);
  CAF_CHECK_EQUAL(v.at("samples").as_array().size(), 1u);
  finish({caf::actor_cast<caf::actor>(s)});
}

CAF_TEST_FIXTURE_SCOPE_END()

namespace {

// Membership as a cluster board would publish it; the test changes it.
std::shared_ptr<std::string> membership_now = std::make_shared<std::string>(R"({"self":"a","nodes":[]})");

struct cluster_feed_fixture : feed_fixture {
  static dashboard_feed_config cfg() {
    dashboard_feed_config c;
    c.cluster_json = [] { return *membership_now; };
    return c;
  }
  cluster_feed_fixture() : feed_fixture(cfg()) {
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(dashboard_feed_cluster, cluster_feed_fixture)

CAF_TEST(membership is pushed when it changes and only then) {
  auto t = make_fake_transport();
  auto s = session(t);
  send_frame(s, watch(R"(["cluster"])"));
  auto u = updates(t->take());
  CAF_REQUIRE_EQUAL(u.size(), 1u);
  CAF_CHECK_EQUAL(u[0].second, R"({"self":"a","nodes":[]})");
  caf::anon_send(feed, sample_atom_v);
  sched.run();
  CAF_CHECK_EQUAL(t->size(), 0u); // unchanged: nothing
  *membership_now = R"({"self":"a","nodes":[{"name":"b","status":"up"}]})";
  caf::anon_send(feed, sample_atom_v);
  sched.run();
  u = updates(t->take());
  CAF_REQUIRE_EQUAL(u.size(), 1u);
  CAF_CHECK_EQUAL(u[0].first, "cluster");
  CAF_CHECK(contains(u[0].second, R"("status":"up")"));
  // The sampling goes on by itself (a delayed message to itself): a change
  // shows up once the interval has passed, without anyone asking.
  *membership_now = R"({"self":"a","nodes":[{"name":"b","status":"down"}]})";
  sched.run();
  CAF_CHECK_EQUAL(t->size(), 0u);
  sched.trigger_timeouts();
  sched.run();
  u = updates(t->take());
  CAF_REQUIRE_EQUAL(u.size(), 1u);
  CAF_CHECK(contains(u.back().second, R"("status":"down")"));
  finish({caf::actor_cast<caf::actor>(s)});
}

CAF_TEST_FIXTURE_SCOPE_END()

CAF_TEST(a health sample counts the window and its quantiles) {
  obs::latency_histogram::counts c{};
  CAF_CHECK_LESS(obs::histogram_quantile(c, 0.5), 0);
  // 100 observations in (1 ms, 2.5 ms]: the median is halfway through.
  c[4] = 100;
  CAF_CHECK_LESS(std::abs(obs::histogram_quantile(c, 0.5) - 0.00175), 1e-12);
  // One slow call in (5 s, 30 s] moves p99 only a little, p100 to the bucket's top.
  c[13] = 1;
  CAF_CHECK_LESS(obs::histogram_quantile(c, 0.99), 0.0026);
  CAF_CHECK_EQUAL(obs::histogram_quantile(c, 1.0), 30.0);
  // Beyond the last bound: the last bound.
  obs::latency_histogram::counts inf{};
  inf.back() = 3;
  CAF_CHECK_EQUAL(obs::histogram_quantile(inf, 0.5), 30.0);
  obs::actor_snapshot live;
  live.live_by_kind = {{"pending_request", 2}, {"caller_session", 1}};
  live.runtimes_registered = 1;
  obs::latency_histogram::counts fast{};
  fast[0] = 10; // all under 0.1 ms
  auto s = health_sample_json(1700000000000, 10, 2, fast, live);
  CAF_CHECK_EQUAL(s, R"({"t":1700000000000,"calls":10,"errors":2,"p50":0.050,"p99":0.099,)"
                     R"("actors":{"pending_request":2,"caller_session":1},"runtimes":1})");
  CAF_CHECK_EQUAL(member(health_sample_json(0, 0, 0, {}, {}), {"p50"}), "null");
}
