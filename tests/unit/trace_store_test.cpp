#define CAF_SUITE trace_store

#include "test_support.hpp"

#include "traces/otlp.hpp"
#include "traces/trace_filter.hpp"
#include "traces/trace_store.hpp"

#include <boost/json.hpp>

#include <filesystem>
#include <unistd.h>

using namespace actor_host;
using namespace actor_host::testing;
using namespace std::chrono_literals;

namespace {

constexpr auto trace_a = "0123456789abcdef0123456789abcdef";

/// A SpanData as Genkit's exporter sends it.
std::string span(std::string_view id, std::string_view parent, std::int64_t end, std::string_view name = "s",
                 std::string_view trace = trace_a) {
  std::string s = R"({"spanId":")" + std::string{id} + R"(","traceId":")" + std::string{trace}
                  + "\"";
  if (!parent.empty())
    s += R"(,"parentSpanId":")" + std::string{parent} + "\"";
  s += R"(,"startTime":1700000000000,"endTime":)" + std::to_string(end)
       + R"(,"attributes":{"genkit:name":")" + std::string{name}
       + R"("},"displayName":")" + std::string{name}
       + R"(","instrumentationLibrary":{"name":"genkit-tracer","version":"v1"},"spanKind":"INTERNAL"})";
  return s;
}

std::string doc(std::string_view spans, std::string_view extra = "",
                std::string_view trace = trace_a) {
  return R"({"traceId":")" + std::string{trace} + "\"" + std::string{extra} + R"(,"spans":{)"
         + std::string{spans} + "}}";
}

std::string entry(std::string_view id, const std::string& span_json) {
  return "\"" + std::string{id} + "\":" + span_json;
}

struct store_fixture {
  std::string error;
  std::unique_ptr<traces::trace_store> store = traces::trace_store::open(":memory:", {}, error);

