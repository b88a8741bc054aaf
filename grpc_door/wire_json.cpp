// Protobuf wire bytes -> the runtime's JSON for the catalog's own message
// shapes (detail/wire_json.hpp). A single forward pass over the bytes:
// fields are written as they come, the absent ones in between as to_json
// writes them, so anything that is not in field order falls back to the
// message path. Recursion follows the message nesting, capped well below
// protobuf's own limit of 100 (deeper input is protobuf's to judge).

#include "grpc_door/detail/wire_json.hpp"

#include "grpc_door/detail/json_shapes.hpp"

#include <boost/container/small_vector.hpp>
#include <google/protobuf/descriptor.h>
#include <simdjson.h>

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace actor_host::grpc_door::detail {

namespace {

namespace pb = google::protobuf;
using ftype = pb::FieldDescriptor;

static_assert(std::endian::native == std::endian::little, "fixed64 is read as the host lays it out");

constexpr int max_depth = 64;
constexpr std::size_t max_struct_members = 64; // the duplicate check is quadratic

enum wire_type { varint = 0, fixed64 = 1, length_delimited = 2 };

struct reader {
  const unsigned char* p;
  const unsigned char* end;

  explicit reader(std::string_view s)
    : p(reinterpret_cast<const unsigned char*>(s.data())), end(p + s.size()) {
  }
  bool done() const {
    return p == end;
  }
  bool read_varint(std::uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p == end)
        return false;
      auto b = *p++;
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0)
        return true;
    }
    return false;
  }
  bool read_tag(int& number, int& wt) {
    std::uint64_t t = 0;
    if (!read_varint(t) || (t >> 3) == 0 || (t >> 3) > 0x1fffffff)
      return false;
    number = static_cast<int>(t >> 3);
    wt = static_cast<int>(t & 7);
    return true;
  }
  bool read_bytes(std::string_view& out) {
    std::uint64_t n = 0;
    if (!read_varint(n) || n > static_cast<std::uint64_t>(end - p))
      return false;
    out = {reinterpret_cast<const char*>(p), static_cast<std::size_t>(n)};
    p += n;
    return true;
  }
  bool read_double(double& d) {
    if (end - p < 8)
      return false;
    std::memcpy(&d, p, 8);
    p += 8;
    return true;
  }
};

/// As boost::json::serialize writes a string (what to_json uses).
void put_string(std::string& out, std::string_view s) {
  static constexpr char hex[] = "0123456789abcdef";
  out += '"';
  std::size_t run = 0; // start of the bytes that need no escape
  for (std::size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\')
      continue;
    out.append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        out += "\\u00";
        out += hex[c >> 4];
        out += hex[c & 15];
    }
  }
  out.append(s.data() + run, s.size() - run);
  out += '"';
}

bool put_text(std::string& out, std::string_view s) {
  if (!simdjson::validate_utf8(s.data(), s.size()))
    return false; // protobuf refuses it (proto3 strings are UTF-8)
  put_string(out, s);
  return true;
}

