#define CAF_SUITE jsonrpc

#include <caf/test/unit_test.hpp>

#include "wire/jsonrpc.hpp"

#include <string>

namespace rpc = actor_host::wire::jsonrpc;

namespace {

struct decoded {
  bool ok = false;
  rpc::message msg;
  rpc::decode_error err;
};

decoded decode(std::string frame) {
  decoded d;
  d.ok = rpc::decode(frame, d.msg, d.err);
  return d;
}

bool starts_with(const std::string& s, std::string_view prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

bool contains(const std::string& s, std::string_view needle) {
  return s.find(needle) != std::string::npos;
}

// validate() must answer, never throw: 1 valid, 0 invalid, -1 it threw.
int validate_outcome(std::string_view json, std::string* why = nullptr) {
  try {
    return rpc::validate(json, why) ? 1 : 0;
  } catch (const std::exception& e) {
    CAF_MESSAGE("validate(" << json << ") threw: " << e.what());
    return -1;
  }
}

} // namespace

// -- decode: the three kinds ---------------------------------------------------

CAF_TEST(decode request keeps params raw) {
  auto d = decode(
    R"({"jsonrpc":"2.0","method":"runAction","params":{"key":"/flow/x","input":[1,{"a":null}]},"id":"3"})");
  CAF_REQUIRE(d.ok);
  CAF_CHECK(d.msg.kind == rpc::kind::request);
  CAF_CHECK_EQUAL(d.msg.method, "runAction");
  CAF_CHECK_EQUAL(d.msg.id, R"("3")");
  CAF_CHECK_EQUAL(d.msg.params, R"({"key":"/flow/x","input":[1,{"a":null}]})");
  CAF_CHECK(d.msg.result.empty());
  CAF_CHECK(d.msg.error.empty());
}

CAF_TEST(decode keeps string and numeric ids raw) {
  auto s = decode(R"({"jsonrpc":"2.0","method":"m","id":"42"})");
  CAF_REQUIRE(s.ok);
  CAF_CHECK_EQUAL(s.msg.id, R"("42")");
  auto n = decode(R"({"jsonrpc":"2.0","method":"m","id":42})");
  CAF_REQUIRE(n.ok);
  CAF_CHECK_EQUAL(n.msg.id, "42");
  // Whitespace around a scalar id is not part of it.
  auto w = decode("{ \"method\" : \"m\" , \"id\" : 7 \n}");
  CAF_REQUIRE(w.ok);
  CAF_CHECK_EQUAL(w.msg.id, "7");
  auto f = decode(R"({"method":"m","id":-1.5e3})");
  CAF_REQUIRE(f.ok);
  CAF_CHECK_EQUAL(f.msg.id, "-1.5e3");
}

CAF_TEST(decode notification) {
  auto d = decode(R"({"jsonrpc":"2.0","method":"streamChunk","params":{"requestId":"1","chunk":"x"}})");
  CAF_REQUIRE(d.ok);
  CAF_CHECK(d.msg.kind == rpc::kind::notification);
  CAF_CHECK_EQUAL(d.msg.method, "streamChunk");
  CAF_CHECK(d.msg.id.empty());
  CAF_CHECK_EQUAL(d.msg.params, R"({"requestId":"1","chunk":"x"})");
  // A notification without params.
  auto bare = decode(R"({"jsonrpc":"2.0","method":"ping"})");
  CAF_REQUIRE(bare.ok);
  CAF_CHECK(bare.msg.kind == rpc::kind::notification);
  CAF_CHECK(bare.msg.params.empty());
}

CAF_TEST(decode responses) {
  auto r = decode(R"({"jsonrpc":"2.0","result":{"actions":{}},"id":"1"})");
  CAF_REQUIRE(r.ok);
  CAF_CHECK(r.msg.kind == rpc::kind::response);
  CAF_CHECK_EQUAL(r.msg.id, R"("1")");
  CAF_CHECK_EQUAL(r.msg.result, R"({"actions":{}})");
  CAF_CHECK(r.msg.error.empty());
  // Scalar results are kept raw too.
  auto s = decode(R"({"jsonrpc":"2.0","result":"done","id":2})");
  CAF_REQUIRE(s.ok);
  CAF_CHECK_EQUAL(s.msg.result, R"("done")");
  auto e = decode(R"({"jsonrpc":"2.0","error":{"code":-32000,"message":"boom","data":{"code":13}},"id":"9"})");
  CAF_REQUIRE(e.ok);
  CAF_CHECK(e.msg.kind == rpc::kind::response);
  CAF_CHECK_EQUAL(e.msg.id, R"("9")");
  CAF_CHECK_EQUAL(e.msg.error, R"({"code":-32000,"message":"boom","data":{"code":13}})");
  CAF_CHECK(e.msg.result.empty());
}

// -- decode: failures ---------------------------------------------------------------

CAF_TEST(parse errors are -32700 with a null id) {
  for (auto frame : {std::string{R"({"jsonrpc":"2.0","method":)"}, std::string{""},
                     std::string{R"({"method":"x",})"}, std::string{R"({"method" "x"})"}}) {
    CAF_MESSAGE("frame: " << frame);
    auto d = decode(frame);
    CAF_CHECK(!d.ok);
    CAF_CHECK_EQUAL(d.err.code, rpc::code::parse_error);
    CAF_CHECK(starts_with(d.err.message, "Parse error"));
    CAF_CHECK_EQUAL(d.err.id, "null");
  }
}

// JSON-RPC 2.0: "Invalid JSON was received by the server" is -32700, whatever
// its first character looks like.
CAF_TEST(a frame that is not json at all is a parse error) {
  for (auto frame : {"not json", "tru", "nul", "42abc", "-"}) {
    CAF_MESSAGE("frame: " << frame);
    auto d = decode(frame);
    CAF_CHECK(!d.ok);
    CAF_CHECK_EQUAL(d.err.code, rpc::code::parse_error);
    CAF_CHECK(starts_with(d.err.message, "Parse error"));
  }
}

CAF_TEST(a batch array is an invalid request) {
  auto d = decode(R"([{"jsonrpc":"2.0","method":"listActions","id":1}])");
  CAF_CHECK(!d.ok);
  CAF_CHECK_EQUAL(d.err.code, rpc::code::invalid_request);
  CAF_CHECK(contains(d.err.message, "batch"));
  CAF_CHECK_EQUAL(d.err.id, "null");
}

CAF_TEST(non objects are invalid requests) {
  for (auto frame : {"42", R"("hello")", "null", "true"}) {
    CAF_MESSAGE("frame: " << frame);
    auto d = decode(frame);
    CAF_CHECK(!d.ok);
    CAF_CHECK_EQUAL(d.err.code, rpc::code::invalid_request);
    CAF_CHECK(starts_with(d.err.message, "Invalid request"));
  }
}

CAF_TEST(missing method is an invalid request) {
  auto d = decode(R"({"jsonrpc":"2.0","params":{}})");
  CAF_CHECK(!d.ok);
  CAF_CHECK_EQUAL(d.err.code, rpc::code::invalid_request);
  CAF_CHECK(contains(d.err.message, "missing method"));
  CAF_CHECK_EQUAL(d.err.id, "null");
  // An id without a method, a result or an error: still invalid, and the id
  // is known so the reply can carry it.
  auto with_id = decode(R"({"jsonrpc":"2.0","id":"5"})");
  CAF_CHECK(!with_id.ok);
  CAF_CHECK_EQUAL(with_id.err.code, rpc::code::invalid_request);
  CAF_CHECK_EQUAL(with_id.err.id, R"("5")");
}

CAF_TEST(method must be a string) {
  auto d = decode(R"({"jsonrpc":"2.0","method":5,"id":8})");
  CAF_CHECK(!d.ok);
  CAF_CHECK_EQUAL(d.err.code, rpc::code::invalid_request);
  CAF_CHECK(contains(d.err.message, "method must be a string"));
  CAF_CHECK_EQUAL(d.err.id, "8");
  auto obj = decode(R"({"jsonrpc":"2.0","method":{"x":1},"id":"a"})");
  CAF_CHECK(!obj.ok);
  CAF_CHECK_EQUAL(obj.err.code, rpc::code::invalid_request);
}

CAF_TEST(id must be a string or a number) {
  auto d = decode(R"({"jsonrpc":"2.0","method":"m","id":{"x":1}})");
  CAF_CHECK(!d.ok);
  CAF_CHECK_EQUAL(d.err.code, rpc::code::invalid_request);
  CAF_CHECK(contains(d.err.message, "id must be a string or a number"));
  auto b = decode(R"({"jsonrpc":"2.0","method":"m","id":true})");
  CAF_CHECK(!b.ok);
  CAF_CHECK_EQUAL(b.err.code, rpc::code::invalid_request);
}

CAF_TEST(trailing garbage is a parse error) {
  for (auto frame : {R"({"jsonrpc":"2.0","method":"m"} xyz)", R"({"jsonrpc":"2.0","method":"m"}{})",
                     R"({"jsonrpc":"2.0","method":"m","id":1} 2)"}) {
    CAF_MESSAGE("frame: " << frame);
    auto d = decode(frame);
    CAF_CHECK(!d.ok);
    CAF_CHECK_EQUAL(d.err.code, rpc::code::parse_error);
  }
  // Trailing whitespace is fine.
  auto ws = decode("{\"jsonrpc\":\"2.0\",\"method\":\"m\"}  \n");
  CAF_CHECK(ws.ok);
}

CAF_TEST(decode pads a frame without spare capacity) {
  std::string frame = R"({"jsonrpc":"2.0","method":"m","id":1})";
  frame.shrink_to_fit();
  rpc::message m;
  rpc::decode_error err;
  CAF_CHECK(rpc::decode(frame, m, err));
  CAF_CHECK_EQUAL(m.method, "m");
  // The text itself is unchanged.
  CAF_CHECK_EQUAL(frame, R"({"jsonrpc":"2.0","method":"m","id":1})");
}

// -- validate -----------------------------------------------------------------------

CAF_TEST(validate checks every scalar) {
  std::string why;
  CAF_CHECK_EQUAL(validate_outcome(R"({"a":[1,{"b":true,"c":null,"d":"x"}],"e":-2.5e-3})", &why), 1);
  CAF_CHECK_EQUAL(validate_outcome("12"), 1);
  CAF_CHECK_EQUAL(validate_outcome(R"("text")"), 1);
  CAF_CHECK_EQUAL(validate_outcome("null"), 1);
  CAF_CHECK_EQUAL(validate_outcome("[]"), 1);
  // A bad literal deep inside a value that nothing reads.
  why.clear();
  CAF_CHECK_EQUAL(validate_outcome(R"({"a":[1,{"b":tru}]})", &why), 0);
  CAF_CHECK(!why.empty());
  CAF_CHECK_EQUAL(validate_outcome(R"({"a":[1,{"b":fals}]})"), 0);
  CAF_CHECK_EQUAL(validate_outcome(R"({"a":{"b":[1,2,-]}})"), 0);
  CAF_CHECK_EQUAL(validate_outcome(R"({"a":"unterminated})"), 0);
  CAF_CHECK_EQUAL(validate_outcome(R"({"a":1} x)"), 0);
  CAF_CHECK_EQUAL(validate_outcome("[1,2,]"), 0);
  CAF_CHECK_EQUAL(validate_outcome(""), 0);
}

// A malformed null literal must be reported like any other bad literal.
CAF_TEST(validate reports a bad null literal without throwing) {
  CAF_CHECK_EQUAL(validate_outcome(R"({"a":[1,{"b":nul}]})"), 0);
  CAF_CHECK_EQUAL(validate_outcome(R"({"key":"/flow/x","input":nulx})"), 0);
  CAF_CHECK_EQUAL(validate_outcome("nul"), 0);
}

// -- split_object ---------------------------------------------------------------

CAF_TEST(split_object returns raw members) {
  auto split = rpc::split_object(R"({"a":1, "b":{"c":[1,2]},"s":"x\"y","n":null,"t":true})");
  CAF_REQUIRE(split);
  auto& o = *split;
  CAF_REQUIRE_EQUAL(o.members.size(), 5u);
  CAF_CHECK_EQUAL(o.members[0].first, "a");
  CAF_CHECK_EQUAL(o.members[0].second, "1");
  CAF_REQUIRE(o.find("b") != nullptr);
  CAF_CHECK_EQUAL(*o.find("b"), R"({"c":[1,2]})");
  CAF_REQUIRE(o.find("s") != nullptr);
  CAF_CHECK_EQUAL(*o.find("s"), R"("x\"y")");
  CAF_CHECK_EQUAL(*o.find("n"), "null");
  CAF_CHECK_EQUAL(*o.find("t"), "true");
  CAF_CHECK(o.find("missing") == nullptr);
  // Keys are unescaped.
  auto esc = rpc::split_object(R"({"k\u0065y":2})");
  CAF_REQUIRE(esc);
  CAF_CHECK(esc->find("key") != nullptr);
}