  store_fixture() {
    CAF_REQUIRE(store != nullptr);
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(trace_store_tests, store_fixture)

CAF_TEST(spans of one trace merge and an ended span is never reopened) {
  // The root starts (endTime 0), a child ends, then the root ends.
  CAF_CHECK_EQUAL(store->save(doc(entry("root", span("root", "", 0, "flow"))), 1), "");
  CAF_CHECK_EQUAL(store->save(doc(entry("c1", span("c1", "root", 1700000000005))), 2), "");
  CAF_CHECK_EQUAL(store->save(doc(entry("root", span("root", "", 1700000000010, "flow")),
                                  R"(,"displayName":"flow","startTime":1700000000000,)"
                                  R"("endTime":1700000000010)"),
                              3),
                  "");
  // A late "start" of the root arrives after its end: ignored.
  CAF_CHECK_EQUAL(store->save(doc(entry("root", span("root", "", 0, "flow"))), 4), "");
  auto t = store->load(trace_a);
  CAF_REQUIRE(t.has_value());
  CAF_CHECK_EQUAL(member(*t, {"traceId"}), std::string{"\""} + trace_a + "\"");
  CAF_CHECK_EQUAL(member(*t, {"displayName"}), R"("flow")");
  CAF_CHECK_EQUAL(member(*t, {"startTime"}), "1700000000000");
  CAF_CHECK_EQUAL(member(*t, {"endTime"}), "1700000000010");
  CAF_CHECK_EQUAL(member(*t, {"spans", "root", "endTime"}), "1700000000010");
  CAF_CHECK_EQUAL(member(*t, {"spans", "c1", "parentSpanId"}), R"("root")");
  CAF_CHECK_EQUAL(member(*t, {"spans", "c1", "attributes", "genkit:name"}), R"("s")");
  // A batch without trace-level fields keeps those stored.
  CAF_CHECK_EQUAL(store->save(doc(entry("c2", span("c2", "root", 1700000000007))), 5), "");
  CAF_CHECK_EQUAL(member(*store->load(trace_a), {"displayName"}), R"("flow")");
  CAF_CHECK(!store->load("ffffffffffffffffffffffffffffffff").has_value());
  CAF_CHECK_EQUAL(store->trace_count(), 1u);
}

CAF_TEST(list shows rooted traces newest first a page at a time) {
  for (int i = 0; i < 5; ++i) {
    auto id = std::string(31, 'a') + std::to_string(i);
    CAF_CHECK_EQUAL(store->save(doc(entry("r", span("r", "", 10, "flow", id)), "", id), 100 + i),
                    "");
  }
  // A trace whose root has not arrived is not listed yet.
  auto orphan = std::string(32, 'b');
  CAF_CHECK_EQUAL(store->save(doc(entry("c", span("c", "r", 10, "x", orphan)), "", orphan), 200),
                  "");
  auto page1 = store->list(2, 0);
  auto v = parse_json(page1);
  auto& traces = v.at("traces").as_array();
  CAF_REQUIRE_EQUAL(traces.size(), 2u);
  CAF_CHECK_EQUAL(traces[0].at("traceId").as_string(), std::string(31, 'a') + "4");
  CAF_CHECK_EQUAL(traces[1].at("traceId").as_string(), std::string(31, 'a') + "3");
  CAF_CHECK_EQUAL(member(page1, {"continuationToken"}), R"("2")");
  auto last = store->list(2, 4);
  CAF_CHECK_EQUAL(parse_json(last).at("traces").as_array().size(), 1u);
  CAF_CHECK_EQUAL(member(last, {"continuationToken"}), "<missing>");
}

// Bounds on what one trace keeps and one listing carries: a 120 MB trace
// made every reader hold 120 MB, and a page of 1000 of them 1.3 GB.
CAF_TEST(a trace keeps at most 16 MiB and a page ends at 32 MiB) {
  auto big_span = [](std::string_view id, std::string_view trace, std::size_t pad) {
    return R"({"spanId":")" + std::string{id} + R"(","traceId":")" + std::string{trace}
           + R"(","startTime":1,"endTime":2,"attributes":{"pad":")" + std::string(pad, 'p')
           + R"("},"displayName":"x","instrumentationLibrary":{"name":"t"},"spanKind":"INTERNAL"})";
  };
  auto id = [](int i) { return std::string(31, 'd') + std::to_string(i); };
  for (int i = 0; i < 3; ++i)
    CAF_CHECK_EQUAL(store->save(doc(entry("r", big_span("r", id(i), 12u << 20)), "", id(i)), 10 + i), "");
  auto page = store->list(10, 0);
  CAF_CHECK_LESS_OR_EQUAL(page.size(), traces::trace_store::max_answer_bytes);
  CAF_CHECK_EQUAL(parse_json(page).at("traces").as_array().size(), 2u);
  CAF_CHECK_EQUAL(member(page, {"continuationToken"}), R"("2")");
  auto rest = store->list(10, 2);
  CAF_CHECK_EQUAL(parse_json(rest).at("traces").as_array().size(), 1u);
  CAF_CHECK_EQUAL(member(rest, {"continuationToken"}), "<missing>");
  // 12 MiB more into a trace of 12 MiB: refused, the trace unchanged.
  auto err = store->save(doc(entry("c", big_span("c", id(0), 12u << 20)), "", id(0)), 20);
  CAF_CHECK(contains(err, "more than a trace may (16777216)"));
  CAF_CHECK(!contains(store->load(id(0)).value_or(""), R"("c":)"));
}

