#define CAF_SUITE iii_protocol

#include <caf/test/unit_test.hpp>

#include "registry/function_catalog.hpp"
#include "registry/worker_rbac.hpp"
#include "wire/iii_protocol.hpp"

namespace iii = actor_host::wire::iii;
namespace reg = actor_host::registry;

CAF_TEST(frames) {
  CAF_CHECK_EQUAL(iii::worker_registered("w", "t"),
                  R"({"type":"workerregistered","worker_id":"w","reattach_token":"t"})");
  CAF_CHECK_EQUAL(iii::invoke_function("i", "f", "", "", "", ""),
                  R"({"type":"invokefunction","invocation_id":"i","function_id":"f","data":null})");
  CAF_CHECK_EQUAL(iii::invocation_result("i", "f", true, ""),
                  R"({"type":"invocationresult","invocation_id":"i","function_id":"f"})");
  CAF_CHECK_EQUAL(iii::invocation_result("i", "f", false, iii::error_object("c", "m", "s")),
                  R"({"type":"invocationresult","invocation_id":"i","function_id":"f","error":{"code":"c","message":"m","stacktrace":"s"}})");
  auto f = iii::decode(R"({"type":"ping","x":1})");
  CAF_REQUIRE(f);
  CAF_CHECK_EQUAL(f->type, "ping");
  auto untyped = iii::decode(R"({"x":1})");
  CAF_CHECK(!untyped);
  CAF_CHECK_EQUAL(untyped.error(), "no string 'type'");
  CAF_CHECK(!iii::decode("[1]"));
}

CAF_TEST(uuids and caller ids) {
  auto a = iii::new_uuid();
  CAF_CHECK(iii::is_uuid(a));
  CAF_CHECK_NOT_EQUAL(a, iii::new_uuid());
  CAF_CHECK_EQUAL(a[14], '4');
  CAF_CHECK(!iii::is_uuid("c-1"));
  CAF_CHECK_EQUAL(iii::with_caller_worker_id(R"({"a":1})", "w"), R"({"a":1,"_caller_worker_id":"w"})");
  CAF_CHECK_EQUAL(iii::with_caller_worker_id("{}", "w"), R"({"_caller_worker_id":"w"})");
  CAF_CHECK_EQUAL(iii::with_caller_worker_id(R"({"_caller_worker_id":"x"})", "w"),
                  R"({"_caller_worker_id":"w"})");
  CAF_CHECK_EQUAL(iii::with_caller_worker_id("[1]", "w"), "[1]");
  CAF_CHECK_EQUAL(iii::with_caller_worker_id("null", "w"), "null");
}

CAF_TEST(query params and globs) {
  CAF_CHECK_EQUAL(iii::query_params_json("/?a=1&b=x%20y&a=2&c"),
                  R"({"a":["1","2"],"b":["x%20y"],"c":[""]})");
  CAF_CHECK_EQUAL(iii::query_params_json("/"), "{}");
  CAF_CHECK(iii::glob_match("api::*", "api::x"));
  CAF_CHECK(iii::glob_match("*", ""));
  CAF_CHECK(iii::glob_match("a*c*e", "abcde"));
  CAF_CHECK(!iii::glob_match("api::*", "xapi::x"));
  CAF_CHECK(!iii::glob_match("api", "api::x"));
}

CAF_TEST(genkit ids and errors) {
  auto t = iii::parse_genkit_function_id("genkit::rt1::/flow/x");
  CAF_REQUIRE(t);
  CAF_CHECK_EQUAL(t->runtime_id, "rt1");
  CAF_CHECK_EQUAL(t->key, "/flow/x");
  t = iii::parse_genkit_function_id("genkit::/flow/x");
  CAF_REQUIRE(t);
  CAF_CHECK_EQUAL(t->runtime_id, "");
  CAF_CHECK_EQUAL(t->key, "/flow/x");
  t = iii::parse_genkit_function_id("genkit::rt1");
  CAF_REQUIRE(!t);
  CAF_CHECK_EQUAL(t.error(), "expected genkit::<runtimeId>::<action key> or genkit::<action key>");
  t = iii::parse_genkit_function_id("genkit::rt1::flow");
  CAF_REQUIRE(!t);
  CAF_CHECK_EQUAL(t.error(), "the action key must start with '/', e.g. /flow/echo");
  CAF_CHECK(!iii::parse_genkit_function_id("greet"));
  CAF_CHECK_EQUAL(iii::genkit_result_to_iii(R"({"result":{"a":1},"telemetry":{}})"), R"({"a":1})");
  CAF_CHECK_EQUAL(
    iii::genkit_error_to_iii(
      R"({"code":-32000,"message":"x","data":{"code":5,"message":"Runtime r not found"}})"),
    R"({"code":"function_not_found","message":"Runtime r not found"})");
  CAF_CHECK_EQUAL(
    iii::genkit_error_to_iii(
      R"({"code":-32000,"message":"x","data":{"code":13,"message":"boom","details":{"stack":"s"}}})"),
    R"({"code":"invocation_failed","message":"boom","stacktrace":"s"})");
  // A runtime's Status code that is no Status (fuzz finding: 6.7e31 was
  // converted to int, undefined behavior) counts as none.
  for (auto code : {"666666666666666666666666666666664", "2.5", "-1", "17"})
    CAF_CHECK_EQUAL(iii::genkit_error_to_iii(R"({"code":-32000,"message":"x","data":{"code":)"
                                             + std::string{code} + R"(,"message":"boom"}})"),
                    R"({"code":"invocation_failed","message":"boom"})");
  CAF_CHECK_EQUAL(iii::iii_error_to_genkit(R"({"code":"invocation_stopped","message":"Invocation stopped"})"),
                  R"({"code":-32000,"message":"Invocation stopped","data":{"code":14,"message":"Invocation stopped","details":{"iiiCode":"invocation_stopped"}}})");
  CAF_CHECK_EQUAL(iii::iii_result_to_genkit("", "t"), R"({"result":null,"telemetry":{"traceId":"t"}})");
}

