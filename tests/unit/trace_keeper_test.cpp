#define CAF_SUITE trace_keeper

#include "test_support.hpp"

#include "actors/tracing/trace_keeper.hpp"
#include "obs/metrics.hpp"
#include "traces/trace_store.hpp"

// The manager's own span of a routed run: stored under the run's root span
// once the runtime's spans are in (before or after it), or as the trace's
// root when none comes within route_span_wait.

using namespace actor_host;
using namespace actor_host::testing;

namespace {

constexpr auto trace_t = "00112233445566778899aabbccddeeff";

std::string root_doc() {
  return std::string{R"({"traceId":")"} + trace_t
         + R"(","displayName":"echo","spans":{"aaaaaaaaaaaaaaaa":{"spanId":"aaaaaaaaaaaaaaaa","traceId":")" + trace_t
         + R"(","startTime":1700000000000,"endTime":1700000000100,"attributes":{"genkit:name":"echo"},"displayName":"echo","instrumentationLibrary":{"name":"genkit-tracer","version":"v1"},"spanKind":"INTERNAL"}}})";
}

traces::run_span route_span() {
  traces::run_span s;
  s.trace_id = trace_t;
  s.span_id = "bbbbbbbbbbbbbbbb";
  s.kind = "actor-host";
  s.action_type = "route";
  s.name = "actor-host rt";
  s.start_ms = 1700000000000;
  s.end_ms = 1700000000200;
  s.attributes = {{"actor-host:runtime", "rt"}, {"actor-host:node", "a"}};
  return s;
}