CAF_TEST(documents that are not TraceData are refused with the field named) {
  auto bad = [&](const std::string& text) { return store->save(text, 1); };
  CAF_CHECK_EQUAL(bad("{nope"), "not valid JSON: syntax error");
  CAF_CHECK_EQUAL(bad("[]"), "a TraceData document must be a JSON object");
  CAF_CHECK_EQUAL(bad(R"({"spans":{}})"), "traceId must be a string");
  CAF_CHECK_EQUAL(bad(R"({"traceId":"a\nb","spans":{}})"),
                  "traceId must be 1-128 of [A-Za-z0-9._-]");
  CAF_CHECK_EQUAL(bad(doc("", R"(,"startTime":"soon")")), "startTime must be a number");
  CAF_CHECK_EQUAL(bad(R"({"traceId":"t1"})"), "spans must be an object of SpanData by span id");
  auto s = span("s1", "", 5);
  CAF_CHECK_EQUAL(bad(doc(entry("other", s))), "spans['other'].spanId must be its key in spans");
  CAF_CHECK_EQUAL(bad(doc(entry("s1", span("s1", "", 5, "s", "another")))),
                  "spans['s1'].traceId must be the trace's traceId");
  auto no_kind = s;
  std::string_view kind = R"(,"spanKind":"INTERNAL")";
  no_kind.replace(no_kind.find(kind), kind.size(), "");
  CAF_CHECK_EQUAL(bad(doc(entry("s1", no_kind))), "spans['s1'].spanKind is missing");
  auto str_end = s;
  str_end.replace(str_end.find(R"("endTime":5)"), 11, R"("endTime":"5")");
  CAF_CHECK_EQUAL(bad(doc(entry("s1", str_end))), "spans['s1'].endTime must be a number");
  // Deep nesting is refused by the parser's depth limit, not by recursion.
  CAF_CHECK(bad(std::string(100000, '[')).starts_with("not valid JSON"));
  CAF_CHECK_EQUAL(store->trace_count(), 0u);
}

CAF_TEST(spans made here are stored as documents with them would be) {
  traces::run_span root;
  root.trace_id = std::string{trace_a};
  root.span_id = "1111111111111111";
  root.kind = "actor-host";
  root.action_type = "route";
  root.name = "actor-host rt";
  root.start_ms = 1700000000000;
  root.end_ms = 1700000000200;
  auto child = root;
  child.span_id = "2222222222222222";
  child.parent_span_id = root.span_id;
  CAF_CHECK_EQUAL(store->save_spans({root, child}, 1), "");
  // The same as the documents trace_data_json writes, saved one by one.
  std::string error;
  auto other = traces::trace_store::open(":memory:", {}, error);
  CAF_CHECK_EQUAL(other->save(traces::trace_data_json(root), 1), "");
  CAF_CHECK_EQUAL(other->save(traces::trace_data_json(child), 1), "");
  CAF_CHECK_EQUAL(store->load(trace_a).value_or("<none>"), other->load(trace_a).value_or("<other>"));
  CAF_CHECK_EQUAL(store->stored_bytes(), other->stored_bytes());
  // The spans, and the trace's own row (its name, start and end).
  CAF_CHECK_EQUAL(store->stored_bytes(), traces::span_json(root).size() + traces::span_json(child).size()
                                           + root.name.size() + 2 * std::string{"1700000000000"}.size());
  CAF_CHECK_EQUAL(store->list(10, 0), other->list(10, 0));
}

