#define CAF_SUITE ref_closure

#include <caf/test/unit_test.hpp>

#include "actors/call/describe.hpp"
#include "schema/ref_closure.hpp"

#include <boost/json.hpp>

#include <string>

using actor_host::schema::ref_limits;
using actor_host::schema::resolve_refs;
namespace json = boost::json;

namespace {

/// The schema `text` resolved, as JSON text; "error: ..." when refused.
std::string resolved(const std::string& text, const ref_limits& limits = {}) {
  json::value out;
  auto why = resolve_refs(json::parse(text), out, limits);
  return why.empty() ? json::serialize(out) : "error: " + why;
}

} // namespace

CAF_TEST(local refs are replaced by what they name transitively) {
  CAF_CHECK_EQUAL(resolved(R"({"type":"object","properties":{"a":{"$ref":"#/definitions/A"}},)"
                           R"("definitions":{"A":{"type":"array","items":{"$ref":"#/definitions/B"}},)"
                           R"("B":{"type":"string"}}})"),
                  R"({"type":"object","properties":{"a":{"type":"array","items":{"type":"string"}}}})");
  CAF_CHECK_EQUAL(resolved(R"({"$defs":{"x~y/z":{"type":"number"}},"items":[{"$ref":"#/$defs/x~0y~1z"}]})"),
                  R"({"items":[{"type":"number"}]})");
  // A pointer into properties, and into an array.
  CAF_CHECK_EQUAL(resolved(R"({"properties":{"a":{"type":"boolean"},"b":{"$ref":"#/properties/a"}}})"),
                  R"({"properties":{"a":{"type":"boolean"},"b":{"type":"boolean"}}})");
  // A property named "definitions" below the root stays.
  CAF_CHECK_EQUAL(resolved(R"({"properties":{"definitions":{"type":"string"}}})"),
                  R"({"properties":{"definitions":{"type":"string"}}})");
}

CAF_TEST(recursive schemas keep one definition in $defs) {
  auto out = resolved(R"({"type":"object","properties":{"root":{"$ref":"#/definitions/Node"}},)"
                      R"("definitions":{"Node":{"type":"object","properties":{)"
                      R"("kids":{"type":"array","items":{"$ref":"#/definitions/Node"}}}}}})");
  CAF_CHECK_EQUAL(out, R"({"type":"object","properties":{"root":{"type":"object","properties":{)"
                       R"("kids":{"type":"array","items":{"$ref":"#/$defs/Node"}}}}},)"
                       R"("$defs":{"Node":{"type":"object","properties":{"kids":{"type":"array",)"
                       R"("items":{"$ref":"#/$defs/Node"}}}}}})");
  // Two definitions naming each other, and the root naming itself.
  auto pair = resolved(R"({"$ref":"#/definitions/A","definitions":{"A":{"properties":{"b":{"$ref":"#/definitions/B"}}},)"
                       R"("B":{"properties":{"a":{"$ref":"#/definitions/A"}}}}})");
  // A cycle is cut where it closes; every definition a kept $ref names is there.
  CAF_CHECK_EQUAL(pair, R"({"properties":{"b":{"properties":{"a":{"$ref":"#/$defs/A"}}}},)"
                        R"("$defs":{"A":{"properties":{"b":{"$ref":"#/$defs/B"}}},)"
                        R"("B":{"properties":{"a":{"$ref":"#/$defs/A"}}}}})");
  // The root is expanded once below itself, then named.
  CAF_CHECK_EQUAL(resolved(R"({"properties":{"self":{"$ref":"#"}}})"),
                  R"({"properties":{"self":{"properties":{"self":{"$ref":"#/$defs/root"}}}},)"
                  R"("$defs":{"root":{"properties":{"self":{"$ref":"#/$defs/root"}}}}})");
}

CAF_TEST(refs that resolve nowhere are errors) {
  CAF_CHECK_EQUAL(resolved(R"({"$ref":"#/definitions/Nope"})"),
                  "error: the $ref '#/definitions/Nope' names nothing in the schema");
  CAF_CHECK_EQUAL(resolved(R"({"$ref":"http://example.com/s.json"})"),
                  "error: the $ref 'http://example.com/s.json' is not local (only refs into the schema itself resolve)");
  CAF_CHECK_EQUAL(resolved(R"({"$ref":7})"), "error: a $ref is not a string");
  CAF_CHECK_EQUAL(resolved(R"({"$ref":"#/items/9"})"), "error: the $ref '#/items/9' names nothing in the schema");
}

CAF_TEST(a ref bomb hits the caps) {
  // Each level names the one below twice: 2^20 copies of the leaf.
  std::string defs;
  for (int i = 0; i < 20; ++i)
    defs += "\"L" + std::to_string(i) + R"(":{"items":[{"$ref":"#/definitions/L)" + std::to_string(i + 1)
            + R"("},{"$ref":"#/definitions/L)" + std::to_string(i + 1) + R"("}]},)";
  defs += R"("L20":{"type":"string"})";
  auto out = resolved(R"({"$ref":"#/definitions/L0","definitions":{)" + defs + "}}");
  CAF_CHECK_EQUAL(out.rfind("error: the schema with its references resolved is over", 0), 0u);
  ref_limits small{1000000, 64};
  CAF_CHECK_EQUAL(resolved(R"({"description":")" + std::string(100, 'x') + R"("})", small)
                    .rfind("error: the schema with its references resolved is over 64 bytes", 0),
                  0u);
}

CAF_TEST(garbage schemas do not crash) {
  for (auto text : {"7", "null", "[]", R"([{"$ref":"#"}])", R"({"$ref":"#/0"})", R"("$ref")"}) {
    json::value out;
    resolve_refs(json::parse(text), out); // any answer, no crash
  }
  CAF_CHECK_EQUAL(resolved("[1,[2]]"), "[1,[2]]");
}

CAF_TEST(describe symbols) {
  using actor_host::describe_target;
  using actor_host::parse_describe_symbol;
  describe_target t;
  CAF_CHECK(!parse_describe_symbol("/flow/echo", t));
  CAF_CHECK_EQUAL(t.key, "/flow/echo");
  describe_target g;
  CAF_CHECK(!parse_describe_symbol("genkit.flow.Flows.create_order", g));
  CAF_CHECK_EQUAL(g.type, "flow");
  CAF_CHECK_EQUAL(g.grpc_method, "create_order");
  describe_target p;
  CAF_CHECK(!parse_describe_symbol("/genkit.tool.Tools/add", p));
  CAF_CHECK_EQUAL(p.type, "tool");
  describe_target i;
  CAF_CHECK(!parse_describe_symbol("iii.Functions.math__add", i));
  CAF_CHECK_EQUAL(i.type, "iii");
  const std::string too_long(2000, 'a');
  for (const std::string bad : {std::string{}, std::string{"echo"}, std::string{"a b"},
                                std::string{"genkit"}, std::string{"other.Service.m"}, too_long}) {
    describe_target x;
    CAF_CHECK(parse_describe_symbol(bad, x).has_value());
  }
  describe_target found;
  parse_describe_symbol("genkit.flow.Flows.a_b", found);
  std::string out;
  auto listing = R"({"actions":{"/flow/a-b":{"key":"/flow/a-b","name":"a-b","inputSchema":{"$ref":"#/definitions/X","definitions":{"X":{"type":"string"}}}}}})";
  CAF_CHECK(!actor_host::describe_from_listing(listing, found, "rt", out));
  CAF_CHECK_EQUAL(out, R"({"key":"/flow/a-b","name":"a-b","runtimeId":"rt","inputSchema":{"type":"string"}})");
  describe_target missing;
  parse_describe_symbol("/flow/nope", missing);
  auto err = actor_host::describe_from_listing(listing, missing, "", out);
  CAF_REQUIRE(err.has_value());
  CAF_CHECK_EQUAL(err->status, 5); // NOT_FOUND
  CAF_CHECK_EQUAL(err->http, 404);
  CAF_CHECK_NOT_EQUAL(err->object.find(R"("code":5)"), std::string::npos);
}