// The in-place forms (parse_run_action's, on params it owns) read what the
// copying forms read, leave the text as it was, and pad it once.
CAF_TEST(validate and split_object in place agree with their copying forms) {
  for (std::string text : {std::string{R"({"key":"/flow/x","input":{"a":[1,"\u00e9"]},"n":null})"},
                           std::string{R"({"a":tru})"}, std::string{"[1]"},
                           std::string{R"({"a":1} 2)"}, std::string{}}) {
    CAF_MESSAGE("text: " << text);
    auto own = text;
    own.shrink_to_fit();
    std::string why_copy, why_own;
    CAF_CHECK_EQUAL(rpc::validate_in_place(own, &why_own), rpc::validate(text, &why_copy));
    CAF_CHECK_EQUAL(why_own, why_copy);
    auto a = rpc::split_object(text);
    auto b = rpc::split_object_in_place(own);
    CAF_CHECK_EQUAL(own, text);
    CAF_REQUIRE_EQUAL(static_cast<bool>(a), static_cast<bool>(b));
    if (a)
      CAF_CHECK(a->members == b->members);
    else
      CAF_CHECK_EQUAL(a.error(), b.error());
    auto* at = own.data();
    CAF_CHECK(rpc::validate_in_place(own) == rpc::validate(text));
    CAF_CHECK(own.data() == at); // padded already: no second allocation
  }
}