void put_int(std::string& out, std::int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

bool supported(const ftype* f) {
  switch (f->type()) {
    case ftype::TYPE_DOUBLE:
    case ftype::TYPE_INT64:
    case ftype::TYPE_BOOL:
    case ftype::TYPE_ENUM:
    case ftype::TYPE_STRING:
      return true;
    case ftype::TYPE_MESSAGE:
      return !f->is_map();
    default:
      return false;
  }
}

class walker {
public:
  walker(const std::function<bool(const ftype*)>& required, std::string& out)
    : required_(required), out_(out) {
  }

  bool message(const pb::Descriptor* d, std::string_view wire, int depth) {
    if (depth > max_depth)
      return false;
    switch (well_known(d)) {
      case known::value: return value(wire, depth);
      case known::structure: return structure(wire, depth);
      case known::list: return list(wire, depth);
      case known::none: break;
    }
    if (d->real_oneof_decl_count() > 0)
      return false;
    out_ += '{';
    first_ = true;
    reader r{wire};
    int next = 0;
    const int n = d->field_count();
    while (!r.done()) {
      int number = 0;
      int wt = 0;
      if (!r.read_tag(number, wt))
        return false;
      // The fields before this one are absent (field order or fall back).
      for (; next < n && d->field(next)->number() != number; ++next)
        if (!absent(d->field(next)))
          return false;
      if (next == n)
        return false;
      const auto* f = d->field(next++);
      if (!supported(f))
        return false;
      name(f);
      if (!(f->is_repeated() ? repeated(f, number, wt, r, depth) : scalar(f, wt, r, depth)))
        return false;
      first_ = false;
    }
    for (; next < n; ++next)
      if (!absent(d->field(next)))
        return false;
    out_ += '}';
    first_ = false;
    return true;
  }

private:
  void name(const ftype* f) {
    if (!first_)
      out_ += ',';
    put_string(out_, f->json_name());
    out_ += ':';
  }

  /// A field the bytes do not hold, as to_json writes it (or not at all).
  bool absent(const ftype* f) {
    if (!supported(f))
      return false;
    if (f->is_repeated()) {
      if (!required_(f))
        return true;
      name(f);
      out_ += "[]";
    } else {
      if (f->has_presence())
        return true;
      name(f);
      switch (f->type()) {
        case ftype::TYPE_STRING: out_ += "\"\""; break;
        case ftype::TYPE_BOOL: out_ += "false"; break;
        case ftype::TYPE_ENUM: put_string(out_, f->default_value_enum()->name()); break;
        default: out_ += '0'; break; // double, int64
      }
    }
    first_ = false;
    return true;
  }

  /// One value of a singular field, or one element of a repeated string or
  /// message field.
  bool scalar(const ftype* f, int wt, reader& r, int depth) {
    std::uint64_t v = 0;
    std::string_view bytes;
    switch (f->type()) {
      case ftype::TYPE_DOUBLE: {
        double d = 0;
        if (wt != fixed64 || !r.read_double(d))
          return false;
        put_json_double(out_, d);
        return true;
      }
      case ftype::TYPE_INT64:
        if (wt != varint || !r.read_varint(v))
          return false;
        put_int(out_, static_cast<std::int64_t>(v));
        return true;
      case ftype::TYPE_BOOL:
        if (wt != varint || !r.read_varint(v))
          return false;
        out_ += v != 0 ? "true" : "false";
        return true;
      case ftype::TYPE_ENUM:
        return wt == varint && r.read_varint(v) && enum_name(f, v);
      case ftype::TYPE_STRING:
        return wt == length_delimited && r.read_bytes(bytes) && put_text(out_, bytes);
      case ftype::TYPE_MESSAGE:
        return wt == length_delimited && r.read_bytes(bytes)
               && message(f->message_type(), bytes, depth + 1);
      default:
        return false;
    }
  }

  bool enum_name(const ftype* f, std::uint64_t v) {
    const auto* e = f->enum_type()->FindValueByNumber(static_cast<int>(static_cast<std::int32_t>(v)));
    if (!e)
      return false; // an open enum's unknown number: to_json's business
    put_string(out_, e->name());
    return true;
  }

  /// A repeated field's elements: packed scalars in one record, strings and
  /// messages one record each, consecutive.
  bool repeated(const ftype* f, int number, int wt, reader& r, int depth) {
    out_ += '[';
    auto type = f->type();
    if (type == ftype::TYPE_STRING || type == ftype::TYPE_MESSAGE) {
      for (bool first = true;; first = false) {
        if (!first)
          out_ += ',';
        if (!scalar(f, wt, r, depth))
          return false;
        // The next record: another element, or the end of this field.
        reader peek = r;
        int next_number = 0;
        if (r.done() || !peek.read_tag(next_number, wt) || next_number != number)
          break;
        r = peek;
      }
    } else {
      std::string_view packed;
      // None packed: to_json leaves the field out unless it is required.
      if (wt != length_delimited || !r.read_bytes(packed) || packed.empty())
        return false;
      reader p{packed};
      for (bool first = true; !p.done(); first = false) {
        if (!first)
          out_ += ',';
        if (!scalar(f, type == ftype::TYPE_DOUBLE ? fixed64 : varint, p, depth))
          return false;
      }
    }
    out_ += ']';
    return true;
  }

  /// google.protobuf.Value: one kind at most (none is null).
  bool value(std::string_view wire, int depth) {
    if (depth > max_depth)
      return false;
    reader r{wire};
    if (r.done()) {
      out_ += "null";
      return true;
    }
    int number = 0;
    int wt = 0;
    std::uint64_t v = 0;
    double d = 0;
    std::string_view bytes;
    if (!r.read_tag(number, wt))
      return false;
    bool ok = false;
    switch (number) {
      case 1: // null_value
        ok = wt == varint && r.read_varint(v);
        out_ += "null";
        break;
      case 2: // number_value
        ok = wt == fixed64 && r.read_double(d);
        put_json_double(out_, d);
        break;
      case 3: // string_value
        ok = wt == length_delimited && r.read_bytes(bytes) && put_text(out_, bytes);
        break;
      case 4: // bool_value
        ok = wt == varint && r.read_varint(v);
        out_ += v != 0 ? "true" : "false";
        break;
      case 5: // struct_value
        ok = wt == length_delimited && r.read_bytes(bytes) && structure(bytes, depth + 1);
        break;
      case 6: // list_value
        ok = wt == length_delimited && r.read_bytes(bytes) && list(bytes, depth + 1);
        break;
      default:
        return false;
    }
    // A second kind replaces the first in protobuf: not on this path.
    return ok && r.done();
  }

  /// google.protobuf.Struct: map<string, Value> fields = 1.
  bool structure(std::string_view wire, int depth) {
    if (depth > max_depth)
      return false;
    reader r{wire};
    out_ += '{';
    const auto base = keys_.size(); // this Struct's keys are keys_[base..]
    bool ok = true;
    while (ok && !r.done()) {
      int number = 0;
      int wt = 0;
      std::string_view entry;
      if (!r.read_tag(number, wt) || number != 1 || wt != length_delimited
          || !r.read_bytes(entry)) {
        ok = false;
        break;
      }
      // The entry: key = 1, value = 2, each at most once, in either order.
      std::string_view key;
      std::string_view val;
      bool have_key = false;
      bool have_val = false;
      reader e{entry};
      while (ok && !e.done()) {
        std::string_view bytes;
        ok = e.read_tag(number, wt) && wt == length_delimited && e.read_bytes(bytes);
        if (ok && number == 1 && !have_key)
          key = bytes, have_key = true;
        else if (ok && number == 2 && !have_val)
          val = bytes, have_val = true;
        else
          ok = false;
      }
      // A key twice: protobuf's map keeps the last; not on this path.
      if (!ok || keys_.size() - base >= max_struct_members)
        ok = false;
      for (std::size_t i = base; ok && i < keys_.size(); ++i)
        ok = keys_[i] != key;
      if (!ok)
        break;
      if (keys_.size() > base)
        out_ += ',';
      keys_.push_back(key);
      ok = put_text(out_, key);
      if (ok) {
        out_ += ':';
        ok = value(val, depth + 1);
      }
    }
    keys_.resize(base);
    if (ok)
      out_ += '}';
    return ok;
  }

  /// google.protobuf.ListValue: repeated Value values = 1.
  bool list(std::string_view wire, int depth) {
    if (depth > max_depth)
      return false;
    reader r{wire};
    out_ += '[';
    for (bool first = true; !r.done(); first = false) {
      int number = 0;
      int wt = 0;
      std::string_view bytes;
      if (!r.read_tag(number, wt) || number != 1 || wt != length_delimited || !r.read_bytes(bytes))
        return false;
      if (!first)
        out_ += ',';
      if (!value(bytes, depth + 1))
        return false;
    }
    out_ += ']';
    return true;
  }

  const std::function<bool(const ftype*)>& required_;
  std::string& out_;
  bool first_ = true; // no member written yet in the object being written
  // The keys of the Structs being written, outermost first (views into the
  // request's bytes); a request's few in place.
  boost::container::small_vector<std::string_view, 16> keys_;
};

} // namespace

bool wire_to_json_fast(const pb::Descriptor* type, std::string_view wire,
                       const std::function<bool(const ftype*)>& repeated_required,
                       std::string& out) {
  out.clear();
  return walker{repeated_required, out}.message(type, wire, 0);
}

} // namespace actor_host::grpc_door::detail
