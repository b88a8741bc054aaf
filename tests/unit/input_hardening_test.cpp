#define CAF_SUITE input_hardening

#include <caf/test/unit_test.hpp>

#include "actors/call/call_request.hpp"
#include "schema/json_schema.hpp"
#include "wire/iii_protocol.hpp"
#include "wire/jsonrpc.hpp"
#include "wire/secure_random.hpp"

#include <boost/json/parse.hpp>

#include <set>
#include <string>
#include <vector>

// Issue 11: inputs that crashed the runtime or produced invalid JSON.

using actor_host::schema::json_schema;
namespace rpc = actor_host::wire::jsonrpc;

namespace {

std::shared_ptr<const json_schema> compile(std::string_view text) {
  auto s = json_schema::compile(text);
  if (!s)
    CAF_FAIL("schema does not compile: " << s.error());
  return *s;
}

/// Why `text` does not compile; "<compiled>" if it does.
std::string compile_error(std::string_view text) {
  auto s = json_schema::compile(text);
  return s ? std::string{"<compiled>"} : s.error();
}

std::vector<std::string> errors_of(const json_schema& s, const boost::json::value& input) {
  std::vector<std::string> errors;
  s.validate(input, errors);
  return errors;
}

std::string first(const std::vector<std::string>& e) {
  return e.empty() ? std::string{"<valid>"} : e.front();
}

} // namespace