CAF_TEST(find_members returns views of the named members in one pass) {
  std::string params = R"({"requestId":"7", "chunk" : {"a":[1,2]} ,"state":{"x":1,"traceId":"t\"1"},"requestId":"8"})";
  std::string_view f[4];
  CAF_REQUIRE(rpc::find_members(params, {"requestId", "chunk", "state", "absent"}, f));
  CAF_CHECK_EQUAL(f[0], R"("7")"); // the first occurrence counts
  CAF_CHECK_EQUAL(f[1], R"({"a":[1,2]})");
  CAF_CHECK_EQUAL(f[2], R"({"x":1,"traceId":"t\"1"})");
  CAF_CHECK(f[3].empty());
  // Views into params, which had to be padded once.
  CAF_CHECK(f[1].data() > params.data() && f[1].data() < params.data() + params.size());
  // A member of a member, parsed in place.
  std::string_view t[1];
  CAF_REQUIRE(rpc::find_members(params, f[2], {"traceId"}, t));
  std::string trace;
  CAF_CHECK(rpc::string_value(t[0], trace));
  CAF_CHECK_EQUAL(trace, "t\"1");
  // Not objects, or not JSON.
  std::string arr = "[1]", bad = R"({"requestId":)", empty;
  CAF_CHECK(!rpc::find_members(arr, {"requestId"}, f));
  CAF_CHECK(!rpc::find_members(bad, {"requestId"}, f));
  CAF_CHECK(!rpc::find_members(empty, {"requestId"}, f));
  CAF_CHECK(!rpc::find_members(params, f[1].substr(0, 3), {"a"}, t) || t[0].empty());
  // A view that is not inside the owner is refused.
  std::string other = R"({"traceId":"x"})";
  CAF_CHECK(!rpc::find_members(params, other, {"traceId"}, t));
}

