#define CAF_SUITE span_exporter

#include "test_support.hpp"

#include "actors/common/span_exporter.hpp"
#include "traces/run_span.hpp"
#include "traces/trace_store.hpp"

// The runtime's spans (traces/run_span.*) and their exporter
// (actors/runtime/span_exporter.*): bounded, never retried, the
// environment's telemetry server pinned.

using namespace actor_host;
using namespace actor_host::testing;

namespace {

/// The POSTs the exporter made, each answered when the test says so.
struct recorder {
  struct call {
    std::string url;
    std::string body;
    std::function<void(net::post_outcome)> done;
  };
  std::vector<call> calls;

  span_poster poster() {
    return [this](const std::string& url, std::string body,
                  std::function<void(net::post_outcome)> done) {
      calls.push_back({url, std::move(body), std::move(done)});
    };
  }
};

traces::run_span sample(bool ok) {
  traces::run_span s;
  s.trace_id = std::string(32, 'a');
  s.span_id = std::string(16, 'a');
  s.action_type = "flow";
  s.name = "echo";
  s.input = R"({"q":"\"x\""})";
  s.output = ok ? R"("y")" : "";
  s.ok = ok;
  s.error_message = ok ? "" : "it broke";
  s.start_ms = 1000;
  s.end_ms = 1500;
  return s;
}

} // namespace

CAF_TEST(a run span is a TraceData document with the attributes Genkit tools read) {
  auto json = traces::trace_data_json(sample(true));
  CAF_CHECK_EQUAL(traces::check_trace_data(json), "");
  CAF_CHECK_EQUAL(member_str(json, {"spans", std::string(16, 'a'), "attributes", "genkit:name"}),
                  "echo");
  CAF_CHECK_EQUAL(
    member_str(json, {"spans", std::string(16, 'a'), "attributes", "genkit:path"}),
    "/{echo,t:action,s:flow}");
  CAF_CHECK_EQUAL(
    member_str(json, {"spans", std::string(16, 'a'), "attributes", "genkit:input"}),
    R"({"q":"\"x\""})");
  CAF_CHECK_EQUAL(member_str(json, {"displayName"}), "echo");
  auto failed = traces::trace_data_json(sample(false));
  CAF_CHECK_EQUAL(traces::check_trace_data(failed), "");
  CAF_CHECK_EQUAL(
    member_str(failed, {"spans", std::string(16, 'a'), "attributes", "genkit:state"}), "error");
  CAF_CHECK_EQUAL(member_str(failed, {"spans", std::string(16, 'a'), "status", "message"}),
                  "it broke");
}

CAF_TEST_FIXTURE_SCOPE(span_exporter_tests, actor_fixture)

CAF_TEST(spans go to the telemetry server with at most max_in_flight posts and a bounded queue) {
  recorder rec;
  auto exporter = sys.spawn(span_exporter, std::string{}, rec.poster(),
                            span_exporter_options{3, 2});
  sched.run();
  // No server yet: dropped quietly.
  caf::anon_send(exporter, span_atom_v, std::string{"{}"});
  sched.run();
  CAF_CHECK(rec.calls.empty());
  // The manager's register reply names one.
  caf::anon_send(exporter, span_target_atom_v, std::string{"http://127.0.0.1:9"});
  for (int i = 0; i < 7; ++i)
    caf::anon_send(exporter, span_atom_v, "span-" + std::to_string(i));
  sched.run();
  // Two in flight, three waiting, two dropped.
  CAF_REQUIRE_EQUAL(rec.calls.size(), 2u);
  CAF_CHECK_EQUAL(rec.calls[0].url, "http://127.0.0.1:9/api/traces");
  CAF_CHECK_EQUAL(rec.calls[0].body, "span-0");
  auto& st = deref<caf::stateful_actor<span_exporter_state>>(exporter).state;
  CAF_CHECK_EQUAL(st.queued.size(), 3u);
  CAF_CHECK_EQUAL(st.dropped, 2u);
  // One succeeds, one fails: each frees a slot for the next.
  rec.calls[0].done({200, {}});
  rec.calls[1].done({0, "cannot connect"});
  sched.run();
  CAF_CHECK_EQUAL(rec.calls.size(), 4u);
  CAF_CHECK_EQUAL(rec.calls[2].body, "span-2");
  CAF_CHECK_EQUAL(st.sent, 1u);
  CAF_CHECK_EQUAL(st.failed, 1u);
  for (std::size_t i = 2; i < 4; ++i)
    rec.calls[i].done({200, {}});
  sched.run();
  CAF_CHECK_EQUAL(rec.calls.size(), 5u);
  rec.calls[4].done({500, {}});
  sched.run();
  CAF_CHECK_EQUAL(st.queued.size(), 0u);
  CAF_CHECK_EQUAL(st.in_flight, 0u);
  CAF_CHECK_EQUAL(st.failed, 2u);
  stop(exporter);
}

CAF_TEST(a telemetry server from the environment is not replaced by what peers say) {
  recorder rec;
  auto exporter = sys.spawn(span_exporter, std::string{"http://env:1"}, rec.poster(),
                            span_exporter_options{});
  sched.run();
  caf::anon_send(exporter, span_target_atom_v, std::string{"http://manager:2"});
  caf::anon_send(exporter, span_atom_v, std::string{"s"});
  sched.run();
  CAF_REQUIRE_EQUAL(rec.calls.size(), 1u);
  CAF_CHECK_EQUAL(rec.calls[0].url, "http://env:1/api/traces");
  rec.calls[0].done({200, {}});
  sched.run();
  stop(exporter);
}

CAF_TEST_FIXTURE_SCOPE_END()
