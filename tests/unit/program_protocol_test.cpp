#define CAF_SUITE program_protocol

#include <caf/test/unit_test.hpp>

#include "actions/program_protocol.hpp"

#include <boost/json.hpp>

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

using namespace actor_host::actions;
using actor_host::wire::status_code;
namespace json = boost::json;

namespace {

/// A protocol for the action "tool" that collects its chunks.
struct fixture {
  explicit fixture(std::size_t max_line_bytes = program_protocol::default_max_line_bytes)
    : proto("tool", [this](json::value chunk) { chunks.push_back(std::move(chunk)); },
            max_line_bytes) {
  }

  /// The chunks so far as compact JSON, comma-separated.
  std::string chunks_text() const {
    std::string out;
    for (auto& c : chunks)
      out += (out.empty() ? "" : ",") + json::serialize(c);
    return out;
  }

  std::string result_text() {
    auto& r = proto.result();
    return r ? json::serialize(*r) : "<none>";
  }

  int code() const {
    return proto.failed() ? static_cast<int>(proto.failure()->code) : -1;
  }

  std::string message() const {
    return proto.failed() ? proto.failure()->message : "<none>";
  }

  bool contains(std::string_view needle) const {
    return message().find(needle) != std::string::npos;
  }

  std::vector<json::value> chunks;
  program_protocol proto;
};

int as_int(status_code code) {
  return static_cast<int>(code);
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(program_protocol_tests, fixture)

// -- line kinds ---------------------------------------------------------------

CAF_TEST(chunk lines are passed on at once and in order) {
  proto.feed("{\"chunk\": 1}\n");
  CAF_CHECK_EQUAL(chunks_text(), "1");
  proto.feed("{\"chunk\": {\"two\": [2]}}\n{\"chunk\": null}\n{\"chunk\": \"3\"}\n");
  CAF_CHECK_EQUAL(chunks_text(), R"(1,{"two":[2]},null,"3")");
  CAF_CHECK(!proto.failed());
  CAF_CHECK_EQUAL(result_text(), "<none>");
  CAF_CHECK_EQUAL(proto.lines(), 4u);
}

CAF_TEST(the last result line wins) {
  proto.feed("{\"result\": 1}\n{\"chunk\": 2}\n{\"result\": {\"a\": [true]}}\n");
  CAF_CHECK_EQUAL(result_text(), R"({"a":[true]})");
  CAF_CHECK_EQUAL(chunks_text(), "2");
  proto.feed("{\"result\": null}\n");
  CAF_CHECK_EQUAL(result_text(), "null");
  CAF_CHECK(!proto.failed());
}

CAF_TEST(an error line with a status name fails with that status) {
  proto.feed(R"({"error": {"status": "NOT_FOUND", "message": "no such thing"}})" "\n");
  CAF_CHECK_EQUAL(code(), as_int(status_code::not_found));
  CAF_CHECK_EQUAL(message(), "no such thing");
}

CAF_TEST(an error line with a status number fails with that status) {
  proto.feed(R"({"error": {"status": 7, "message": "no"}})" "\n");
  CAF_CHECK_EQUAL(code(), as_int(status_code::permission_denied));
  CAF_CHECK_EQUAL(message(), "no");
}

CAF_TEST(an error line without a status is internal) {
  proto.feed(R"({"error": {"message": "broke"}})" "\n");
  CAF_CHECK_EQUAL(code(), as_int(status_code::internal));
  CAF_CHECK_EQUAL(message(), "broke");
}

CAF_TEST(an error line with an unknown status is unknown) {
  auto check = [](std::string_view status) {
    fixture f;
    f.proto.feed(R"({"error": {"status": )" + std::string{status} + R"(, "message": "m"}})" "\n");
    CAF_CHECK_EQUAL(f.code(), as_int(status_code::unknown));
    CAF_CHECK_EQUAL(f.message(), "m");
  };
  check(R"("NOPE")");
  check(R"("not_found")"); // names are case-sensitive
  check(R"("OK")");        // OK is no failure
  check("0");
  check("17");
  check("-1");
  check("2.5");
  check("null");
}

CAF_TEST(an error line as a string is internal with that message) {
  proto.feed(R"({"error": "plain text"})" "\n");
  CAF_CHECK_EQUAL(code(), as_int(status_code::internal));
  CAF_CHECK_EQUAL(message(), "plain text");
}

CAF_TEST(an error line without a message names the action) {
  proto.feed(R"({"error": {"status": "ABORTED"}})" "\n");
  CAF_CHECK_EQUAL(code(), as_int(status_code::aborted));
  CAF_CHECK_EQUAL(message(), "program action tool failed");
  fixture numeric;
  numeric.proto.feed(R"({"error": 5})" "\n");
  CAF_CHECK_EQUAL(numeric.code(), as_int(status_code::internal));
  CAF_CHECK_EQUAL(numeric.message(), "program action tool failed");
  fixture not_text;
  not_text.proto.feed(R"({"error": {"message": 42}})" "\n");
  CAF_CHECK_EQUAL(not_text.message(), "program action tool failed");
}

// -- what a failure decides ---------------------------------------------------

CAF_TEST(output after an error line is ignored) {
  proto.feed("{\"chunk\": 1}\n{\"error\": \"first\"}\n{\"chunk\": 2}\n{\"result\": 3}\n");
  CAF_CHECK_EQUAL(chunks_text(), "1");
  CAF_CHECK_EQUAL(result_text(), "<none>");
  CAF_CHECK_EQUAL(message(), "first");
  proto.feed("{\"error\": \"second\"}\nnot json\n");
  proto.finish();
  CAF_CHECK_EQUAL(message(), "first");
  CAF_CHECK_EQUAL(chunks_text(), "1");
}

CAF_TEST(a result before an error line does not rescue the run) {
  proto.feed("{\"result\": 1}\n{\"error\": \"late\"}\n");
  CAF_CHECK(proto.failed());
  CAF_CHECK_EQUAL(message(), "late");
}

CAF_TEST(ignore_rest drops buffered and later output) {
  proto.feed("{\"chunk\": 1}\n{\"chunk\": 2");
  proto.ignore_rest();
  proto.feed("}\n{\"chunk\": 3}\n");
  proto.finish();
  CAF_CHECK_EQUAL(chunks_text(), "1");
  CAF_CHECK(!proto.failed());
}

// -- malformed lines ----------------------------------------------------------

CAF_TEST(a line that is not json fails the run naming its number) {
  proto.feed("{\"chunk\": 1}\nhello world\n{\"result\": 2}\n");
  CAF_CHECK_EQUAL(code(), as_int(status_code::internal));
  CAF_CHECK_EQUAL(message(), "program wrote stdout line 2 that is not a protocol message "
                             "(log to stderr): hello world");
  CAF_CHECK_EQUAL(chunks_text(), "1");
  CAF_CHECK_EQUAL(result_text(), "<none>");
}

CAF_TEST(json that is not a one key protocol object is a violation) {
  for (auto line : {R"([1, 2])", R"("chunk")", "42", "null", "{}",
                    R"({"chunk": 1, "result": 2})", R"({"chunck": 1})", R"({"Chunk": 1})",
                    R"({"chunk": 1)", R"({"chunk": 1} {"chunk": 2})"}) {
    fixture f;
    f.proto.feed(std::string{line} + "\n");
    CAF_CHECK_EQUAL(f.code(), as_int(status_code::internal));
    CAF_CHECK(f.contains("not a protocol message"));
    CAF_CHECK(f.contains(line));
    CAF_CHECK(f.chunks.empty());
  }
}

CAF_TEST(a long violation is shown cut at 200 bytes) {
  std::string line(300, 'x');
  proto.feed(line + "\n");
  CAF_CHECK_EQUAL(message(), "program wrote stdout line 1 that is not a protocol message "
                             "(log to stderr): "
                               + std::string(200, 'x') + "...");
}

CAF_TEST(blank lines are skipped but counted) {
  proto.feed("\n  \t \n\r\n{\"chunk\": 1}\n\nnope\n");
  CAF_CHECK_EQUAL(chunks_text(), "1");
  CAF_CHECK(contains("stdout line 6 "));
}

CAF_TEST(a trailing carriage return is dropped) {
  proto.feed("{\"chunk\": 1}\r\n{\"result\": 2}\r\n");
  CAF_CHECK(!proto.failed());
  CAF_CHECK_EQUAL(chunks_text(), "1");
  CAF_CHECK_EQUAL(result_text(), "2");
}

CAF_TEST(whitespace around the object is allowed) {
  proto.feed("  {\"chunk\": 1}\t \n");
  CAF_CHECK(!proto.failed());
  CAF_CHECK_EQUAL(chunks_text(), "1");
}

// -- partial lines ------------------------------------------------------------

CAF_TEST(a line written in pieces counts once complete) {
  proto.feed("{\"chu");
  CAF_CHECK(chunks.empty());
  proto.feed("nk\": 5}");
  CAF_CHECK(chunks.empty());
  proto.feed("\n{\"res");
  CAF_CHECK_EQUAL(chunks_text(), "5");
  proto.feed("ult\": 6}\n");
  CAF_CHECK_EQUAL(result_text(), "6");
  CAF_CHECK_EQUAL(proto.lines(), 2u);
}

CAF_TEST(byte by byte is the same as all at once) {
  std::string text = "{\"chunk\": \"a\"}\r\n\n{\"chunk\": [1,2]}\n{\"result\": {\"k\": 1}}\n";
  for (char c : text)
    proto.feed(std::string_view{&c, 1});
  proto.finish();
  fixture whole;
  whole.proto.feed(text);
  whole.proto.finish();
  CAF_CHECK_EQUAL(chunks_text(), whole.chunks_text());
  CAF_CHECK_EQUAL(chunks_text(), R"("a",[1,2])");
  CAF_CHECK_EQUAL(result_text(), whole.result_text());
  CAF_CHECK_EQUAL(proto.lines(), whole.proto.lines());
}

CAF_TEST(the last line may lack its newline) {
  proto.feed("{\"chunk\": 1}\n{\"result\": 2}");
  CAF_CHECK_EQUAL(result_text(), "<none>");
  proto.finish();
  CAF_CHECK_EQUAL(result_text(), "2");
  CAF_CHECK_EQUAL(proto.lines(), 2u);
  // A second finish has nothing left.
  proto.finish();
  CAF_CHECK_EQUAL(proto.lines(), 2u);
}

CAF_TEST(an unterminated last line must be valid too) {
  proto.feed("{\"chunk\": 1}\n{\"result\": ");
  proto.finish();
  CAF_CHECK(contains("stdout line 2 "));
}

CAF_TEST(finish without a partial line does nothing) {
  proto.feed("{\"result\": 1}\n");
  proto.finish();
  CAF_CHECK_EQUAL(proto.lines(), 1u);
  CAF_CHECK_EQUAL(result_text(), "1");
  fixture empty;
  empty.proto.finish();
  CAF_CHECK_EQUAL(empty.proto.lines(), 0u);
  CAF_CHECK(!empty.proto.failed());
}

// -- size cap -----------------------------------------------------------------

CAF_TEST(the default cap is 64 MiB) {
  CAF_CHECK_EQUAL(program_protocol::default_max_line_bytes, 64u * 1024u * 1024u);
}

CAF_TEST(a partial line over the cap fails and one at the cap is kept) {
  fixture f{16};
  f.proto.feed("{\"chunk\":");      // 9 bytes
  f.proto.feed("    1234}");        // 18 bytes: over the cap
  CAF_CHECK(f.proto.failed());
  CAF_CHECK_EQUAL(f.message(), "program wrote a stdout line longer than 16 bytes");
  CAF_CHECK(f.chunks.empty());
  fixture exact{16};
  exact.proto.feed("{\"chunk\":   123}"); // exactly 16 bytes, still open
  CAF_CHECK(!exact.proto.failed());
  exact.proto.feed("\n");
  CAF_CHECK_EQUAL(exact.chunks_text(), "123");
}

CAF_TEST(only the unfinished rest counts against the cap) {
  fixture f{16};
  // Complete lines are handled before the check, whatever their length.
  f.proto.feed("{\"chunk\": \"a long chunk line\"}\n{\"result\": 1}\n");
  CAF_CHECK(!f.proto.failed());
  CAF_CHECK_EQUAL(f.chunks_text(), R"("a long chunk line")");
  f.proto.feed("{\"chunk\": \"another long one");
  CAF_CHECK(f.proto.failed());
  CAF_CHECK(f.contains("longer than 16 bytes"));
  // After that, nothing counts, not even the rest of the line.
  f.proto.feed("\"}\n{\"chunk\": 2}\n");
  f.proto.finish();
  CAF_CHECK_EQUAL(f.chunks_text(), R"("a long chunk line")");
}

// -- the chunk handler --------------------------------------------------------

CAF_TEST(what the chunk handler throws passes through) {
  int calls = 0;
  program_protocol p{"thrower", [&](json::value) {
                       ++calls;
                       throw std::runtime_error("send failed");
                     }};
  bool thrown = false;
  try {
    p.feed("{\"chunk\": 1}\n{\"chunk\": 2}\n");
  } catch (const std::runtime_error&) {
    thrown = true;
  }
  CAF_CHECK(thrown);
  CAF_CHECK_EQUAL(calls, 1);
  CAF_CHECK(!p.failed());
}

CAF_TEST_FIXTURE_SCOPE_END()