CAF_TEST(split_object rejects non objects and bad json) {
  {
    auto o = rpc::split_object("[1,2]");
    CAF_CHECK(!o);
    CAF_CHECK_EQUAL(o.error(), "expected a JSON object");
  }
  {
    auto o = rpc::split_object(R"({"a":)");
    CAF_CHECK(!o);
    CAF_CHECK(!o.error().empty());
  }
  {
    auto o = rpc::split_object(R"({"a":1} 2)");
    CAF_CHECK(!o);
    CAF_CHECK(!o.error().empty());
  }
  CAF_CHECK(!rpc::split_object(""));
  {
    auto o = rpc::split_object("{}");
    CAF_REQUIRE(o);
    CAF_CHECK(o->members.empty());
  }
}

// -- scalars ------------------------------------------------------------------

CAF_TEST(string and number values) {
  std::string s;
  CAF_CHECK(rpc::string_value(R"("plain")", s));
  CAF_CHECK_EQUAL(s, "plain");
  CAF_CHECK(rpc::string_value(R"("a\u0041\n\"")", s));
  CAF_CHECK_EQUAL(s, "aA\n\"");
  CAF_CHECK(!rpc::string_value("12", s));
  CAF_CHECK(!rpc::string_value("null", s));
  double d = 0;
  CAF_CHECK(rpc::number_value("12.5", d));
  CAF_CHECK_EQUAL(d, 12.5);
  CAF_CHECK(rpc::number_value("-3", d));
  CAF_CHECK_EQUAL(d, -3.0);
  CAF_CHECK(!rpc::number_value(R"("1")", d));
  CAF_CHECK(!rpc::number_value("true", d));
  bool b = false;
  CAF_CHECK(rpc::is_bool("true", b) && b);
  CAF_CHECK(rpc::is_bool("false", b) && !b);
  CAF_CHECK(!rpc::is_bool(R"("yes")", b));
}

// -- encoding -----------------------------------------------------------------

CAF_TEST(quote escapes control characters) {
  CAF_CHECK_EQUAL(rpc::quote("plain"), R"("plain")");
  CAF_CHECK_EQUAL(rpc::quote("a\"b\\c"), R"("a\"b\\c")");
  CAF_CHECK_EQUAL(rpc::quote("\n\r\t\b\f"), R"("\n\r\t\b\f")");
  CAF_CHECK_EQUAL(rpc::quote(std::string{"\x01\x1f", 2}), R"("\u0001\u001f")");
  CAF_CHECK_EQUAL(rpc::quote(std::string{"a\0b", 3}), R"("a\u0000b")");
  // UTF-8 passes through untouched.
  CAF_CHECK_EQUAL(rpc::quote("h\xC3\xA9"), "\"h\xC3\xA9\"");
  // Whatever goes in comes back out.
  std::string all;
  for (int c = 1; c < 128; ++c)
    all += static_cast<char>(c);
  auto quoted = rpc::quote(all);
  CAF_CHECK(rpc::validate(quoted));
  std::string back;
  CAF_CHECK(rpc::string_value(quoted, back));
  CAF_CHECK_EQUAL(back, all);
}

CAF_TEST(error_object shape) {
  CAF_CHECK_EQUAL(rpc::error_object(rpc::code::method_not_found, "Method not found: x"),
                  R"({"code":-32601,"message":"Method not found: x"})");
  CAF_CHECK_EQUAL(rpc::error_object(-32000, "Runtime \"a\" gone", R"({"code":14})"),
                  R"({"code":-32000,"message":"Runtime \"a\" gone","data":{"code":14}})");
}

