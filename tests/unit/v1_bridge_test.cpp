#define CAF_SUITE v1_bridge

#include <caf/test/unit_test.hpp>

#include "wire/reflection_v1_bridge.hpp"

#include <string>

// The adapter between the manager's Reflection V2 and a V1 runtime's HTTP
// API: what each V2 request becomes, and what each V1 answer becomes. The
// shapes on both sides are ../shared/spec/REFLECTION_V1.md and REFLECTION_V2.md.

using namespace actor_host::wire::v1;
using kind = http_plan::kind;

namespace {

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

} // namespace

CAF_TEST(runAction becomes a POST with the params as body and stream as query) {
  auto p = plan_request("runAction", R"({"key":"/flow/echo","input":"hi","stream":true})");
  CAF_CHECK(p.refusal.empty());
  CAF_CHECK(p.what == kind::run);
  CAF_CHECK(p.post);
  CAF_CHECK(p.stream);
  CAF_CHECK_EQUAL(p.target, "/api/runAction?stream=true");
  CAF_CHECK_EQUAL(p.body, R"({"key":"/flow/echo","input":"hi","stream":true})");
  auto q = plan_request("runAction", R"({"key":"/flow/echo","input":1})");
  CAF_CHECK(!q.stream);
  CAF_CHECK_EQUAL(q.target, "/api/runAction");
}

CAF_TEST(the hop count a manager put in the params goes on for runs and listings alike) {
  CAF_CHECK_EQUAL(plan_request("runAction", R"({"key":"/flow/x","actorHostHops":3})").hops, 3u);
  CAF_CHECK_EQUAL(plan_request("listActions", R"({"actorHostHops":5})").hops, 5u);
  CAF_CHECK_EQUAL(plan_request("listActions", "").hops, 0u);
  CAF_CHECK_EQUAL(plan_request("listActions", R"({"actorHostHops":-1})").hops, 0u);
}

CAF_TEST(a bidi run is refused at once with UNIMPLEMENTED) {
  auto p = plan_request("runAction", R"({"key":"/flow/chat","streamInput":true})");
  CAF_CHECK(p.what == kind::none);
  CAF_CHECK(contains(p.refusal, R"("code":12)"));
  CAF_CHECK(contains(p.refusal, "Reflection V2"));
}

CAF_TEST(listValues needs a string type and encodes it into the query) {
  auto p = plan_request("listValues", R"({"type":"default model&x"})");
  CAF_CHECK(p.what == kind::list_values);
  CAF_CHECK(!p.post);
  CAF_CHECK_EQUAL(p.target, "/api/values?type=default%20model%26x");
  auto bad = plan_request("listValues", R"({"type":3})");
  CAF_CHECK(contains(bad.refusal, "-32602"));
}

CAF_TEST(cancelAction posts only the trace id) {
  auto p = plan_request("cancelAction", R"({"traceId":"abc","extra":1})");
  CAF_CHECK(p.what == kind::cancel);
  CAF_CHECK_EQUAL(p.body, R"({"traceId":"abc"})");
  CAF_CHECK(contains(plan_request("cancelAction", "{}").refusal, "traceId is required"));
}

CAF_TEST(params that are not an object and unknown methods) {
  CAF_CHECK(contains(plan_request("runAction", "[1]").refusal, "Invalid params"));
  auto p = plan_request("sendInputStreamChunk", R"({"requestId":"1"})");
  CAF_CHECK(p.what == kind::none);
  CAF_CHECK(p.refusal.empty());
}

CAF_TEST(a run answer becomes the V2 result and gets the head trace id when it lacks one) {
  auto run = plan_request("runAction", R"({"key":"/flow/echo"})");
  auto ok = answer_frame(run, R"("7")", 200, R"({"result":"hi","telemetry":{"traceId":"t1"}})",
                         "t1");
  CAF_CHECK_EQUAL(ok, R"({"jsonrpc":"2.0","result":{"result":"hi","telemetry":{"traceId":"t1"}},"id":"7"})");
  auto old = answer_frame(run, R"("7")", 200, R"({"result":{"n":1}})", "t2");
  CAF_CHECK(contains(old, R"("result":{"result":{"n":1},"telemetry":{"traceId":"t2"}})"));
}