// Route spans are stored packed (span_record.hpp), documents as JSON: a
// trace may hold both, and a document that replaces a packed span counts
// what it replaced as the JSON load() showed for it.
CAF_TEST(packed spans and posted documents share a trace and its byte count) {
  traces::run_span root;
  root.trace_id = std::string{trace_a};
  root.span_id = "1111111111111111";
  root.kind = "actor-host";
  root.action_type = "route";
  root.name = "actor-host \"rt\"";
  root.ok = false;
  root.error_message = "INTERNAL: boom";
  root.start_ms = 1700000000000;
  root.end_ms = 1700000000200;
  root.attributes = {{"actor-host:runtime", "rt"}, {"actor-host:action", "/flow/x"}};
  CAF_CHECK_EQUAL(store->save_spans({root}, 1), "");
  auto child = span("2222222222222222", root.span_id, 1700000000100);
  CAF_CHECK_EQUAL(store->save(doc(entry("2222222222222222", child)), 2), "");
  auto loaded = boost::json::parse(store->load(trace_a).value_or("{}")).as_object();
  auto& spans = loaded.at("spans").as_object();
  CAF_REQUIRE_EQUAL(spans.size(), 2u);
  CAF_CHECK_EQUAL(boost::json::serialize(spans.at(root.span_id)), traces::span_json(root));
  CAF_CHECK_EQUAL(spans.at("2222222222222222").at("parentSpanId").as_string(), root.span_id);
  auto row = root.name.size() + 2 * std::string{"1700000000000"}.size();
  auto child_size = boost::json::serialize(boost::json::parse(child)).size();
  CAF_CHECK_EQUAL(store->stored_bytes(), traces::span_json(root).size() + child_size + row);
  // The route span sent again as a document (an exporter's copy) replaces it.
  auto again = span(root.span_id, "", 1700000000300, "copy");
  CAF_CHECK_EQUAL(store->save(doc(entry(root.span_id, again)), 3), "");
  auto again_size = boost::json::serialize(boost::json::parse(again)).size();
  CAF_CHECK_EQUAL(store->stored_bytes(), again_size + child_size + row);
  CAF_CHECK(store->load(trace_a).value_or("").find("\"copy\"") != std::string::npos);
}

// Retention counts every byte kept: a document with no spans and a long name
// counted 0 (and kept 40 MiB of them past --trace-max-bytes); a name is capped.
CAF_TEST(every stored byte counts and a span rewritten is counted once) {
  auto name = std::string(4096, 'n');
  CAF_CHECK_EQUAL(store->save(doc("", R"(,"displayName":")" + name + "\""), 1), "");
  CAF_CHECK_EQUAL(store->stored_bytes(), 4096u);
  CAF_CHECK_EQUAL(store->save(doc("", R"(,"displayName":")" + name + "n\""), 1),
                  "displayName must be at most 4096 bytes");
  // Sent again (running, then ended, then running again: kept ended), a span
  // is counted as what is stored, once.
  auto running = span("s1", "", 0);
  auto done = span("s1", "", 1700000000001);
  CAF_CHECK_EQUAL(store->save(doc(entry("s1", running)), 2), "");
  CAF_CHECK_EQUAL(store->save(doc(entry("s1", done)), 3), "");
  CAF_CHECK_EQUAL(store->save(doc(entry("s1", running)), 4), "");
  auto stored = store->load(trace_a).value_or("");
  CAF_CHECK(stored.find("1700000000001") != std::string::npos);
  CAF_CHECK_EQUAL(store->stored_bytes(), 4096u + boost::json::serialize(boost::json::parse(done)).size());
}

CAF_TEST_FIXTURE_SCOPE_END()

CAF_TEST(old traces and traces over the size limit are pruned oldest first) {
  std::string error;
  traces::retention r;
  r.max_age = 1000ms;
  r.max_bytes = 0;
  auto store = traces::trace_store::open(":memory:", r, error);
  CAF_REQUIRE(store != nullptr);
  auto id = [](int i) { return std::string(31, 'c') + std::to_string(i); };
  for (int i = 0; i < 3; ++i)
    store->save(doc(entry("r", span("r", "", 10, "f", id(i))), "", id(i)), 1000 * i);
  // At 2500 ms the trace updated at 0 and the one at 1000 are over 1 s old.
  CAF_CHECK_EQUAL(store->prune(2500), 2u);
  CAF_CHECK(store->load(id(2)).has_value());
  CAF_CHECK(!store->load(id(0)).has_value());
  // Size: keep the newest that fit, as each save commits (the prune then
  // finds nothing over the limit).
  traces::retention small;
  small.max_age = 0ms;
  auto one = store->stored_bytes();
  small.max_bytes = one * 2;
  auto sized = traces::trace_store::open(":memory:", small, error);
  for (int i = 0; i < 5; ++i)
    sized->save(doc(entry("r", span("r", "", 10, "f", id(i))), "", id(i)), 1000 * i);
  CAF_CHECK_EQUAL(sized->take_retention_counts().by_size, 3u);
  CAF_CHECK_EQUAL(sized->prune(9000), 0u);
  CAF_CHECK(sized->load(id(4)).has_value());
  CAF_CHECK(sized->load(id(3)).has_value());
  CAF_CHECK(!sized->load(id(2)).has_value());
  CAF_CHECK_LESS_OR_EQUAL(sized->stored_bytes(), small.max_bytes);
}