CAF_TEST(envelopes) {
  CAF_CHECK_EQUAL(rpc::request("listActions", "", R"("1")"),
                  R"({"jsonrpc":"2.0","method":"listActions","id":"1"})");
  CAF_CHECK_EQUAL(rpc::request("listValues", R"({"type":"defaultModel"})", "7"),
                  R"({"jsonrpc":"2.0","method":"listValues","params":{"type":"defaultModel"},"id":7})");
  CAF_CHECK_EQUAL(rpc::notification("endInputStream", R"({"requestId":"1"})"),
                  R"({"jsonrpc":"2.0","method":"endInputStream","params":{"requestId":"1"}})");
  CAF_CHECK_EQUAL(rpc::notification("ping", ""), R"({"jsonrpc":"2.0","method":"ping"})");
  CAF_CHECK_EQUAL(rpc::result_response(R"("1")", "{}"), R"({"jsonrpc":"2.0","result":{},"id":"1"})");
  CAF_CHECK_EQUAL(rpc::error_response("", R"({"code":-32700,"message":"x"})"),
                  R"({"jsonrpc":"2.0","error":{"code":-32700,"message":"x"},"id":null})");
  CAF_CHECK_EQUAL(rpc::error_response("3", "{}"), R"({"jsonrpc":"2.0","error":{},"id":3})");
  // What we encode decodes to the same parts.
  auto frame = rpc::request("runAction", R"({"key":"/flow/x"})", R"("12")");
  rpc::message m;
  rpc::decode_error err;
  CAF_REQUIRE(rpc::decode(frame, m, err));
  CAF_CHECK(m.kind == rpc::kind::request);
  CAF_CHECK_EQUAL(m.id, R"("12")");
  CAF_CHECK_EQUAL(m.params, R"({"key":"/flow/x"})");
}
