#include "wire/jsonrpc.hpp"
#include "wire/json_raw.hpp"

#include <simdjson.h>

#include <cctype>
#include <charconv>
#include <cmath>

namespace actor_host::wire::jsonrpc {

namespace od = simdjson::ondemand;
using json_raw::raw_of;

namespace {

// One parser per thread: a handler runs to completion on one thread, and the
// parser's buffers are reused across frames.
od::parser& thread_parser() {
  thread_local od::parser parser;
  return parser;
}

// 3.0.1 has no document::at_end(); current_location() fails once the
// iterator has passed the last token.
bool at_end(od::document& doc) {
  const char* p = nullptr;
  return doc.current_location().get(p) != simdjson::SUCCESS;
}

// Walks every value so that skipped scalars are checked too.
simdjson::error_code walk(od::value v, int depth) {
  if (depth > max_json_depth)
    return simdjson::DEPTH_ERROR;
  od::json_type t;
  if (auto e = v.type().get(t))
    return e;
  switch (t) {
    case od::json_type::object: {
      od::object o;
      if (auto e = v.get_object().get(o))
        return e;
      for (auto field : o) {
        std::string_view k;
        if (auto e = field.unescaped_key().get(k))
          return e;
        if (auto e = walk(field.value(), depth + 1))
          return e;
      }
      return simdjson::SUCCESS;
    }
    case od::json_type::array: {
      od::array a;
      if (auto e = v.get_array().get(a))
        return e;
      for (auto el : a) {
        od::value x;
        if (auto e = el.get(x))
          return e;
        if (auto e = walk(x, depth + 1))
          return e;
      }
      return simdjson::SUCCESS;
    }
    case od::json_type::number: {
      double d;
      return v.get_double().get(d);
    }
    case od::json_type::string: {
      std::string_view s;
      return v.get_string().get(s);
    }
    case od::json_type::boolean: {
      bool b;
      return v.get_bool().get(b);
    }
    case od::json_type::null:
    {
      bool null = false;
      if (auto e = v.is_null().get(null))
        return e;
      return null ? simdjson::SUCCESS : simdjson::INCORRECT_TYPE;
    }
  }
  return simdjson::INCORRECT_TYPE;
}

// Scalar documents cannot be read as od::value; handle them separately.
simdjson::error_code walk_document(od::document& doc) {
  od::json_type t;
  if (auto e = doc.type().get(t))
    return e;
  simdjson::error_code e = simdjson::SUCCESS;
  switch (t) {
    case od::json_type::object:
    case od::json_type::array: {
      od::value v;
      if ((e = doc.get_value().get(v)))
        return e;
      e = walk(v, 0);
      break;
    }
    case od::json_type::number: {
      double d;
      e = doc.get_double().get(d);
      break;
    }
    case od::json_type::string: {
      std::string_view s;
      e = doc.get_string().get(s);
      break;
    }
    case od::json_type::boolean: {
      bool b;
      e = doc.get_bool().get(b);
      break;
    }
    case od::json_type::null:
    {
      bool null = false;
      e = doc.is_null().get(null);
      if (!e && !null)
        e = simdjson::INCORRECT_TYPE;
      break;
    }
  }
  if (e)
    return e;
  return at_end(doc) ? simdjson::SUCCESS : simdjson::TRAILING_CONTENT;
}

std::string describe(simdjson::error_code e) {
  return simdjson::error_message(e);
}

bool digits(std::string_view s, std::size_t& i) {
  auto start = i;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9')
    ++i;
  return i > start;
}

bool hex4(std::string_view s, std::size_t i) {
  if (i + 4 > s.size())
    return false;
  for (auto j = i; j < i + 4; ++j)
    if (!std::isxdigit(static_cast<unsigned char>(s[j])))
      return false;
  return true;
}

/// A string or number token exactly as JSON spells it. The parser has only
/// located the token (and checked UTF-8) so far, and cannot be asked to
/// re-read it while it is inside the frame.
bool scalar_token_ok(std::string_view s) {
  if (s.empty())
    return false;
  if (s.front() == '"') {
    if (s.size() < 2 || s.back() != '"')
      return false;
    for (std::size_t i = 1; i + 1 < s.size(); ++i) {
      auto c = static_cast<unsigned char>(s[i]);
      if (c < 0x20 || c == '"')
        return false;
      if (c != '\\')
        continue;
      if (i + 2 >= s.size())
        return false;
      auto e = s[++i];
      if (e == 'u') {
        if (!hex4(s, i + 1) || i + 5 >= s.size())
          return false;
        auto unit = std::stoul(std::string{s.substr(i + 1, 4)}, nullptr, 16);
        i += 4;
        // Surrogates come in pairs (high, then low) or the parser refuses them.
        if (unit >= 0xDC00 && unit <= 0xDFFF)
          return false;
        if (unit >= 0xD800 && unit <= 0xDBFF) {
          if (i + 7 >= s.size() || s[i + 1] != '\\' || s[i + 2] != 'u' || !hex4(s, i + 3))
            return false;
          auto low = std::stoul(std::string{s.substr(i + 3, 4)}, nullptr, 16);
          if (low < 0xDC00 || low > 0xDFFF)
            return false;
          i += 6;
        }
      } else if (std::string_view{"\"\\/bfnrt"}.find(e) == std::string_view::npos) {
        return false;
      }
    }
    return true;
  }
  std::size_t i = 0;
  if (s[i] == '-')
    ++i;
  if (i < s.size() && s[i] == '0')
    ++i;
  else if (!digits(s, i))
    return false;
  if (i < s.size() && s[i] == '.' && !digits(s, ++i))
    return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-'))
      ++i;
    auto from = i;
    // simdjson refuses exponents of 20 digits or more, leading zeros
    // included (`1e-000...0`): an echoed id must pass our own parser.
    if (!digits(s, i) || i - from > 18)
      return false;
  }
  if (i != s.size())
    return false;
  // 1e400 is JSON's syntax but no parser's number (JSON.parse makes it
  // Infinity, simdjson refuses it): an id echoed back must read as one.
  double d = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
  return ec == std::errc{} && end == s.data() + s.size() && std::isfinite(d);
}

// simdjson needs readable padding after the text: copy when unsure.
struct padded {
  explicit padded(std::string_view s) {
    buf.reserve(s.size() + simdjson::SIMDJSON_PADDING);
    buf.assign(s);
  }
  std::string buf;
};

// `json` itself with room for the parser's padding after it (a copy's worth
// of capacity at most once; views into it taken earlier are invalid after).
void pad(std::string& json) {
  if (json.capacity() < json.size() + simdjson::SIMDJSON_PADDING)
    json.reserve(json.size() + simdjson::SIMDJSON_PADDING);
}

} // namespace