CAF_TEST(a store file keeps its traces and a symbolic link is refused) {
  auto dir = std::filesystem::temp_directory_path()
             / ("actor-host-traces-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto file = (dir / "traces.sqlite").string();
  std::string error;
  {
    auto store = traces::trace_store::open(file, {}, error);
    CAF_REQUIRE(store != nullptr);
    CAF_CHECK_EQUAL(store->save(doc(entry("r", span("r", "", 10))), 1), "");
  }
  {
    auto store = traces::trace_store::open(file, {}, error);
    CAF_REQUIRE(store != nullptr);
    CAF_CHECK(store->load(trace_a).has_value());
  }
  auto link = (dir / "link.sqlite").string();
  std::filesystem::create_symlink(file, link);
  CAF_CHECK(traces::trace_store::open(link, {}, error) == nullptr);
  CAF_CHECK(contains(error, "cannot open"));
  std::filesystem::remove_all(dir);
}

CAF_TEST(OTLP JSON exports become TraceData documents one per trace) {
  std::vector<std::string> docs;
  auto err = traces::trace_data_from_otlp(R"({"resourceSpans":[{"scopeSpans":[
    {"scope":{"name":"lib","version":"2"},"spans":[
      {"traceId":"t1","spanId":"s1","name":"root","kind":1,"startTimeUnixNano":"1500000000",
       "endTimeUnixNano":2000000000,"status":{"code":0},
       "attributes":[{"key":"a","value":{"stringValue":"x"}},{"key":"n","value":{"intValue":"7"}},
                     {"key":"l","value":{"arrayValue":{"values":[{"boolValue":true}]}}},
                     {"key":"skip","value":{"kvlistValue":{}}}]},
      {"traceId":"t1","spanId":"s2","parentSpanId":"s1","name":"c","kind":3,
       "startTimeUnixNano":"1600000000","status":{"code":2,"message":"no"}}]},
    {"spans":[{"traceId":"t2","spanId":"s3","name":"other","startTimeUnixNano":"0"}]}]}]})",
                                          docs);
  CAF_CHECK_EQUAL(err, "");
  CAF_REQUIRE_EQUAL(docs.size(), 2u);
  auto& t1 = docs[0];
  CAF_CHECK_EQUAL(traces::check_trace_data(t1), "");
  CAF_CHECK_EQUAL(member(t1, {"spans", "s1", "startTime"}), "1500");
  CAF_CHECK_EQUAL(member(t1, {"spans", "s1", "endTime"}), "2000");
  CAF_CHECK_EQUAL(member(t1, {"spans", "s1", "spanKind"}), R"("INTERNAL")");
  CAF_CHECK_EQUAL(member(t1, {"spans", "s1", "attributes"}), R"({"a":"x","n":"7","l":[true]})");
  CAF_CHECK_EQUAL(member(t1, {"spans", "s1", "status"}), "<missing>");
  CAF_CHECK_EQUAL(member(t1, {"spans", "s1", "instrumentationLibrary", "name"}), R"("lib")");
  CAF_CHECK_EQUAL(member(t1, {"spans", "s2", "parentSpanId"}), R"("s1")");
  CAF_CHECK_EQUAL(member(t1, {"spans", "s2", "spanKind"}), R"("CLIENT")");
  CAF_CHECK_EQUAL(member(t1, {"spans", "s2", "status"}), R"({"code":2,"message":"no"})");
  CAF_CHECK_EQUAL(traces::check_trace_data(docs[1]), "");
  auto refused = [](std::string text) {
    std::vector<std::string> out;
    return traces::trace_data_from_otlp(text, out);
  };
  CAF_CHECK_EQUAL(refused("[]"), "an OTLP/HTTP JSON export must be a JSON object");
  CAF_CHECK_EQUAL(refused("{}"), "");
  CAF_CHECK_EQUAL(refused(R"({"resourceSpans":1})"), "resourceSpans must be an array");
  CAF_CHECK_EQUAL(refused(R"({"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"t","spanId":"s"}]}]}]})"),
                  "span s: startTimeUnixNano must be a count of nanoseconds");
  CAF_CHECK_EQUAL(refused(R"({"resourceSpans":[{}]})"), "resourceSpans[].scopeSpans must be an array");
  // Near and past int64's end: rounded without overflow (UBSan saw ns + 500000
  // overflow), and a count past INT64_MAX or below 0 is refused.
  std::vector<std::string> edge;
  CAF_CHECK_EQUAL(traces::trace_data_from_otlp(R"({"resourceSpans":[{"scopeSpans":[{"spans":[
    {"traceId":"t","spanId":"s","startTimeUnixNano":"9223372036854775807","endTimeUnixNano":9223372036854775807}]}]}]})",
                                               edge),
                  "");
  CAF_REQUIRE_EQUAL(edge.size(), 1u);
  CAF_CHECK_EQUAL(member(edge[0], {"spans", "s", "startTime"}), "9223372036855");
  CAF_CHECK_EQUAL(refused(R"({"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"t","spanId":"s","startTimeUnixNano":9223372036854775808}]}]}]})"),
                  "span s: startTimeUnixNano must be a count of nanoseconds");
  CAF_CHECK_EQUAL(refused(R"({"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"t","spanId":"s","startTimeUnixNano":"-5"}]}]}]})"),
                  "span s: startTimeUnixNano must be a count of nanoseconds");
  // Back to OTLP: milliseconds below 0, or past int64's range as a double, are not cast.
  std::string otlp;
  CAF_CHECK_EQUAL(traces::otlp_from_trace_data(
                    doc(entry("r", R"({"spanId":"r","traceId":"0123456789abcdef0123456789abcdef","startTime":-1,"endTime":1e300,"attributes":{},"displayName":"x","spanKind":"SERVER"})")),
                    otlp),
                  "");
  CAF_CHECK(otlp.find(R"("startTimeUnixNano":"0")") != std::string::npos);
  CAF_CHECK(otlp.find(R"("endTimeUnixNano":"0")") != std::string::npos);
}

