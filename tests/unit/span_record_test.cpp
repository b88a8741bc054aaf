#define CAF_SUITE span_record

#include "traces/run_span.hpp"
#include "traces/span_record.hpp"

#include <boost/json.hpp>
#include <caf/test/unit_test.hpp>

#include <random>
#include <string>

// The route spans the trace store keeps packed: every field comes back as
// it went in, whatever bytes it holds, and span_json_size counts the JSON
// load() writes for it.

using namespace actor_host;
using namespace actor_host::traces;

namespace {

// Texts with what JSON escapes and what the packing uses as separators.
std::string any_text(std::mt19937& rng) {
  static const std::string alphabet = "ab:;0123456789\"\\\n\t\x01\x1f /{}\xc3\xa9";
  std::string out(rng() % 12, ' ');
  for (auto& c : out)
    c = alphabet[rng() % alphabet.size()];
  return out;
}

run_span any_span(std::mt19937& rng) {
  run_span s;
  s.trace_id = any_text(rng);
  s.span_id = any_text(rng);
  if (rng() % 2)
    s.parent_span_id = any_text(rng);
  s.kind = any_text(rng);
  s.action_type = any_text(rng);
  s.name = any_text(rng);
  if (rng() % 3 == 0)
    s.input = any_text(rng);
  if (rng() % 3 == 0)
    s.output = any_text(rng);
  s.ok = rng() % 2;
  if (!s.ok)
    s.error_message = any_text(rng);
  s.start_ms = static_cast<std::int64_t>(rng()) - 1000;
  s.end_ms = static_cast<std::int64_t>(rng() % 2 ? rng() : 0);
  for (auto n = rng() % 4; n > 0; --n)
    s.attributes.emplace_back(any_text(rng), any_text(rng));
  return s;
}

} // namespace

CAF_TEST(a packed span gives back the JSON of the span that was packed) {
  std::mt19937 rng{11};
  for (int i = 0; i < 5000; ++i) {
    auto s = any_span(rng);
    auto packed = pack_run_span(s);
    CAF_REQUIRE(!packed.empty() && packed[0] == span_record_mark);
    run_span back;
    back.trace_id = s.trace_id; // the store's row key holds the ids
    back.span_id = s.span_id;
    CAF_REQUIRE(unpack_run_span(packed, back));
    CAF_REQUIRE_EQUAL(span_json(back), span_json(s));
    CAF_REQUIRE_EQUAL(span_json_size(s), span_json(s).size());
    CAF_CHECK_EQUAL(back.attributes.size(), s.attributes.size());
  }
}

CAF_TEST(text that pack_run_span did not write is not taken for a span) {
  run_span s;
  s.name = "echo";
  s.attributes = {{"k", "v"}};
  auto packed = pack_run_span(s);
  run_span out;
  CAF_CHECK(!unpack_run_span(R"({"spanId":"a"})", out));
  CAF_CHECK(!unpack_run_span("", out));
  CAF_CHECK(!unpack_run_span(std::string{span_record_mark} + "2", out));
  // Cut anywhere, or with bytes after it, it is refused.
  for (std::size_t n = 0; n < packed.size(); ++n)
    CAF_CHECK(!unpack_run_span(std::string_view{packed}.substr(0, n), out));
  CAF_CHECK(!unpack_run_span(packed + "x", out));
  // A length past the end.
  auto long_field = packed;
  long_field.replace(2, 1, "9"); // the parent's length, 0, becomes 9
  CAF_CHECK(!unpack_run_span(long_field, out));
  CAF_CHECK(unpack_run_span(packed, out));
  CAF_CHECK_EQUAL(out.name, "echo");
}

// The escape check looks at eight bytes at a time: a byte JSON escapes is
// found at any place in a text, and a text without one is written as it is.
CAF_TEST(span JSON escapes what it must wherever it is in a long text) {
  run_span s;
  s.trace_id = "0123456789abcdef0123456789abcdef";
  s.span_id = "0123456789abcdef";
  for (std::size_t size = 1; size <= 40; ++size) {
    for (std::size_t at = 0; at < size; ++at) {
      for (char special : {'"', '\\', '\x01', '\x1f', '\n', '\0'}) {
        s.name = std::string(size, 'a');
        s.name[at] = special;
        auto json = span_json(s);
        CAF_REQUIRE_EQUAL(span_json_size(s), json.size());
        boost::system::error_code ec;
        auto parsed = boost::json::parse(json, ec);
        CAF_REQUIRE(!ec);
        CAF_REQUIRE(std::string_view{parsed.at("displayName").as_string()} == s.name);
      }
    }
    // Bytes next to the escaped ones (' ', '!', '#', '[', ']', DEL, UTF-8)
    // are not escaped.
    s.name.clear();
    while (s.name.size() < size)
      s.name += " !#[]\x7f\xc3\xa9"[s.name.size() % 8];
    if (s.name.back() == '\xc3')
      s.name.back() = 'x';
    auto json = span_json(s);
    CAF_CHECK(json.find("\"displayName\":\"" + s.name + "\"") != std::string::npos);
  }
}

// The packed text is what store files hold: its bytes never change.
CAF_TEST(a packed span is the same bytes as store files hold) {
  run_span s;
  s.trace_id = "t";
  s.span_id = "s";
  s.parent_span_id = "0123456789abcdef";
  s.kind = "actor-host";
  s.action_type = "route";
  s.name = "actor-host rt";
  s.output = R"({"a":1})";
  s.ok = false;
  s.error_message = "INTERNAL: boom";
  s.start_ms = 1700000000000;
  s.end_ms = -5;
  s.attributes = {{"actor-host:runtime", "rt"}, {"k:", "v;"}};
  CAF_CHECK_EQUAL(pack_run_span(s),
                  "\x01" "116:0123456789abcdef10:actor-host5:route13:actor-host rt0:"
                  R"(7:{"a":1}0;14:INTERNAL: boom1700000000000;-5;2;18:actor-host:runtime2:rt)"
                  "2:k:2:v;");
}