struct fixture : actor_fixture {
  caf::actor keeper;
  fixture() {
    std::string error;
    std::shared_ptr<traces::trace_store> store = traces::trace_store::open(":memory:", {}, error);
    keeper = sys.spawn(trace_keeper, store, caf::actor{});
    sched.run();
  }
  ~fixture() {
    stop(keeper);
  }
  std::string load() {
    auto [found, doc] = ask<bool, std::string>(keeper, trace_get_atom_v, std::string{trace_t});
    return found ? doc : "<none>";
  }
  // Posts `doc` as an exporter does; the answer comes once it is committed.
  std::string post(std::string doc) {
    auto hdl = self->request(keeper, caf::infinite, trace_save_atom_v, std::move(doc));
    sched.run();
    advance_time(incoming_window);
    sched.run();
    std::string result = "<no answer>";
    if (!self->mailbox().empty())
      hdl.receive([&](std::string& err) { result = std::move(err); },
                  [&](caf::error& err) { result = sys.render(err); });
    return result;
  }
  void save_root() {
    CAF_CHECK_EQUAL(post(root_doc()), "");
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(trace_keeper_tests, fixture)

CAF_TEST(a route span after the root is stored under it) {
  save_root();
  caf::anon_send(keeper, route_span_atom_v, route_span());
  sched.run();
  auto doc = load();
  CAF_CHECK_EQUAL(member_str(doc, {"spans", "bbbbbbbbbbbbbbbb", "parentSpanId"}), "aaaaaaaaaaaaaaaa");
  CAF_CHECK_EQUAL(member_str(doc, {"spans", "bbbbbbbbbbbbbbbb", "attributes", "actor-host:node"}), "a");
  CAF_CHECK_EQUAL(member_str(doc, {"displayName"}), "echo");
}

CAF_TEST(a route span before the root waits for it) {
  caf::anon_send(keeper, route_span_atom_v, route_span());
  sched.run();
  CAF_CHECK_EQUAL(load(), "<none>");
  save_root();
  auto doc = load();
  CAF_CHECK_EQUAL(member_str(doc, {"spans", "bbbbbbbbbbbbbbbb", "parentSpanId"}), "aaaaaaaaaaaaaaaa");
  // Only one root: the trace keeps the runtime's name.
  CAF_CHECK_EQUAL(member_str(doc, {"displayName"}), "echo");
  CAF_CHECK_EQUAL(member(doc, {"spans", "bbbbbbbbbbbbbbbb", "attributes", "genkit:isRoot"}), "<missing>");
}

CAF_TEST(a route span whose root never comes becomes the root after the wait) {
  caf::anon_send(keeper, route_span_atom_v, route_span());
  sched.run();
  advance_time(route_span_wait - std::chrono::seconds(1));
  CAF_CHECK_EQUAL(load(), "<none>");
  advance_time(std::chrono::seconds(1));
  auto doc = load();
  CAF_CHECK_EQUAL(member(doc, {"spans", "bbbbbbbbbbbbbbbb", "parentSpanId"}), "<missing>");
  CAF_CHECK_EQUAL(member(doc, {"spans", "bbbbbbbbbbbbbbbb", "attributes", "genkit:isRoot"}), "true");
  CAF_CHECK_EQUAL(member_str(doc, {"displayName"}), "actor-host rt");
}

CAF_TEST(a route span stored as the root takes the later spans of its trace) {
  caf::anon_send(keeper, route_span_atom_v, route_span());
  sched.run();
  advance_time(route_span_wait);
  auto second = route_span();
  second.span_id = "cccccccccccccccc";
  caf::anon_send(keeper, route_span_atom_v, second);
  sched.run();
  CAF_CHECK_EQUAL(member_str(load(), {"spans", "cccccccccccccccc", "parentSpanId"}), "bbbbbbbbbbbbbbbb");
}

CAF_TEST(the roots the keeper remembers are capped) {
  save_root();
  // max_recent_roots later traces push the first one's root out of memory.
  for (std::size_t i = 0; i < max_recent_roots; ++i) {
    auto id = std::to_string(i);
    id = std::string(32 - id.size(), 'f') + id;
    auto doc = root_doc();
    for (auto at = doc.find(trace_t); at != std::string::npos; at = doc.find(trace_t))
      doc.replace(at, 32, id);
    caf::anon_send(keeper, trace_save_atom_v, std::move(doc));
  }
  sched.run();
  caf::anon_send(keeper, route_span_atom_v, route_span());
  sched.run();
  // Not attached at once: it waits, then becomes a second root of the trace.
  CAF_CHECK_EQUAL(member(load(), {"spans", "bbbbbbbbbbbbbbbb"}), "<missing>");
  advance_time(route_span_wait);
  CAF_CHECK_EQUAL(member(load(), {"spans", "bbbbbbbbbbbbbbbb", "parentSpanId"}), "<missing>");
}

// A store at its size limit drops its oldest traces as the keeper writes,
// and its age limit at the keeper's prune: both are counted in
// actor_host_traces_dropped_total as they happen (the log line comes once
// a minute).
CAF_TEST(the traces retention drops are counted in the metrics) {
  traces::retention r;
  r.max_age = std::chrono::hours(1);
  r.max_bytes = 4000; // a few route spans' worth
  std::string error;
  std::shared_ptr<traces::trace_store> store = traces::trace_store::open(":memory:", r, error);
  CAF_REQUIRE(store != nullptr);
  auto small = sys.spawn(trace_keeper, store, caf::actor{});
  sched.run();
  auto& dropped = obs::global().traces_dropped;
  const auto before = dropped.load();
  // Ten batches of four: a batch keeps what it writes, the older go.
  constexpr std::size_t n = 40;
  for (std::size_t i = 0; i < n; ++i) {
    auto s = route_span();
    auto id = std::to_string(i);
    s.trace_id = std::string(32 - id.size(), '0') + id;
    caf::anon_send(small, route_span_atom_v, std::move(s));
    sched.run();
    if (i % 4 == 3) {
      advance_time(route_span_wait); // no roots came: stored as their own
      sched.run();
    }
  }
  const auto by_size = dropped.load() - before;
  CAF_CHECK_GREATER(by_size, 0u);
  CAF_CHECK_EQUAL(by_size + store->trace_count(), n);
  stop(small);
  // The age limit, at the keeper's prune: traces last written two hours
  // ago (the store's clock is the wall clock's).
  r.max_bytes = std::uint64_t{1} << 30;
  auto aged = traces::trace_store::open(":memory:", r, error);
  CAF_REQUIRE(aged != nullptr);
  const auto two_hours_ago = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch()
                               - std::chrono::hours(2))
                               .count();
  CAF_REQUIRE_EQUAL(aged->save_spans({route_span()}, two_hours_ago), "");
  small = sys.spawn(trace_keeper, std::shared_ptr<traces::trace_store>{std::move(aged)},
                    caf::actor{});
  sched.run(); // its first prune, at start
  CAF_CHECK_EQUAL(dropped.load() - before, by_size + 1);
  stop(small);
}

CAF_TEST(posted documents are committed together and each poster hears its own outcome) {
  auto good = self->request(keeper, caf::infinite, trace_save_atom_v, root_doc());
  auto bad = self->request(keeper, caf::infinite, trace_save_atom_v, std::string{R"({"traceId":"x"})"});
  sched.run();
  // Nothing is answered (or stored) before the commit window ends.
  CAF_CHECK(self->mailbox().empty());
  advance_time(incoming_window);
  sched.run();
  good.receive([](std::string& err) { CAF_CHECK_EQUAL(err, ""); },
               [](caf::error&) { CAF_FAIL("no answer"); });
  bad.receive([](std::string& err) { CAF_CHECK_EQUAL(err, "spans must be an object of SpanData by span id"); },
              [](caf::error&) { CAF_FAIL("no answer"); });
  CAF_CHECK_EQUAL(member_str(load(), {"displayName"}), "echo");
  // A full batch is committed without waiting for the window.
  const std::string other = "0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f";
  auto doc = root_doc();
  for (auto at = doc.find(trace_t); at != std::string::npos; at = doc.find(trace_t))
    doc.replace(at, 32, other);
  for (std::size_t i = 0; i < max_incoming_docs - 1; ++i)
    caf::anon_send(keeper, trace_save_atom_v, doc);
  sched.run();
  auto [before, unused1] = ask<bool, std::string>(keeper, trace_get_atom_v, other);
  CAF_CHECK(!before);
  caf::anon_send(keeper, trace_save_atom_v, doc);
  sched.run();
  auto [after, unused2] = ask<bool, std::string>(keeper, trace_get_atom_v, other);
  CAF_CHECK(after);
}

CAF_TEST(route spans reach the keeper in batches) {
  caf::actor batcher;
  auto queue = make_route_span_queue(keeper, [&](auto fun, route_span_queue_ptr q) {
    return batcher = sys.spawn(fun, std::move(q));
  });
  sched.run();
  save_root();
  auto push = [&] {
    queue->push(trace_t, "rt", "a", "/flow/x", true, "", "", 1700000000000, 1700000000200);
  };
  // The spans stored under the root, other than the root itself.
  auto attached = [&] {
    std::size_t n = 0;
    auto doc = parse_json(load());
    for (auto& [id, span] : doc.at("spans").as_object())
      if (auto* p = span.as_object().if_contains("parentSpanId"))
        n += p->as_string() == "aaaaaaaaaaaaaaaa";
    return n;
  };
  push();
  sched.run();
  // Held for the batch window, then stored under the root at once.
  CAF_CHECK_EQUAL(attached(), 0u);
  advance_time(route_batch_window);
  sched.run(); // the batcher's window ends, then the keeper stores the batch
  CAF_CHECK_EQUAL(attached(), 1u);
  // A full batch goes without waiting for the window.
  for (std::size_t i = 0; i < route_batch_max; ++i)
    push();
  sched.run();
  CAF_CHECK_EQUAL(attached(), 1u + route_batch_max);
  stop(batcher);
}

CAF_TEST(a queued route span keeps its fields) {
  caf::actor batcher;
  auto queue = make_route_span_queue(keeper, [&](auto fun, route_span_queue_ptr q) {
    return batcher = sys.spawn(fun, std::move(q));
  });
  queue->push(trace_t, "rt", "", "/flow/x", false, "DEADLINE_EXCEEDED", "took too long",
              1700000000000, 1700000000200);
  advance_time(route_batch_window);
  sched.run();
  advance_time(route_span_wait);
  auto doc = parse_json(load());
  auto& spans = doc.at("spans").as_object();
  CAF_REQUIRE_EQUAL(spans.size(), 1u);
  auto& span = spans.begin()->value().as_object();
  CAF_CHECK_EQUAL(span.at("spanId").as_string().size(), 16u);
  CAF_CHECK_EQUAL(span.at("displayName").as_string(), "actor-host rt");
  CAF_CHECK_EQUAL(span.at("startTime").as_int64(), 1700000000000);
  CAF_CHECK_EQUAL(span.at("endTime").as_int64(), 1700000000200);
  CAF_CHECK_EQUAL(span.at("status").at("message").as_string(), "DEADLINE_EXCEEDED: took too long");
  auto& attrs = span.at("attributes").as_object();
  CAF_CHECK_EQUAL(attrs.at("actor-host:runtime").as_string(), "rt");
  CAF_CHECK_EQUAL(attrs.at("actor-host:action").as_string(), "/flow/x");
  CAF_CHECK(!attrs.contains("actor-host:node"));
  CAF_CHECK_EQUAL(attrs.at("genkit:state").as_string(), "error");
  stop(batcher);
}

CAF_TEST(with a reader the keeper hands it its listings and loads) {
  // The reader's store has a trace the keeper's has not: what the keeper
  // answers comes from the reader.
  std::string error;
  std::shared_ptr<traces::trace_store> other = traces::trace_store::open(":memory:", {}, error);
  CAF_REQUIRE(other);
  CAF_REQUIRE_EQUAL(other->save(root_doc(), 1700000000000), "");
  CAF_CHECK_EQUAL(load(), "<none>");
  auto reader = sys.spawn(trace_reader, other);
  sched.run();
  caf::anon_send(keeper, trace_reader_atom_v, reader);
  sched.run();
  CAF_CHECK(load().find(trace_t) != std::string::npos);
  auto list = std::get<0>(ask<std::string>(keeper, trace_list_atom_v, std::uint64_t{10},
                                          std::uint64_t{0}, std::string{}));
  CAF_CHECK(list.find(trace_t) != std::string::npos);
  // Stores still go to the keeper's own.
  CAF_CHECK_EQUAL(post(root_doc()), "");
  stop(reader);
}

CAF_TEST_FIXTURE_SCOPE_END()