bool decode(std::string& frame, message& out, decode_error& err) {
  out = message{}; // nothing of an earlier frame may pass for this one's
  pad(frame);
  auto fail = [&](int c, std::string m) {
    err.code = c;
    err.message = std::move(m);
    return false;
  };
  od::document doc;
  if (auto e = thread_parser().iterate(frame.data(), frame.size(), frame.capacity()).get(doc))
    return fail(code::parse_error, "Parse error: " + describe(e));
  od::json_type t;
  if (auto e = doc.type().get(t))
    return fail(code::parse_error, "Parse error: " + describe(e));
  if (t != od::json_type::object) {
    // The first character only suggests a type: check the whole text before
    // calling it valid JSON of the wrong shape.
    if (auto e = walk_document(doc))
      return fail(code::parse_error, "Parse error: " + describe(e));
    if (t == od::json_type::array)
      return fail(code::invalid_request,
                  "Invalid request: batches are not supported, send one JSON-RPC object per frame");
    return fail(code::invalid_request, "Invalid request: expected a JSON-RPC object");
  }
  od::object obj;
  if (auto e = doc.get_object().get(obj))
    return fail(code::parse_error, "Parse error: " + describe(e));
  bool has_method = false;
  bool has_id = false;
  std::string_view invalid;
  for (auto field : obj) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key))
      return fail(code::parse_error, "Parse error: " + describe(e));
    od::value v;
    if (auto e = field.value().get(v))
      return fail(code::parse_error, "Parse error: " + describe(e));
    std::string_view raw;
    if (key == "method") {
      std::string_view m;
      if (v.get_string().get(m)) {
        invalid = "method must be a string";
        continue;
      }
      out.method.assign(m);
      has_method = true;
    } else if (key == "id") {
      od::json_type it;
      if (auto e = v.type().get(it))
        return fail(code::parse_error, "Parse error: " + describe(e));
      if (auto e = raw_of(v, raw))
        return fail(code::parse_error, "Parse error: " + describe(e));
      if (it == od::json_type::string || it == od::json_type::number) {
        // The type comes from the first character only (`-abc` "is" a
        // number), and an id is echoed into every reply: read it whole.
        if (!scalar_token_ok(raw))
          return fail(code::parse_error,
                      "Parse error: the id is not a valid JSON string or number");
        out.id.assign(raw);
        err.id = out.id;
        has_id = true;
      } else if (it != od::json_type::null) {
        invalid = "id must be a string or a number";
      }
    } else if (key == "params" || key == "result" || key == "error") {
      if (auto e = raw_of(v, raw))
        return fail(code::parse_error, "Parse error: " + describe(e));
      auto& dst = key == "params" ? out.params : key == "result" ? out.result : out.error;
      // find_members parses params in place, and the check below reads all three
      dst.reserve(raw.size() + simdjson::SIMDJSON_PADDING);
      dst.assign(raw);
    }
  }
  if (!at_end(doc))
    return fail(code::parse_error, "Parse error: trailing content after the JSON object");
  // The envelope's reader skipped these without reading their scalars
  // (`tru`, `NaN` pass it), and they are relayed to other peers as they are:
  // every one is read whole here, once the envelope's document is done with
  // the thread's parser.
  for (auto [name, raw] : {std::pair{"params", &out.params}, std::pair{"result", &out.result},
                           std::pair{"error", &out.error}}) {
    if (raw->empty())
      continue;
    od::document member;
    auto e = thread_parser().iterate(raw->data(), raw->size(), raw->capacity()).get(member);
    if (!e)
      e = walk_document(member);
    if (e)
      return fail(code::parse_error,
                  std::string{"Parse error: "} + name + " is not valid JSON: " + describe(e));
  }
  if (!invalid.empty())
    return fail(code::invalid_request, "Invalid request: " + std::string{invalid});
  if (has_method) {
    out.kind = has_id ? kind::request : kind::notification;
    return true;
  }
  if (has_id && (!out.result.empty() || !out.error.empty())) {
    out.kind = kind::response;
    return true;
  }
  if (has_id)
    return fail(code::invalid_request, "Invalid request: a response needs result or error");
  return fail(code::invalid_request, "Invalid request: missing method");
}

