#define CAF_SUITE manager_link

#include "manager_link_fixture.hpp"

using namespace actor_host;
using namespace actor_host::testing;
using namespace std::chrono_literals;

CAF_TEST_FIXTURE_SCOPE(manager_link_tests, link_fixture)

// -- register -------------------------------------------------------------------

CAF_TEST(register is the first frame after connect) {
  CAF_REQUIRE_EQUAL(dials->size(), 1u);
  CAF_CHECK(dials->front() == link);
  auto t = connect();
  CAF_REQUIRE_EQUAL(t->size(), 1u);
  auto f = t->frame(0);
  CAF_CHECK_EQUAL(member_str(f, {"jsonrpc"}), "2.0");
  CAF_CHECK_EQUAL(member_str(f, {"method"}), "register");
  CAF_CHECK_EQUAL(member(f, {"id"}), R"("1")");
  CAF_CHECK_EQUAL(member_str(f, {"params", "id"}), "rt-test");
  CAF_CHECK_EQUAL(member(f, {"params", "pid"}), "4242");
  CAF_CHECK_EQUAL(member_str(f, {"params", "name"}), "test runtime");
  CAF_CHECK(member_str(f, {"params", "genkitVersion"}).rfind("cpp/", 0) == 0);
  CAF_CHECK_EQUAL(member(f, {"params", "reflectionApiSpecVersion"}), "1");
  CAF_CHECK_EQUAL(member(f, {"params", "envs"}), R"(["dev"])");
  // The register reply changes nothing on the wire.
  post(R"({"jsonrpc":"2.0","result":{},"id":"1"})");
  sched.run();
  CAF_CHECK_EQUAL(t->size(), 1u);
  CAF_CHECK_EQUAL(dials->size(), 1u);
}

// -- reconnect --------------------------------------------------------------------

CAF_TEST(reconnect backs off exponentially up to the cap and resets after a connect) {
  CAF_REQUIRE_EQUAL(dials->size(), 1u);
  std::size_t expected = 1;
  for (auto wait : {500ms, 1000ms, 2000ms, 4000ms, 5000ms, 5000ms}) {
    fail();
    CAF_CHECK_EQUAL(dials->size(), expected);
    tick(wait - 1ms);
    CAF_CHECK_EQUAL(dials->size(), expected);
    tick(1ms);
    ++expected;
    CAF_MESSAGE("waited " << wait.count() << " ms");
    CAF_CHECK_EQUAL(dials->size(), expected);
  }
  auto t1 = connect();
  CAF_REQUIRE_EQUAL(t1->size(), 1u);
  CAF_CHECK_EQUAL(member(t1->frame(0), {"id"}), R"("1")");
  closed();
  CAF_CHECK_EQUAL(dials->size(), expected);
  tick(499ms);
  CAF_CHECK_EQUAL(dials->size(), expected);
  tick(1ms);
  CAF_CHECK_EQUAL(dials->size(), expected + 1);
  CAF_CHECK(dials->back() == link);
  auto t2 = connect();
  CAF_CHECK_EQUAL(t1->size(), 1u);
  CAF_REQUIRE_EQUAL(t2->size(), 1u);
  CAF_CHECK_EQUAL(member_str(t2->frame(0), {"method"}), "register");
  CAF_CHECK_EQUAL(member(t2->frame(0), {"id"}), R"("2")");
}