CAF_TEST(TraceData goes to a collector as OTLP JSON and comes back the same) {
  auto data = doc(entry("r1", R"({"spanId":"r1","traceId":"0123456789abcdef0123456789abcdef","startTime":1700000000000,"endTime":1700000000250,"attributes":{"genkit:name":"echo","genkit:isRoot":true,"n":3,"x":1.5},"displayName":"echo","spanKind":"SERVER","status":{"code":2,"message":"boom"}})")
                  + "," + entry("c1", span("c1", "r1", 1700000000100, "child")) + ","
                  + entry("open", span("open", "r1", 0, "running")));
  std::string otlp;
  CAF_CHECK_EQUAL(traces::otlp_from_trace_data(data, otlp), "");
  CAF_CHECK_EQUAL(member(otlp, {"resourceSpans"}).find("service.name") != std::string::npos, true);
  std::vector<std::string> back;
  CAF_REQUIRE_EQUAL(traces::trace_data_from_otlp(otlp, back), "");
  CAF_REQUIRE_EQUAL(back.size(), 1u);
  auto& t = back[0];
  CAF_CHECK_EQUAL(member(t, {"spans", "r1", "startTime"}), "1700000000000");
  CAF_CHECK_EQUAL(member(t, {"spans", "r1", "endTime"}), "1700000000250");
  CAF_CHECK_EQUAL(member(t, {"spans", "r1", "spanKind"}), R"("SERVER")");
  CAF_CHECK_EQUAL(member(t, {"spans", "r1", "displayName"}), R"("echo")");
  CAF_CHECK_EQUAL(member(t, {"spans", "r1", "attributes", "genkit:name"}), R"("echo")");
  CAF_CHECK_EQUAL(member(t, {"spans", "r1", "attributes", "genkit:isRoot"}), "true");
  CAF_CHECK_EQUAL(member(t, {"spans", "r1", "attributes", "x"}), "1.5E0");
  CAF_CHECK_EQUAL(member(t, {"spans", "r1", "status"}), R"({"code":2,"message":"boom"})");
  CAF_CHECK_EQUAL(member(t, {"spans", "c1", "parentSpanId"}), R"("r1")");
  // A span still running is not exported (it goes once it has ended).
  CAF_CHECK_EQUAL(member(t, {"spans", "open"}), "<missing>");
  std::string none;
  CAF_CHECK_EQUAL(traces::otlp_from_trace_data(doc(entry("open", span("open", "", 0))), none), "");
  CAF_CHECK_EQUAL(none, "");
  CAF_CHECK(!traces::otlp_from_trace_data("[]", none).empty());
}

