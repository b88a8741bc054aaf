#include "traces/run_span.hpp"

#include "wire/jsonrpc.hpp"

#include <charconv>
#include <cstdint>
#include <cstring>

namespace actor_host::traces {

namespace {

// Counts what a writer above would append, without writing it.
struct json_length {
  std::size_t n = 0;
  json_length& operator+=(std::string_view text) {
    n += text.size();
    return *this;
  }
  json_length& operator+=(char) {
    ++n;
    return *this;
  }
  void append(std::string_view text) {
    n += text.size();
  }
};

// Whether `text` holds a byte JSON escapes ('"', '\\', below 0x20). Eight
// bytes at a time (the exact any-byte tests of "Bit Twiddling Hacks": a
// word has a byte below n iff (w - n*0x01..) & ~w & 0x80.. is not 0): each
// route span's JSON is counted as it is stored (span_json_size), some 200
// bytes of ids, names and attributes, and the byte loop was most of that
// (bench/runs/2026-12-07-trace-lean.md).
bool needs_escape(std::string_view text) noexcept {
  constexpr std::uint64_t ones = 0x0101010101010101ull;
  constexpr std::uint64_t highs = 0x8080808080808080ull;
  auto below = [](std::uint64_t w, std::uint64_t n) { return (w - n * ones) & ~w & highs; };
  auto escapes = [&](const char* at) {
    std::uint64_t w;
    std::memcpy(&w, at, 8);
    return (below(w, 0x20) | below(w ^ ('"' * ones), 1) | below(w ^ ('\\' * ones), 1)) != 0;
  };
  auto* p = text.data();
  auto n = text.size();
  if (n >= 8) {
    for (; n >= 8; p += 8, n -= 8)
      if (escapes(p))
        return true;
    // The last bytes as the word that ends the text (it overlaps the one
    // before): most texts here (ids, names) are not a multiple of 8 long,
    // and the byte loop below was a third of the check.
    return n > 0 && escapes(p + n - 8);
  }
  for (; n > 0; ++p, --n)
    if (*p == '"' || *p == '\\' || static_cast<unsigned char>(*p) < 0x20)
      return true;
  return false;
}

// `text` as the inside of a JSON string, as wire::jsonrpc::quote escapes it.
// Written in place: the keeper writes every route span, and a temporary per
// quoted field was most of span_json's cost (bench/runs/2026-12-07-trace-cost.md).
template <class Out>
void append_escaped(Out& out, std::string_view text) {
  if (needs_escape(text)) {
    auto q = wire::jsonrpc::quote(text);
    out.append(std::string_view{q}.substr(1, q.size() - 2));
    return;
  }
  out.append(text);
}

template <class Out>
void append_quoted(Out& out, std::string_view text) {
  out += '"';
  append_escaped(out, text);
  out += '"';
}

template <class Out>
void append_int(Out& out, std::int64_t n) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), n);
  out.append(std::string_view{buf, static_cast<std::size_t>(r.ptr - buf)});
}

// Counted, not written: the digits of the route span's two times were a
// tenth of span_json_size.
void append_int(json_length& out, std::int64_t n) {
  auto u = n < 0 ? 0 - static_cast<std::uint64_t>(n) : static_cast<std::uint64_t>(n);
  std::size_t digits = 1;
  for (std::uint64_t bound = 10; u >= bound && digits < 20; bound *= 10)
    ++digits;
  out.n += digits + (n < 0 ? 1 : 0);
}

// Out: a std::string, or json_length (what the text would take).
template <class Out>
void write_span_json(Out& out, const run_span& s) {
  const bool root = s.parent_span_id.empty();
  out += R"({"spanId":)";
  append_quoted(out, s.span_id);
  out += R"(,"traceId":)";
  append_quoted(out, s.trace_id);
  if (!root) {
    out += R"(,"parentSpanId":)";
    append_quoted(out, s.parent_span_id);
  }
  out += R"(,"startTime":)";
  append_int(out, s.start_ms);
  out += R"(,"endTime":)";
  append_int(out, s.end_ms);
  out += R"(,"attributes":{"genkit:type":)";
  append_quoted(out, s.kind);
  out += R"(,"genkit:metadata:subtype":)";
  append_quoted(out, s.action_type);
  out += R"(,"genkit:name":)";
  append_quoted(out, s.name);
  out += R"(,"genkit:path":"/{)";
  append_escaped(out, s.name);
  out += ",t:";
  append_escaped(out, s.kind);
  out += ",s:";
  append_escaped(out, s.action_type);
  out += R"(}","genkit:state":)";
  out += s.ok ? R"("success")" : R"("error")";
  if (root)
    out += R"(,"genkit:isRoot":true)";
  if (!s.input.empty()) {
    out += R"(,"genkit:input":)";
    append_quoted(out, s.input);
  }
  if (!s.output.empty()) {
    out += R"(,"genkit:output":)";
    append_quoted(out, s.output);
  }
  for (auto& [k, v] : s.attributes) {
    out += ',';
    append_quoted(out, k);
    out += ':';
    append_quoted(out, v);
  }
  out += R"(},"displayName":)";
  append_quoted(out, s.name);
  out += R"(,"links":[],"instrumentationLibrary":{"name":"genkit-tracer","version":"v1"})"
         R"(,"spanKind":"INTERNAL","sameProcessAsParentSpan":{"value":true},"status":)";
  if (s.ok) {
    out += R"({"code":0})";
  } else {
    out += R"({"code":2,"message":)";
    append_quoted(out, s.error_message);
    out += '}';
  }
  out += R"(,"timeEvents":{"timeEvent":[]}})";
}

// What a span's text takes besides its fields: reserved once.
constexpr std::size_t span_overhead = 512;

std::size_t text_size(const run_span& s) {
  auto n = span_overhead + s.trace_id.size() + s.span_id.size() + s.parent_span_id.size()
           + 3 * s.name.size() + 2 * (s.kind.size() + s.action_type.size()) + s.input.size()
           + s.output.size() + s.error_message.size();
  for (auto& [k, v] : s.attributes)
    n += k.size() + v.size() + 6;
  return n;
}

} // namespace

std::string span_json(const run_span& s) {
  std::string out;
  out.reserve(text_size(s));
  write_span_json(out, s);
  return out;
}

void append_span_json(std::string& out, const run_span& s) {
  out.reserve(out.size() + text_size(s));
  write_span_json(out, s);
}

std::size_t span_json_size(const run_span& s) {
  json_length n;
  write_span_json(n, s);
  return n.n;
}

std::string trace_data_json(const run_span& s) {
  std::string out;
  out.reserve(text_size(s) + 128 + s.trace_id.size() + s.name.size() + s.span_id.size());
  out += R"({"traceId":)";
  append_quoted(out, s.trace_id);
  if (s.parent_span_id.empty()) {
    out += R"(,"displayName":)";
    append_quoted(out, s.name);
    out += R"(,"startTime":)";
    append_int(out, s.start_ms);
    out += R"(,"endTime":)";
    append_int(out, s.end_ms);
  }
  out += R"(,"spans":{)";
  append_quoted(out, s.span_id);
  out += ':';
  write_span_json(out, s);
  out += "}}";
  return out;
}

} // namespace actor_host::traces