CAF_TEST(with several managers a drop or a failed dial goes to the next at once) {
  // A link of its own, with three managers.
  caf::anon_send_exit(link, caf::exit_reason::kill);
  sched.run();
  link_options opts;
  opts.runtime_id = "rt-failover";
  opts.name = "failover runtime";
  opts.pid = 4245;
  opts.manager_urls = {"ws://a:3200", "ws://b:3200", "ws://c:3200"};
  auto tried = std::make_shared<std::vector<std::size_t>>();
  auto urls = opts.manager_urls;
  link = sys.spawn(manager_link, std::move(opts), catalog,
                   [tried, urls](const caf::actor&, const std::string& url) {
                     tried->push_back(std::find(urls.begin(), urls.end(), url) - urls.begin());
                   });
  sched.run();
  using tries = std::vector<std::size_t>;
  CAF_CHECK_EQUAL(*tried, tries({0}));
  // a refuses: b at once; b registers.
  fail();
  CAF_CHECK_EQUAL(*tried, tries({0, 1}));
  auto t1 = connect();
  CAF_REQUIRE_EQUAL(t1->size(), 1u);
  CAF_CHECK_EQUAL(member_str(t1->frame(0), {"params", "id"}), "rt-failover");
  // b's link drops (its node died): c at once, no backoff; the same id.
  closed();
  CAF_CHECK_EQUAL(*tried, tries({0, 1, 2}));
  auto t2 = connect();
  CAF_REQUIRE_EQUAL(t2->size(), 1u);
  CAF_CHECK_EQUAL(member_str(t2->frame(0), {"method"}), "register");
  CAF_CHECK_EQUAL(member_str(t2->frame(0), {"params", "id"}), "rt-failover");
  // c drops and nobody answers: a, b at once, then c again only after the
  // backoff (500 ms), and the next round after twice that.
  closed();
  fail();
  CAF_CHECK_EQUAL(*tried, tries({0, 1, 2, 0, 1}));
  fail();
  CAF_CHECK_EQUAL(tried->size(), 5u);
  tick(499ms);
  CAF_CHECK_EQUAL(tried->size(), 5u);
  tick(1ms);
  CAF_CHECK_EQUAL(*tried, tries({0, 1, 2, 0, 1, 2}));
  fail();
  fail();
  fail();
  CAF_CHECK_EQUAL(*tried, tries({0, 1, 2, 0, 1, 2, 0, 1}));
  tick(999ms);
  CAF_CHECK_EQUAL(tried->size(), 8u);
  tick(1ms);
  CAF_CHECK_EQUAL(tried->size(), 9u);
}