CAF_TEST(a 100k character email is checked without recursion) {
  // std::regex overflowed the stack here (SIGSEGV) on the demo's createOrder.
  auto s = compile(R"({"type":"object","properties":{"email":{"type":"string","format":"email"}}})");
  std::string local(100'000, 'a');
  CAF_CHECK_EQUAL(first(errors_of(*s, {{"email", local}})), R"(email: must match format "email")");
  CAF_CHECK_EQUAL(first(errors_of(*s, {{"email", local + "@example.com"}})), "<valid>");
  auto dt = compile(R"({"type":"string","format":"date-time"})");
  CAF_CHECK_EQUAL(first(errors_of(*dt, boost::json::value(std::string(200'000, '1')))),
                  R"((root): must match format "date-time")");
  CAF_CHECK_EQUAL(first(errors_of(*dt, boost::json::value("2024-02-29T23:59:60Z"))), "<valid>");
  CAF_CHECK_EQUAL(first(errors_of(*dt, boost::json::value("2023-02-29T10:00:00Z"))),
                  R"((root): must match format "date-time")");
  auto uuid = compile(R"({"type":"string","format":"uuid"})");
  CAF_CHECK_EQUAL(first(errors_of(*uuid, boost::json::value("0B7F0C1A-8C7D-4E4B-9C53-2A6A2E4D1F00"))),
                  "<valid>");
}

CAF_TEST(a 100k character string against a pattern is matched by RE2) {
  auto s = compile(R"({"type":"object","properties":{"code":{"type":"string","pattern":"^(a|b)*c$"}}})");
  std::string long_text(100'000, 'a');
  CAF_CHECK_EQUAL(first(errors_of(*s, {{"code", long_text}})), R"(code: must match pattern "^(a|b)*c$")");
  CAF_CHECK_EQUAL(first(errors_of(*s, {{"code", long_text + "c"}})), "<valid>");
  // Search, not full match, as RegExp.test.
  auto part = compile(R"({"type":"string","pattern":"b+"})");
  CAF_CHECK_EQUAL(first(errors_of(*part, boost::json::value("aabba"))), "<valid>");
  // Patterns inside combinators still count (anyOf of two patterns).
  auto any = compile(R"({"anyOf":[{"type":"string","pattern":"^x"},{"type":"string","pattern":"^y"}]})");
  CAF_CHECK_EQUAL(first(errors_of(*any, boost::json::value("yes"))), "<valid>");
  auto e = errors_of(*any, boost::json::value("no"));
  CAF_REQUIRE(!e.empty());
  CAF_CHECK_EQUAL(e.back(), "(root): must match a schema in anyOf");
  // Non-strings are not matched (ajv ignores them).
  auto untyped = compile(R"({"pattern":"b+"})");
  CAF_CHECK_EQUAL(first(errors_of(*untyped, boost::json::value(3))), "<valid>");
  CAF_CHECK_EQUAL(first(errors_of(*untyped, boost::json::value("x"))), R"((root): must match pattern "b+")");
}

CAF_TEST(patterns RE2 cannot run are refused when the schema compiles) {
  CAF_CHECK(compile_error(R"({"type":"string","pattern":"^(?=a)a$"})").find("RE2")
            != std::string::npos);
  auto why = compile_error(R"({"type":"string","pattern":"(a)\\1"})");
  CAF_CHECK(why.starts_with("invalid pattern "));
}

CAF_TEST(schema refs that would recurse without end are refused at compile) {
  // Each of these overflowed the stack in valijson (fuzz/corpus/schema/ref-*).
  for (std::string bad : {R"({"$ref":"#"})", R"({"$ref":"string"})",
                          R"({"allOf":[{"$ref":"#"}]})",
                          R"({"definitions":{"a":{"$ref":"#/definitions/b"},"b":{"anyOf":[{"$ref":"#/definitions/a"}]}},"$ref":"#/definitions/a"})",
                          R"({"not":{"$ref":"#"}})", R"({"$ref":"#/definitions/missing"})",
                          R"({"$ref":"http://example.com/s.json"})"}) {
    CAF_MESSAGE(bad);
    CAF_CHECK(compile_error(bad).starts_with("$ref "));
  }
  // A tree type refers back through properties/items: each step validates a
  // smaller value, so it is compiled and validated to the instance's depth.
  auto tree = compile(R"({"definitions":{"node":{"type":"object","properties":{"v":{"type":"number"},)"
                      R"("kids":{"type":"array","items":{"$ref":"#/definitions/node"}}}}},)"
                      R"("$ref":"#/definitions/node"})");
  CAF_REQUIRE(tree != nullptr);
  auto ok = boost::json::parse(R"({"v":1,"kids":[{"v":2,"kids":[{"v":3}]}]})");
  CAF_CHECK_EQUAL(first(errors_of(*tree, ok)), "<valid>");
  auto bad = boost::json::parse(R"({"v":1,"kids":[{"v":2,"kids":[{"v":"x"}]}]})");
  CAF_CHECK_NOT_EQUAL(first(errors_of(*tree, bad)), "<valid>");
  auto root = compile(R"({"type":"object","properties":{"next":{"$ref":"#"}}})");
  CAF_REQUIRE(root != nullptr);
  CAF_CHECK_EQUAL(first(errors_of(*root, boost::json::parse(R"({"next":{"next":{}}})"))), "<valid>");
  // multipleOf must be a number > 0 (valijson divided by "0" as an integer).
  for (std::string bad : {R"({"multipleOf":"0"})", R"({"multipleOf":0})", R"({"multipleOf":-2})",
                          R"({"properties":{"a":{"multipleOf":"3"}}})"}) {
    CAF_CHECK_EQUAL(compile_error(bad), "multipleOf must be a number greater than 0");
  }
  CAF_CHECK_EQUAL(first(errors_of(*compile(R"({"multipleOf":0.5})"), boost::json::value(1.5))), "<valid>");
  // "$ref" inside a value (enum, const, default) is data, not a reference.
  CAF_CHECK(compile(R"({"enum":[{"$ref":"#/nowhere"}]})") != nullptr);
}

CAF_TEST(patternProperties keys are capped before std::regex sees them) {
  auto s = compile(R"({"type":"object","patternProperties":{"^k":{"type":"number"}}})");
  boost::json::object o;
  o[std::string(2000, 'k')] = 1;
  auto e = errors_of(*s, o);
  CAF_REQUIRE(!e.empty());
  CAF_CHECK(e.front().find("longer than 1024 characters") != std::string::npos);
  boost::json::object ok;
  ok["kk"] = 1;
  CAF_CHECK_EQUAL(first(errors_of(*s, ok)), "<valid>");
}

CAF_TEST(ids that are not valid JSON are refused with a null id) {
  for (std::string bad : {R"({"jsonrpc":"2.0","method":"m","id":-abc})",
                          R"({"jsonrpc":"2.0","method":"m","id":1.})",
                          R"({"jsonrpc":"2.0","method":"m","id":01})",
                          R"({"jsonrpc":"2.0","method":"m","id":640e1751757175175})",
                          R"({"jsonrpc":"2.0","method":"m","id":280e-00000000000000000000000000})",
                          R"({"jsonrpc":"2.0","method":"m","id":"a\udc00b"})",
                          R"({"jsonrpc":"2.0","method":"m","id":"a\ud800b"})",
                          R"({"jsonrpc":"2.0","method":"m","id":"a\ud800\u0041"})",
                          R"({"jsonrpc":"2.0","method":"m","id":"a\qb"})",
                          "{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":\"a\tb\"}"}) {
    CAF_MESSAGE(bad);
    rpc::message m;
    rpc::decode_error err;
    CAF_CHECK(!rpc::decode(bad, m, err));
    CAF_CHECK_EQUAL(err.code, rpc::code::parse_error);
    CAF_CHECK_EQUAL(err.id, "null");
    // The reply built from it is valid JSON.
    auto reply = rpc::error_response(err.id, rpc::error_object(err.code, err.message));
    CAF_CHECK(rpc::validate(reply));
  }
  for (std::string good : {R"({"jsonrpc":"2.0","method":"m","id":-1.5e3})",
                           R"({"jsonrpc":"2.0","method":"m","id":"\ud83d\ude00"})",
                           R"({"jsonrpc":"2.0","method":"m","id":"a\u00e9\n"})"}) {
    rpc::message m;
    rpc::decode_error err;
    CAF_CHECK(rpc::decode(good, m, err));
  }
}

CAF_TEST(params results and errors are read whole before anyone relays them) {
  // The envelope reader skips these members; a runtime's chunk or result with
  // a broken scalar was relayed to its caller as it was.
  for (std::string bad : {R"({"jsonrpc":"2.0","method":"streamChunk","params":{"requestId":"1","chunk":tru}})",
                          R"({"jsonrpc":"2.0","method":"m","id":7,"params":[NaN]})",
                          R"({"jsonrpc":"2.0","id":"3","result":{"a":01}})",
                          R"({"jsonrpc":"2.0","id":"3","error":{"code":1,"message":"x\q"}})",
                          "{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":{\"n\":1\x01}}"}) {
    CAF_MESSAGE(bad);
    rpc::message m;
    rpc::decode_error err;
    CAF_CHECK(!rpc::decode(bad, m, err));
    CAF_CHECK_EQUAL(err.code, rpc::code::parse_error);
    CAF_CHECK(err.message.find("not valid JSON") != std::string::npos || bad.find('\x01') != std::string::npos);
  }
  // The id survives, so the reply reaches the sender's call.
  std::string frame = R"({"jsonrpc":"2.0","method":"m","id":7,"params":[NaN]})";
  rpc::message m;
  rpc::decode_error err;
  CAF_CHECK(!rpc::decode(frame, m, err));
  CAF_CHECK_EQUAL(err.id, "7");
  std::string good = R"({"jsonrpc":"2.0","id":"3","result":{"a":[1,true,null,"\u00e9"]}})";
  CAF_CHECK(rpc::decode(good, m, err));
  CAF_CHECK_EQUAL(m.result, R"({"a":[1,true,null,"\u00e9"]})");
}

CAF_TEST(iii frames with invalid scalars are not decoded) {
  auto f = actor_host::wire::iii::decode(
    R"({"type":"invokefunction","invocation_id":"i","function_id":"f","data":{"x":NaN}})");
  CAF_REQUIRE(!f);
  CAF_CHECK(f.error().starts_with("not valid JSON: "));
  CAF_CHECK(!actor_host::wire::iii::decode(R"({"type":"invocationresult","result":tru})"));
  CAF_CHECK(actor_host::wire::iii::decode(R"({"type":"ping","x":[1,true,null]})"));
}

CAF_TEST(timeoutMs must be finite and at most max_timeout_ms) {
  caf::timespan t{};
  for (std::string bad : {"1e300", "-1", "2147483648", "\"5\""}) {
    CAF_MESSAGE(bad);
    CAF_CHECK(!actor_host::read_timeout(&bad, caf::timespan{0}, t));
  }
  std::string ok = "2147483647";
  CAF_REQUIRE(actor_host::read_timeout(&ok, caf::timespan{0}, t));
  CAF_CHECK(t > caf::timespan{0});
}

CAF_TEST(ids and keys come from the kernel CSPRNG) {
  auto before = actor_host::wire::secure_random_bytes_drawn();
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i)
    seen.insert(actor_host::wire::iii::new_uuid());
  CAF_CHECK_EQUAL(seen.size(), 1000u);
  CAF_CHECK_EQUAL(actor_host::wire::secure_random_bytes_drawn() - before, 16'000u);
  CAF_CHECK(actor_host::wire::iii::is_uuid(*seen.begin()));
  auto hex = actor_host::wire::secure_random_hex(16);
  CAF_CHECK_EQUAL(hex.size(), 32u);
  CAF_CHECK(actor_host::wire::secrets_equal("abc", "abc"));
  CAF_CHECK(!actor_host::wire::secrets_equal("abc", "abd"));
  CAF_CHECK(!actor_host::wire::secrets_equal("abc", "abcd"));
  CAF_CHECK(!actor_host::wire::secrets_equal("", "a"));
}

CAF_TEST(numbers that are not finite stringify as null as JSON.stringify does) {
  // 1e309 parses as infinity; results go out through json_stringify, and
  // "inf" in a frame is not JSON (fuzz/corpus/schema/stringify-infinity).
  auto v = boost::json::parse(R"({"a":11e308,"b":-1e309,"c":[1e400],"d":1.5})");
  CAF_CHECK_EQUAL(actor_host::schema::json_stringify(v),
                  R"({"a":null,"b":null,"c":[null],"d":1.5})");
}