const std::string* object_members::find(std::string_view name) const {
  for (auto& [k, v] : members)
    if (k == name)
      return &v;
  return nullptr;
}

namespace {

wire::expected<object_members> split_at(const char* data, std::size_t size,
                                        std::size_t readable) {
  od::document doc;
  if (auto e = thread_parser().iterate(data, size, readable).get(doc))
    return wire::unexpected{describe(e)};
  od::object obj;
  if (doc.get_object().get(obj))
    return wire::unexpected{"expected a JSON object"};
  object_members out;
  // A call's params have a handful of members: one allocation, not one per
  // doubling.
  out.members.reserve(8);
  for (auto field : obj) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key))
      return wire::unexpected{describe(e)};
    od::value v;
    std::string_view raw;
    if (auto e = field.value().get(v); e || (e = raw_of(v, raw)))
      return wire::unexpected{describe(e)};
    out.members.emplace_back(std::string{key}, std::string{raw});
  }
  if (!at_end(doc))
    return wire::unexpected{"trailing content after the JSON object"};
  return out;
}

bool validate_at(const char* data, std::size_t size, std::size_t readable, std::string* why) {
  od::document doc;
  auto e = thread_parser().iterate(data, size, readable).get(doc);
  if (!e)
    e = walk_document(doc);
  if (e && why)
    *why = describe(e);
  return !e;
}

} // namespace