CAF_TEST(a trace filter judges the root span as the telemetry server indexes it) {
  auto trace = [](std::string id, std::string attrs, std::string status = "") {
    return R"({"traceId":")" + id + R"(","spans":{"r":{"spanId":"r","traceId":")" + id
           + R"(","startTime":100,"endTime":200,"displayName":"echo","attributes":{)" + attrs
           + "}" + status + R"(},"c":{"spanId":"c","traceId":")" + id
           + R"(","parentSpanId":"r","startTime":1,"attributes":{"genkitx:ignore-trace":true}}}})";
  };
  auto plain = trace("t1", R"("genkit:type":"action","genkit:metadata:subtype":"flow")");
  auto ignored = trace("t2", R"("genkit:type":"util","genkitx:ignore-trace":true)",
                       R"(,"status":{"code":2})");
  auto passes = [](std::string filter, const std::string& t) {
    traces::trace_filter f;
    CAF_REQUIRE_EQUAL(traces::trace_filter::parse(filter, f), "");
    return f.matches(t);
  };
  // What `genkit trace:list` always sends.
  auto cli = R"({"neq":{"genkitx:ignore-trace":["true"]}})";
  CAF_CHECK(passes(cli, plain));
  CAF_CHECK(!passes(cli, ignored));
  CAF_CHECK(passes(R"({"eq":{"type":"flow"}})", plain));
  CAF_CHECK(!passes(R"({"eq":{"type":["tool","util"]}})", plain));
  CAF_CHECK(passes(R"({"eq":{"type":"util","status":2}})", ignored));
  CAF_CHECK(passes(R"({"eq":{"status":"UNKNOWN"}})", plain));
  CAF_CHECK(passes(R"({"gte":{"start":100},"lt":{"end":201}})", plain));
  CAF_CHECK(!passes(R"({"gt":{"start":100}})", plain));
  CAF_CHECK(passes(R"({"contains":{"name":["xx","ECH"]}})", plain));
  CAF_CHECK(!passes(R"({"contains":{"missing":"a"}})", plain));
  traces::trace_filter f;
  CAF_CHECK_EQUAL(traces::trace_filter::parse("[1]", f), "filter must be a JSON object");
  CAF_CHECK_EQUAL(traces::trace_filter::parse(R"({"like":{}})", f),
                  "filter: unknown operator 'like' (eq, neq, gt, gte, lt, lte, contains)");
  CAF_CHECK_EQUAL(traces::trace_filter::parse(R"({"gt":{"start":"1"}})", f),
                  "filter.gt.start must be a number");
}
