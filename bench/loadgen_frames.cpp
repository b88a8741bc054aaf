#include "bench/loadgen_frames.hpp"

#include "bench/frame_scan.hpp"
#include "bench/wsraw.hpp"
#include "wire/json_raw.hpp"

#include <charconv>

namespace bench {

static bool to_u64(std::string_view s, std::uint64_t& out) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc{} && r.ptr != s.data();
}

static constexpr std::string_view k_chunk_prefix =
  R"({"jsonrpc":"2.0","method":"streamChunk","params":{"requestId":)";
static constexpr std::string_view k_state_prefix =
  R"({"jsonrpc":"2.0","method":"runActionState","params":{"requestId":)";
static constexpr std::string_view k_result_prefix = R"({"jsonrpc":"2.0","result":)";
static constexpr std::string_view k_error_prefix = R"({"jsonrpc":"2.0","error":)";

// Parses a leading integer; advances `s`.
static bool eat_number(std::string_view& s, long& out) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  if (r.ec != std::errc{})
    return false;
  s.remove_prefix(static_cast<std::size_t>(r.ptr - s.data()));
  return true;
}

// Fast paths for the frame shapes actor-host and the relay produce; anything
// else goes through simdjson.
bool fast_parse(std::string_view f, inbound& m) {
  if (f.substr(0, k_chunk_prefix.size()) == k_chunk_prefix) {
    auto s = f.substr(k_chunk_prefix.size());
    long id;
    if (!eat_number(s, id))
      return false;
    // ,"chunk":{"i":123}}}
    constexpr std::string_view ck = R"(,"chunk":{")";
    if (s.substr(0, ck.size()) != ck || s.size() < ck.size() + 3)
      return false;
    s.remove_prefix(ck.size() + 1); // the key letter
    if (s.substr(0, 2) != "\":")
      return false;
    s.remove_prefix(2);
    long k;
    if (!eat_number(s, k))
      return false;
    m.method = "streamChunk";
    m.id = static_cast<std::uint64_t>(id);
    m.has_id = true;
    m.chunk_num = k;
    return true;
  }
  bool res = f.substr(0, k_result_prefix.size()) == k_result_prefix;
  bool err = !res && f.substr(0, k_error_prefix.size()) == k_error_prefix;
  if (res || err) {
    auto p = f.rfind(R"(,"id":)");
    if (p == std::string_view::npos || f.back() != '}')
      return false;
    if (!to_u64(f.substr(p + 6, f.size() - p - 7), m.id))
      return false;
    m.response = true;
    m.has_id = true;
    m.error = err;
    auto start = (res ? k_result_prefix : k_error_prefix).size();
    m.result = f.substr(start, p - start);
    return true;
  }
  return false;
}

bool slow_parse(std::string_view f, inbound& m) {
  // A numeric id or requestId; any other kind is left out (has_id stays).
  auto take_id = [&m](od::value& v) {
    std::uint64_t id;
    if (!v.get_uint64().get(id)) {
      m.id = id;
      m.has_id = true;
    }
  };
  auto on_state = [&m](std::string_view k, od::value& v) {
    return k != "traceId" || !v.get_string().get(m.trace_id);
  };
  auto on_param = [&](std::string_view k, od::value& v) {
    if (k == "requestId")
      take_id(v);
    else if (k == "state")
      return for_each_member_if_object(v, on_state);
    else if (k == "chunk") {
      std::string_view raw;
      if (actor_host::wire::json_raw::raw_of(v, raw))
        return false;
      // {"i":k} or {"q":k}
      auto c = raw.find("\":");
      if (c != std::string_view::npos) {
        auto s = raw.substr(c + 2);
        long n;
        if (eat_number(s, n))
          m.chunk_num = n;
      }
    }
    return true;
  };
  return scan_frame(f.data(), f.size(), f.size() + bench::read_padding,
                    [&](std::string_view k, od::value& v) {
                      if (k == "method")
                        return !v.get_string().get(m.method);
                      if (k == "id")
                        take_id(v);
                      else if (k == "result" || k == "error") {
                        m.response = true;
                        m.error = k == "error";
                        return !actor_host::wire::json_raw::raw_of(v, m.result);
                      } else if (k == "params")
                        return for_each_member_if_object(v, on_param);
                      return true;
                    });
}

bool is_run_action_state(std::string_view f) {
  return f.substr(0, k_state_prefix.size()) == k_state_prefix;
}

} // namespace bench