wire::expected<object_members> split_object(std::string_view json) {
  padded p{json};
  return split_at(p.buf.data(), p.buf.size(), p.buf.capacity());
}

wire::expected<object_members> split_object_in_place(std::string& json) {
  pad(json);
  return split_at(json.data(), json.size(), json.capacity());
}

namespace {

// `readable`: bytes readable from json.data(), at least json.size() + padding.
bool find_members_at(const char* data, std::size_t size, std::size_t readable,
                     std::initializer_list<std::string_view> names, std::string_view* out) {
  for (std::size_t i = 0; i < names.size(); ++i)
    out[i] = {};
  od::document doc;
  if (thread_parser().iterate(data, size, readable).get(doc))
    return false;
  od::object obj;
  if (doc.get_object().get(obj))
    return false;
  std::size_t found = 0;
  for (auto field : obj) {
    std::string_view key;
    if (field.unescaped_key().get(key))
      return false;
    std::size_t i = 0;
    for (auto n : names) {
      if (n == key)
        break;
      ++i;
    }
    if (i == names.size() || !out[i].empty())
      continue; // skipped by the next iteration step
    od::value v;
    if (field.value().get(v) || raw_of(v, out[i]))
      return false;
    out[i] = json_raw::trim(out[i]); // an object's raw text keeps what follows it
    if (++found == names.size())
      break; // the rest of the object is not needed
  }
  return true;
}

} // namespace

bool find_members(std::string& json, std::initializer_list<std::string_view> names,
                  std::string_view* out) {
  pad(json);
  return find_members_at(json.data(), json.size(), json.capacity(), names, out);
}

bool find_members(const std::string& owner, std::string_view part,
                  std::initializer_list<std::string_view> names, std::string_view* out) {
  auto end = owner.data() + owner.capacity();
  if (part.data() < owner.data() || part.data() + part.size() > owner.data() + owner.size()
      || static_cast<std::size_t>(end - part.data()) < part.size() + simdjson::SIMDJSON_PADDING) {
    // Views into a padded copy would dangle; callers pass parts of strings
    // that have padding (decode and find_members reserve it).
    for (std::size_t i = 0; i < names.size(); ++i)
      out[i] = {};
    return false;
  }
  return find_members_at(part.data(), part.size(), static_cast<std::size_t>(end - part.data()),
                         names, out);
}

bool validate(std::string_view json, std::string* why) {
  padded p{json};
  return validate_at(p.buf.data(), p.buf.size(), p.buf.capacity(), why);
}

bool validate_in_place(std::string& json, std::string* why) {
  pad(json);
  return validate_at(json.data(), json.size(), json.capacity(), why);
}

bool string_value(std::string_view raw, std::string& out) {
  if (raw.size() < 2 || raw.front() != '"')
    return false;
  if (raw.find('\\') == std::string_view::npos) {
    out.assign(raw.substr(1, raw.size() - 2));
    return true;
  }
  padded p{raw};
  od::document doc;
  std::string_view s;
  if (thread_parser().iterate(p.buf.data(), p.buf.size(), p.buf.capacity()).get(doc)
      || doc.get_string().get(s))
    return false;
  out.assign(s);
  return true;
}

bool number_value(std::string_view raw, double& out) {
  if (raw.empty() || !(raw.front() == '-' || (raw.front() >= '0' && raw.front() <= '9')))
    return false;
  padded p{raw};
  od::document doc;
  return !thread_parser().iterate(p.buf.data(), p.buf.size(), p.buf.capacity()).get(doc)
         && !doc.get_double().get(out);
}

} // namespace actor_host::wire::jsonrpc