CAF_TEST(the managerUrls of a register answer join the list with the token of the manager that answered) {
  caf::anon_send_exit(link, caf::exit_reason::kill);
  sched.run();
  link_options opts;
  opts.runtime_id = "rt-learner";
  opts.name = "learner";
  opts.pid = 4246;
  opts.manager_urls = {net::url_with_token("ws://a:3200", "s3cret")};
  auto tried = std::make_shared<std::vector<std::string>>();
  link = sys.spawn(manager_link, std::move(opts), catalog,
                   [tried](const caf::actor&, const std::string& url) { tried->push_back(url); });
  sched.run();
  auto answer = [&](const fake_transport_ptr& t, const std::string& result) {
    auto id = member(t->frame(0), {"id"});
    post(R"({"jsonrpc":"2.0","id":)" + id + R"(,"result":)" + result + "}");
    sched.run();
  };
  // Not all ws:// URLs: the whole list is ignored.
  auto t1 = connect();
  answer(t1, R"({"managerUrls":["ws://b:3200","http://evil:80"]})");
  CAF_CHECK_EQUAL(link_state().opts.manager_urls.size(), 1u);
  // Control characters (a forged log line) are refused.
  closed();
  tick(500ms);
  auto t1b = connect();
  answer(t1b, R"({"managerUrls":["ws://b:3200/x\ninjected"]})");
  CAF_CHECK_EQUAL(link_state().opts.manager_urls.size(), 1u);
  // A URL with its own query (a token of someone else's) is refused too.
  closed();
  tick(500ms);
  auto t2 = connect();
  answer(t2, R"({"managerUrls":["ws://b:3200/?token=x"]})");
  CAF_CHECK_EQUAL(link_state().opts.manager_urls.size(), 1u);
  closed();
  tick(500ms);
  auto t3 = connect();
  // The one that answered (a) is known already; b and c are new.
  answer(t3, R"({"telemetryServerUrl":"http://a:4100/t","managerUrls":["ws://b:3200","ws://a:3200","ws://c:3200"]})");
  using urls = std::vector<std::string>;
  CAF_CHECK_EQUAL(link_state().opts.manager_urls,
                  urls({net::url_with_token("ws://a:3200", "s3cret"),
                        net::url_with_token("ws://b:3200", "s3cret"),
                        net::url_with_token("ws://c:3200", "s3cret")}));
  // a drops: b next, at once, with the token.
  tried->clear();
  closed();
  CAF_CHECK_EQUAL(*tried, urls({net::url_with_token("ws://b:3200", "s3cret")}));
}

CAF_TEST(a manager that answers no ping within the liveness interval is left for the next) {
  caf::anon_send_exit(link, caf::exit_reason::kill);
  sched.run();
  link_options opts;
  opts.runtime_id = "rt-liveness";
  opts.name = "liveness";
  opts.pid = 4247;
  opts.manager_urls = {"ws://a:3200", "ws://b:3200"};
  opts.liveness_interval = 3s;
  auto tried = std::make_shared<std::vector<std::string>>();
  link = sys.spawn(manager_link, std::move(opts), catalog,
                   [tried](const caf::actor&, const std::string& url) { tried->push_back(url); });
  sched.run();
  auto t = connect();
  // Answered pings keep the link.
  tick(3s);
  CAF_CHECK_EQUAL(t->pings(), 1);
  t->answer_pings();
  sched.run();
  tick(3s);
  CAF_CHECK_EQUAL(t->pings(), 2);
  CAF_CHECK_EQUAL(t->close_calls(), 0);
  // The next goes unanswered: the link is dropped when the one after is due.
  tick(3s);
  CAF_CHECK_EQUAL(t->pings(), 2);
  CAF_CHECK_EQUAL(t->close_calls(), 1);
  closed("dropped");
  using urls = std::vector<std::string>;
  CAF_CHECK_EQUAL(*tried, urls({"ws://a:3200", "ws://b:3200"}));
  // The old link's probes are over: the new one starts its own.
  auto t2 = connect();
  tick(3s);
  CAF_CHECK_EQUAL(t2->pings(), 1);
  CAF_CHECK_EQUAL(t->pings(), 2);
}

// -- requests ---------------------------------------------------------------------

CAF_TEST(listActions listValues and unknown methods) {
  auto t = connect_registered();
  post(R"({"jsonrpc":"2.0","method":"listActions","id":"7"})");
  sched.run();
  CAF_REQUIRE_EQUAL(t->size(), 1u);
  auto f = t->frame(0);
  CAF_CHECK_EQUAL(member(f, {"id"}), R"("7")");
  CAF_CHECK_EQUAL(member_str(f, {"result", "actions", "/flow/echo", "key"}), "/flow/echo");
  CAF_CHECK_EQUAL(member_str(f, {"result", "actions", "/flow/echo", "name"}), "echo");
  CAF_CHECK_EQUAL(member_str(f, {"result", "actions", "/flow/echo", "description"}),
                  "returns its input");
  CAF_CHECK_NOT_EQUAL(member(f, {"result", "actions", "/flow/collect"}), "<missing>");
  t->clear();
  post(R"({"jsonrpc":"2.0","method":"noSuchMethod","id":8})");
  sched.run();
  CAF_REQUIRE_EQUAL(t->size(), 1u);
  CAF_CHECK_EQUAL(member(t->frame(0), {"id"}), "8");
  CAF_CHECK_EQUAL(member(t->frame(0), {"error", "code"}), "-32601");
  t->clear();
  post(R"({"jsonrpc":"2.0","method":"listValues","params":{"type":"prompts"},"id":"9"})");
  sched.run();
  CAF_REQUIRE_EQUAL(t->size(), 1u);
  CAF_CHECK_EQUAL(member(t->frame(0), {"id"}), R"("9")");
  CAF_CHECK_EQUAL(member(t->frame(0), {"error", "code"}), "-32602");
  CAF_CHECK(contains(member_str(t->frame(0), {"error", "message"}), "is not supported"));
}

CAF_TEST(cancelAction without a known trace id) {
  auto t = connect_registered();
  post(R"({"jsonrpc":"2.0","method":"cancelAction","params":{"traceId":"nope"},"id":"3"})");
  sched.run();
  CAF_REQUIRE_EQUAL(t->size(), 1u);
  CAF_CHECK_EQUAL(member(t->frame(0), {"id"}), R"("3")");
  CAF_CHECK_EQUAL(member(t->frame(0), {"error", "code"}), "-32602");
  CAF_CHECK_EQUAL(member_str(t->frame(0), {"error", "message"}),
                  "Action not found or already completed");
  t->clear();
  post(R"({"jsonrpc":"2.0","method":"cancelAction","params":{},"id":"4"})");
  sched.run();
  CAF_REQUIRE_EQUAL(t->size(), 1u);
  CAF_CHECK_EQUAL(member(t->frame(0), {"id"}), R"("4")");
  CAF_CHECK_EQUAL(member(t->frame(0), {"error", "code"}), "-32602");
  CAF_CHECK_EQUAL(member_str(t->frame(0), {"error", "message"}), "traceId is required");
}

CAF_TEST_FIXTURE_SCOPE_END()
