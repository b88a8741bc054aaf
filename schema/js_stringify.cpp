#include "schema/js_stringify.hpp"

#include "wire/jsonrpc.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

namespace actor_host::schema {

namespace json = boost::json;

/// ECMAScript Number::toString(10); JSON.stringify writes null for what is
/// not finite (a number like 1e309 parses as infinity).
std::string js_number(double x) {
  if (!std::isfinite(x))
    return "null";
  if (x == 0)
    return "0"; // also -0
  char buf[40];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  if (ec != std::errc{})
    return "null";
  std::string_view s{buf, static_cast<size_t>(end - buf)};
  std::string out;
  if (s.front() == '-') {
    out += '-';
    s.remove_prefix(1);
  }
  // s = d[.ddd]e±XX: digits and decimal exponent.
  auto epos = s.find('e');
  std::string digits{s.substr(0, 1)};
  if (epos > 1)
    digits += s.substr(2, epos - 2);
  int exp = std::atoi(std::string{s.substr(epos + 1)}.c_str());
  int k = static_cast<int>(digits.size());
  int n = exp + 1; // position of the decimal point
  if (k <= n && n <= 21) {
    out += digits;
    out.append(static_cast<size_t>(n - k), '0');
  } else if (0 < n && n <= 21) {
    out += digits.substr(0, static_cast<size_t>(n));
    out += '.';
    out += digits.substr(static_cast<size_t>(n));
  } else if (-6 < n && n <= 0) {
    out += "0.";
    out.append(static_cast<size_t>(-n), '0');
    out += digits;
  } else {
    out += digits.substr(0, 1);
    if (k > 1) {
      out += '.';
      out += digits.substr(1);
    }
    out += 'e';
    out += n - 1 >= 0 ? '+' : '-';
    out += std::to_string(std::abs(n - 1));
  }
  return out;
}

namespace {

void write_json(std::string& out, const json::value& v, int step, std::string& indent) {
  auto newline = [&] {
    if (step > 0) {
      out += '\n';
      out += indent;
    }
  };
  switch (v.kind()) {
    case json::kind::null: out += "null"; break;
    case json::kind::bool_: out += v.get_bool() ? "true" : "false"; break;
    case json::kind::int64: out += std::to_string(v.get_int64()); break;
    case json::kind::uint64: out += std::to_string(v.get_uint64()); break;
    case json::kind::double_: out += js_number(v.get_double()); break;
    case json::kind::string: out += wire::jsonrpc::quote(v.get_string()); break;
    case json::kind::array: {
      auto& a = v.get_array();
      if (a.empty()) {
        out += "[]";
        break;
      }
      out += '[';
      indent.append(static_cast<size_t>(step), ' ');
      for (size_t i = 0; i < a.size(); ++i) {
        if (i > 0)
          out += ',';
        newline();
        write_json(out, a[i], step, indent);
      }
      indent.resize(indent.size() - static_cast<size_t>(step));
      newline();
      out += ']';
      break;
    }
    case json::kind::object: {
      auto& o = v.get_object();
      if (o.empty()) {
        out += "{}";
        break;
      }
      out += '{';
      indent.append(static_cast<size_t>(step), ' ');
      bool first = true;
      for (auto& m : o) {
        if (!first)
          out += ',';
        first = false;
        newline();
        out += wire::jsonrpc::quote(m.key());
        out += step > 0 ? ": " : ":";
        write_json(out, m.value(), step, indent);
      }
      indent.resize(indent.size() - static_cast<size_t>(step));
      newline();
      out += '}';
      break;
    }
  }
}
} // namespace

std::string json_stringify(const json::value& v, int indent) {
  std::string out;
  std::string ind;
  write_json(out, v, std::max(indent, 0), ind);
  return out;
}

} // namespace actor_host::schema
