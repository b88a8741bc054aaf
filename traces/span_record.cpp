#include "traces/span_record.hpp"

#include <charconv>

namespace actor_host::traces {

namespace {

// Strings as `<length>:<bytes>`, numbers as `<n>;`: no escaping, any bytes.
void put(std::string& out, std::int64_t n) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), n);
  out.append(buf, r.ptr);
  out += ';';
}

void put(std::string& out, std::string_view text) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), text.size());
  out.append(buf, r.ptr);
  out += ':';
  out.append(text);
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
  out.clear();
  out.reserve(64 + s.parent_span_id.size() + s.kind.size() + s.action_type.size()
              + s.name.size() + s.input.size() + s.output.size() + s.error_message.size());
  out += span_record_mark;
  out += '1'; // the layout's version
  put(out, s.parent_span_id);
  put(out, s.kind);
  put(out, s.action_type);
  put(out, s.name);
  put(out, s.input);
  put(out, s.output);
  put(out, std::int64_t{s.ok ? 1 : 0});
  put(out, s.error_message);
  put(out, s.start_ms);
  put(out, s.end_ms);
  put(out, static_cast<std::int64_t>(s.attributes.size()));
  for (auto& [k, v] : s.attributes) {
    put(out, k);
    put(out, v);
  }
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