CAF_TEST(a failed run becomes a -32000 error with the runtime Status as data) {
  auto run = plan_request("runAction", R"({"key":"/flow/fail"})");
  auto err = answer_frame(run, R"("3")", 200,
                          R"({"error":{"code":9,"message":"boom","details":{"traceId":"t"}}})", "t");
  CAF_CHECK(contains(err, R"("error":{"code":-32000,"message":"boom","data":{"code":9,"message":"boom")"));
  // A Status without a message is not relayed as one.
  auto bad = answer_frame(run, R"("3")", 200, R"({"error":{"code":9}})", "");
  CAF_CHECK(contains(bad, "not valid"));
  CAF_CHECK(contains(bad, R"("code":13)"));
}

CAF_TEST(an unknown key answered 404 in text becomes -32602 with the runtime text) {
  auto run = plan_request("runAction", R"({"key":"/flow/nope"})");
  auto f = answer_frame(run, R"("4")", 404, "action /flow/nope not found", "");
  CAF_CHECK(contains(f, R"("code":-32602,"message":"action /flow/nope not found")"));
}

CAF_TEST(answers that are not JSON or not objects are not relayed) {
  auto run = plan_request("runAction", R"({"key":"/flow/echo"})");
  CAF_CHECK(contains(answer_frame(run, "1", 200, R"({"result":NaN})", ""), "not valid"));
  CAF_CHECK(contains(answer_frame(run, "1", 200, "tru", ""), "not valid"));
  auto list = plan_request("listActions", "");
  CAF_CHECK(contains(answer_frame(list, "1", 200, "[1,2]", ""), "not valid"));
}

CAF_TEST(listings are wrapped as V2 wraps them and a values 404 is an empty map) {
  auto list = plan_request("listActions", "");
  CAF_CHECK_EQUAL(answer_frame(list, "1", 200, R"({"/flow/a":{"name":"a"}})", ""),
                  R"({"jsonrpc":"2.0","result":{"actions":{"/flow/a":{"name":"a"}}},"id":1})");
  auto values = plan_request("listValues", R"({"type":"defaultModel"})");
  CAF_CHECK(contains(answer_frame(values, "2", 404, "", ""), R"("result":{"values":{}})"));
  auto bad = answer_frame(values, "2", 400, R"('type' x is not supported)", "");
  CAF_CHECK(contains(bad, R"("code":-32602)"));
}

CAF_TEST(cancel answers map as a V2 runtime answers them) {
  auto c = plan_request("cancelAction", R"({"traceId":"t"})");
  CAF_CHECK(contains(answer_frame(c, "5", 200, R"({"message":"Action cancelled"})", ""),
                     R"("result":{"message":"Action cancelled"})"));
  CAF_CHECK(contains(answer_frame(c, "5", 404,
                                  R"({"message":"Action not found or already completed"})", ""),
                     R"("code":-32602,"message":"Action not found or already completed")"));
}

CAF_TEST(other HTTP statuses keep their meaning and a long text is clipped) {
  auto list = plan_request("listActions", "");
  auto f = answer_frame(list, "1", 503, std::string(5000, 'x'), "");
  CAF_CHECK(contains(f, R"("code":14)"));
  CAF_CHECK(f.size() < 3000);
  // Go's envelope: a bare Status is relayed as the error's data.
  auto g = answer_frame(list, "1", 500, R"({"code":13,"message":"registry broken"})", "");
  CAF_CHECK(contains(g, R"("message":"registry broken","data":{"code":13)"));
}

CAF_TEST(an error answered in the tools server envelope is relayed as its Status and not quoted) {
  // What a manager's HTTP door answers: relayed as text, each manager a
  // call came back through doubled the escapes of the one before.
  auto run = plan_request("runAction", R"({"key":"/flow/echo"})");
  auto f = answer_frame(run, "1", 400,
                        R"({"error":{"code":9,"message":"a call loop","details":{"hops":8}}})", "");
  CAF_CHECK(contains(f, R"("message":"a call loop","data":{"code":9,"message":"a call loop")"));
  CAF_CHECK(!contains(f, R"(\")"));
}

CAF_TEST(stream lines become streamChunk frames only when they are JSON) {
  CAF_CHECK_EQUAL(chunk_frame(R"("9")", R"({"n":1})"),
                  R"({"jsonrpc":"2.0","method":"streamChunk","params":{"requestId":"9","chunk":{"n":1}}})");
  CAF_CHECK(chunk_frame(R"("9")", "{not json").empty());
  CAF_CHECK(chunk_frame(R"("9")", "").empty());
  CAF_CHECK(contains(run_state_frame(R"("9")", "abc"), R"("state":{"traceId":"abc"})"));
  CAF_CHECK(contains(failure_frame(R"("9")", "rt", "connection refused"), R"("code":14)"));
}
