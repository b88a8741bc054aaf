#include "traces/span_record.hpp"

#include <charconv>
#include <cstring>

namespace actor_host::traces {

namespace {

// Strings as `<length>:<bytes>`, numbers as `<n>;`: no escaping, any bytes.
// Written through a pointer into room made once (pack_run_span sizes it):
// string appends, two a field, were most of packing a route span
// (bench/runs/2026-12-07-trace-lean.md).
char* put(char* out, std::int64_t n) {
  out = std::to_chars(out, out + 20, n).ptr;
  *out++ = ';';
  return out;
}

char* put(char* out, std::string_view text) {
  out = std::to_chars(out, out + 20, text.size()).ptr;
  *out++ = ':';
  std::memcpy(out, text.data(), text.size());
  return out + text.size();
}

class reader {
public:
  explicit reader(std::string_view in) : in_(in) {
  }
  bool ok() const {
    return ok_;
  }
  bool done() const {
    return in_.empty();
  }
  std::int64_t number(char end = ';') {
    std::int64_t n = 0;
    auto r = std::from_chars(in_.data(), in_.data() + in_.size(), n);
    if (r.ec != std::errc{} || r.ptr == in_.data() + in_.size() || *r.ptr != end) {
      ok_ = false;
      in_ = {};
      return 0;
    }
    in_.remove_prefix(static_cast<std::size_t>(r.ptr - in_.data()) + 1);
    return n;
  }
  std::string text() {
    auto n = number(':');
    if (!ok_ || n < 0 || static_cast<std::size_t>(n) > in_.size()) {
      ok_ = false;
      in_ = {};
      return {};
    }
    std::string out{in_.substr(0, static_cast<std::size_t>(n))};
    in_.remove_prefix(static_cast<std::size_t>(n));
    return out;
  }

private:
  std::string_view in_;
  bool ok_ = true;
};

} // namespace

std::string pack_run_span(const run_span& s) {
  std::string out;
  pack_run_span(s, out);
  return out;
}

void pack_run_span(const run_span& s, std::string& out) {
  // At most 21 bytes of digits and mark per field: 2 + 11 fields + 2 per attribute.
  std::size_t room = 2 + 21 * (11 + 2 * s.attributes.size()) + s.parent_span_id.size()
                     + s.kind.size() + s.action_type.size() + s.name.size() + s.input.size()
                     + s.output.size() + s.error_message.size();
  for (auto& [k, v] : s.attributes)
    room += k.size() + v.size();
  out.resize(room);
  char* p = out.data();
  *p++ = span_record_mark;
  *p++ = '1'; // the layout's version
  p = put(p, s.parent_span_id);
  p = put(p, s.kind);
  p = put(p, s.action_type);
  p = put(p, s.name);
  p = put(p, s.input);
  p = put(p, s.output);
  p = put(p, std::int64_t{s.ok ? 1 : 0});
  p = put(p, s.error_message);
  p = put(p, s.start_ms);
  p = put(p, s.end_ms);
  p = put(p, static_cast<std::int64_t>(s.attributes.size()));
  for (auto& [k, v] : s.attributes) {
    p = put(p, k);
    p = put(p, v);
  }
  out.resize(static_cast<std::size_t>(p - out.data()));
}

bool unpack_run_span(std::string_view packed, run_span& s) {
  if (packed.size() < 2 || packed[0] != span_record_mark || packed[1] != '1')
    return false;
  reader in{packed.substr(2)};
  s.parent_span_id = in.text();
  s.kind = in.text();
  s.action_type = in.text();
  s.name = in.text();
  s.input = in.text();
  s.output = in.text();
  s.ok = in.number() != 0;
  s.error_message = in.text();
  s.start_ms = in.number();
  s.end_ms = in.number();
  auto n = in.number();
  s.attributes.clear();
  for (std::int64_t i = 0; in.ok() && i < n; ++i) {
    auto k = in.text();
    auto v = in.text();
    s.attributes.emplace_back(std::move(k), std::move(v));
  }
  return in.ok() && in.done();
}

} // namespace actor_host::traces