CAF_TEST(catalog ownership) {
  reg::function_catalog c;
  CAF_CHECK_EQUAL(c.put_function({"f", "w1", "", "", "", ""}), "");
  CAF_CHECK_EQUAL(c.put_function({"f", "w2", "", "", "", ""}), "w1");
  CAF_CHECK(!c.remove_function("f", "w1"));
  CAF_CHECK(c.remove_functions_of("w1").empty());
  CAF_CHECK_EQUAL(c.remove_functions_of("w2").size(), 1u);
  CAF_CHECK(c.find_function("f") == nullptr);
  reg::worker_record w1;
  w1.id = "w1";
  w1.ip = "127.0.0.1";
  w1.connected_at_ms = 1;
  c.add_worker(w1);
  c.put_function({"b", "w1", "B", R"({"internal":true})", "", ""});
  c.put_function({"a", "w1", "", "", "", ""});
  c.set_worker_metadata("w1", R"({"name":"n","runtime":"node"})");
  CAF_CHECK_EQUAL(c.functions_list_json("{}", {"engine::x"}),
                  R"({"functions":[{"function_id":"a","worker_name":"n"}]})");
  CAF_CHECK_EQUAL(c.functions_list_json(R"({"include_internal":true,"prefix":"e"})", {"engine::x"}),
                  R"({"functions":[{"function_id":"engine::x","worker_name":"engine"}]})");
}

CAF_TEST(rbac sessions) {
  auto parsed = reg::parse_auth_result(
    R"({"allowed_functions":["a"],"forbidden_functions":["api::no"],"function_registration_prefix":"p","context":{"t":1}})");
  CAF_REQUIRE(parsed);
  auto& s = *parsed;
  CAF_CHECK(!s.allow_trigger_type_registration);
  CAF_CHECK(s.allow_function_registration);
  CAF_CHECK_EQUAL(s.prefix, "p");
  CAF_CHECK_EQUAL(s.context, R"({"t":1})");
  auto refused = reg::parse_auth_result("null");
  CAF_CHECK(!refused);
  CAF_CHECK_EQUAL(refused.error(), "the auth function did not return an object");
  refused = reg::parse_auth_result(R"({"allowed_functions":"a"})");
  CAF_CHECK(!refused);
  CAF_CHECK_EQUAL(refused.error(), "AuthResult field 'allowed_functions' has the wrong type");
  auto t = *reg::parse_auth_result(R"({"allowed_functions":["a"],"forbidden_functions":["api::no"],"function_registration_prefix":"p"})");
  reg::worker_rbac_config cfg;
  cfg.expose_functions = reg::worker_rbac_config::parse_list(" api::* , x ");
  CAF_CHECK_EQUAL(cfg.expose_functions.size(), 2u);
  using d = reg::invoke_decision;
  CAF_CHECK(reg::check_invoke(cfg, t, "api::yes") == d::allow);
  CAF_CHECK(reg::check_invoke(cfg, t, "api::no") == d::forbidden_listed);
  CAF_CHECK(reg::check_invoke(cfg, t, "a") == d::allow);
  CAF_CHECK(reg::check_invoke(cfg, t, "secret") == d::not_exposed);
  CAF_CHECK(reg::check_invoke(cfg, t, "engine::workers::register") == d::allow);
  CAF_CHECK_EQUAL(reg::with_prefix(t, "f"), "p::f");
  CAF_CHECK_EQUAL(reg::without_prefix(t, "p::f"), "f");
  CAF_CHECK_EQUAL(reg::without_prefix(t, "q::f"), "q::f");
}
