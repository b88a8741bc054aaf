#define CAF_SUITE call_path

#include "test_support.hpp"

// The one call path's pure parts: the runAction parser every front door
// uses, and the routing rule.

using namespace actor_host;
using namespace actor_host::testing;
using namespace std::chrono_literals;

namespace {

/// The caller's error object ("" for none).
std::string parse(std::string params, run_flags forced, call_request& out) {
  call_policy policy;
  policy.run_timeout = 7s;
  auto error = parse_run_action(std::move(params), policy, forced, out);
  return error ? error->object : std::string{};
}

} // namespace

CAF_TEST(runAction params parse into one call value) {
  call_request c;
  auto err = parse(R"({"key":"/flow/echo","input":{"a":1},"runtimeId":"rt1","timeoutMs":250,)"
                   R"("stream":true,"telemetryLabels":{"x":"y"}})",
                   {}, c);
  CAF_CHECK_EQUAL(err, "");
  CAF_CHECK(c.method == call_method::run_action);
  CAF_CHECK_EQUAL(c.key, "/flow/echo");
  CAF_CHECK_EQUAL(c.runtime_id, "rt1");
  CAF_CHECK(c.timeout == 250ms);
  CAF_CHECK(c.stream);
  CAF_CHECK(!c.stream_input);
  // The params reach the runtime as the caller wrote them.
  CAF_CHECK(contains(c.params, R"("telemetryLabels":{"x":"y"})"));
  CAF_CHECK(contains(c.params, R"("stream":true)"));
}

CAF_TEST(flags the door decides replace the callers flags) {
  call_request c;
  auto err = parse(R"({"key":"/flow/echo","stream":false,"streamInput":"junk","input":1})",
                   {true, true}, c);
  CAF_CHECK_EQUAL(err, "");
  CAF_CHECK(c.stream);
  CAF_CHECK(c.stream_input);
  CAF_CHECK(c.timeout == 7s); // the policy's default
  CAF_CHECK_EQUAL(member(c.params, {"stream"}), "true");
  CAF_CHECK_EQUAL(member(c.params, {"streamInput"}), "true");
  CAF_CHECK_EQUAL(member(c.params, {"input"}), "1");
  CAF_CHECK_EQUAL(member_str(c.params, {"key"}), "/flow/echo");
  // The caller's members as they came, in order, the door's flags last; a
  // member name is written again as JSON, escapes and all.
  call_request d;
  CAF_CHECK_EQUAL(parse(R"({"key":"/flow/echo", "input" : {"a":[1,2]},"q\"t\n":0})",
                        {false, false}, d),
                  "");
  CAF_CHECK_EQUAL(d.params, R"({"key":"/flow/echo","input":{"a":[1,2]},"q\"t\n":0,)"
                            R"("stream":false,"streamInput":false})");
}

CAF_TEST(bad runAction params get the error a person can act on) {
  struct bad_case {
    const char* params;
    const char* code;
    const char* needle;
  };
  bad_case cases[] = {
    {"", "-32602", "'key' is missing"},
    {R"({"key":"/flow/x","input":[1,{"a":tru}]})", "-32700", "Parse error"},
    {R"([{"key":"/flow/x"}])", "-32602", "JSON object"},
    {R"({"input":1})", "-32602", "'key'"},
    {R"({"key":""})", "-32602", "'key'"},
    {R"({"key":"/flow/x","runtimeId":5})", "-32602", "'runtimeId'"},
    {R"({"key":"/flow/x","stream":"yes"})", "-32602", "'stream'"},
    {R"({"key":"/flow/x","timeoutMs":1e300})", "-32602", "'timeoutMs'"},
  };
  for (auto& bc : cases) {
    CAF_MESSAGE("params: " << bc.params);
    call_request c;
    auto err = parse(bc.params, {}, c);
    CAF_CHECK_EQUAL(member(err, {"code"}), bc.code);
    CAF_CHECK(contains(member_str(err, {"message"}), bc.needle));
  }
}

CAF_TEST_FIXTURE_SCOPE(routing_tests, actor_fixture)

CAF_TEST(one routing rule for every door) {
  auto a = spawn_dummy();
  auto b = spawn_dummy();
  route_table t;
  t.entries = {{"a", caf::actor_cast<call_target_actor>(a), {}, "a", nullptr, 0, {}},
               {"b", caf::actor_cast<call_target_actor>(b), {}, "b", nullptr, 0, {}}};
  auto run = [](std::string key, std::string runtime_id = {}) {
    call_request c;
    c.key = std::move(key);
    c.runtime_id = std::move(runtime_id);
    return c;
  };
  // No runtimeId: the most recent runtime.
  auto r = route_call(t, run("/flow/x"));
  CAF_CHECK(r.how == call_route::kind::runtime);
  CAF_CHECK(caf::actor_cast<caf::actor>(r.conn) == b);
  CAF_CHECK_EQUAL(r.runtime_id, "b");
  r = route_call(t, run("/flow/x", "a"));
  CAF_CHECK(caf::actor_cast<caf::actor>(r.conn) == a);
  r = route_call(t, run("/flow/x", "zz"));
  CAF_CHECK(r.how == call_route::kind::failed);
  CAF_CHECK_EQUAL(member_str(r.error.object, {"message"}), "Runtime zz not found");
  // `/iii/` keys go to the iii side whatever the runtimeId says.
  r = route_call(t, run("/iii/greet", "a"));
  CAF_CHECK(r.how == call_route::kind::iii_function);
  CAF_CHECK_EQUAL(r.function_id, "greet");
  r = route_call(t, list_actions_call("iii", {}));
  CAF_CHECK(r.how == call_route::kind::iii_listing);
  // A listValues of "iii" is a runtime id like any other.
  r = route_call(t, list_values_call("iii", "defaultModel", {}));
  CAF_CHECK(r.how == call_route::kind::failed);
  r = route_call(route_table{}, list_actions_call("", {}));
  CAF_CHECK(r.how == call_route::kind::failed);
  CAF_CHECK_EQUAL(member(r.error.object, {"data", "code"}), "14");
  stop(a);
  stop(b);
  check_no_leaks();
}

CAF_TEST_FIXTURE_SCOPE_END()
