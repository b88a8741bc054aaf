// JSON -> protobuf wire bytes for the catalog's own message shapes. The
// walk recurses with the JSON's nesting, capped at 100 levels (protobuf's
// own limit), and simdjson has already refused anything deeper than its
// limit before the walk starts.

#include "grpc_door/detail/json_wire.hpp"

#include "grpc_door/detail/json_shapes.hpp"

#include <google/protobuf/descriptor.h>
#include <simdjson.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <vector>

namespace actor_host::grpc_door::detail {

namespace {

namespace pb = google::protobuf;
namespace dom = simdjson::dom;
using ftype = pb::FieldDescriptor;

static_assert(std::endian::native == std::endian::little, "fixed64 is written as the host lays it out");

constexpr int max_depth = 100;

enum wire_type { varint = 0, fixed64 = 1, length_delimited = 2 };

void put_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>(v | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

void put_tag(std::string& out, int number, wire_type w) {
  put_varint(out, (static_cast<std::uint64_t>(number) << 3) | w);
}

void put_double(std::string& out, double d) {
  char b[8];
  std::memcpy(b, &d, 8);
  out.append(b, 8);
}

void put_bytes(std::string& out, int number, std::string_view bytes) {
  put_tag(out, number, length_delimited);
  put_varint(out, bytes.size());
  out.append(bytes);
}

// The element's type was checked before: these only unwrap.
dom::object object_of(dom::element e) {
  dom::object o;
  if (e.get_object().get(o) != simdjson::SUCCESS)
    return {};
  return o;
}
dom::array array_of(dom::element e) {
  dom::array a;
  if (e.get_array().get(a) != simdjson::SUCCESS)
    return {};
  return a;
}

bool number_of(dom::element e, double& d) {
  switch (e.type()) {
    case dom::element_type::DOUBLE:
      d = e.get_double().value_unsafe();
      return true;
    case dom::element_type::INT64:
      d = static_cast<double>(e.get_int64().value_unsafe());
      return true;
    case dom::element_type::UINT64:
      d = static_cast<double>(e.get_uint64().value_unsafe());
      return true;
    default:
      return false;
  }
}

/// The field a JSON key names: its JSON name or its own, as protobuf's
/// parser takes both. The catalog's messages are small; a scan is cheaper
/// than a lookup table per message type.
const ftype* field_named(const pb::Descriptor* d, std::string_view key) {
  for (int i = 0; i < d->field_count(); ++i)
    if (d->field(i)->json_name() == key)
      return d->field(i);
  for (int i = 0; i < d->field_count(); ++i)
    if (d->field(i)->name() == key)
      return d->field(i);
  return nullptr;
}

/// Whether a key comes twice (a map key set twice, which the converter
/// refuses).
bool has_duplicate_keys(dom::object o) {
  std::vector<std::string_view> keys;
  keys.reserve(o.size());
  for (auto [key, v] : o)
    keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  return std::adjacent_find(keys.begin(), keys.end()) != keys.end();
}

class encoder {
public:
  /// A message's fields (not its tag and length) from `e`.
  bool message(const pb::Descriptor* d, dom::element e, std::string& out, int depth) {
    if (depth > max_depth)
      return false;
    switch (well_known(d)) {
      case known::value:
        return value(e, out, depth);
      case known::structure:
        return e.is_object() && structure(object_of(e), out, depth);
      case known::list:
        return e.is_array() && list(array_of(e), out, depth);
      case known::none:
        break;
    }
    if (!e.is_object())
      return false;
    std::vector<bool> seen(static_cast<std::size_t>(d->field_count()));
    std::vector<bool> oneof_seen(static_cast<std::size_t>(d->oneof_decl_count()));
    for (auto [key, v] : object_of(e)) {
      if (key.empty())
        return false; // the converter refuses a field without a name
      const auto* f = field_named(d, key);
      if (f == nullptr)
        continue; // unknown fields are ignored, as the converter is told to
      auto i = static_cast<std::size_t>(f->index());
      if (seen[i])
        return false;
      seen[i] = true;
      bool is_value = f->message_type() && well_known(f->message_type()) == known::value;
      if (v.is_null() && !is_value)
        continue; // null is the field's absence
      if (const auto* o = f->real_containing_oneof()) {
        auto k = static_cast<std::size_t>(o->index());
        if (oneof_seen[k])
          return false;
        oneof_seen[k] = true;
      }
      if (!field(f, v, out, depth))
        return false;
    }
    return true;
  }

private:
  bool field(const ftype* f, dom::element v, std::string& out, int depth) {
    if (!f->is_repeated())
      return element(f, v, out, depth);
    if (!v.is_array())
      return false;
    auto items = array_of(v);
    if (!f->is_packed()) {
      bool values = f->message_type() && well_known(f->message_type()) == known::value;
      for (auto item : items)
        if ((item.is_null() && !values) || !element(f, item, out, depth))
          return false;
      return true;
    }
    std::string packed;
    for (auto item : items)
      if (!scalar(f, item, packed))
        return false;
    put_bytes(out, f->number(), packed);
    return true;
  }

  /// One occurrence of `f` with its tag.
  bool element(const ftype* f, dom::element v, std::string& out, int depth) {
    if (f->type() == ftype::TYPE_STRING) {
      if (!v.is_string())
        return false;
      put_bytes(out, f->number(), v.get_string().value_unsafe());
      return true;
    }
    if (f->type() == ftype::TYPE_MESSAGE) {
      std::string body;
      if (!message(f->message_type(), v, body, depth + 1))
        return false;
      put_bytes(out, f->number(), body);
      return true;
    }
    auto w = f->type() == ftype::TYPE_DOUBLE ? fixed64 : varint;
    std::string value;
    if (!scalar(f, v, value))
      return false;
    put_tag(out, f->number(), w);
    out += value;
    return true;
  }

  /// A scalar's bytes without a tag (as packed repeated fields hold them).
  bool scalar(const ftype* f, dom::element v, std::string& out) {
    switch (f->type()) {
      case ftype::TYPE_DOUBLE: {
        double d;
        if (!number_of(v, d))
          return false;
        put_double(out, d);
        return true;
      }
      case ftype::TYPE_INT64:
        if (v.type() != dom::element_type::INT64)
          return false; // floats, strings and out-of-range numbers: the converter decides
        put_varint(out, static_cast<std::uint64_t>(v.get_int64().value_unsafe()));
        return true;
      case ftype::TYPE_BOOL:
        if (!v.is_bool())
          return false;
        put_varint(out, v.get_bool().value_unsafe() ? 1 : 0);
        return true;
      case ftype::TYPE_ENUM: {
        if (!v.is_string())
          return false;
        auto name = v.get_string().value_unsafe();
        const auto* ev = f->enum_type()->FindValueByName(std::string{name});
        if (ev == nullptr)
          return false;
        put_varint(out, static_cast<std::uint64_t>(static_cast<std::int64_t>(ev->number())));
        return true;
      }
      default:
        return false; // not a shape the catalog generates
    }
  }

  /// google.protobuf.Value's fields for any JSON value.
  bool value(dom::element v, std::string& out, int depth) {
    switch (v.type()) {
      case dom::element_type::NULL_VALUE:
        put_tag(out, 1, varint);
        put_varint(out, 0);
        return true;
      case dom::element_type::DOUBLE:
      case dom::element_type::INT64:
      case dom::element_type::UINT64: {
        double d = 0;
        number_of(v, d);
        put_tag(out, 2, fixed64);
        put_double(out, d);
        return true;
      }
      case dom::element_type::STRING:
        put_bytes(out, 3, v.get_string().value_unsafe());
        return true;
      case dom::element_type::BOOL:
        put_tag(out, 4, varint);
        put_varint(out, v.get_bool().value_unsafe() ? 1 : 0);
        return true;
      case dom::element_type::OBJECT: {
        std::string body;
        if (!structure(object_of(v), body, depth + 1))
          return false;
        put_bytes(out, 5, body);
        return true;
      }
      case dom::element_type::ARRAY: {
        std::string body;
        if (!list(array_of(v), body, depth + 1))
          return false;
        put_bytes(out, 6, body);
        return true;
      }
    }
    return false;
  }

  /// google.protobuf.Struct's fields: one map entry {1: key, 2: Value} each.
  bool structure(dom::object o, std::string& out, int depth) {
    if (depth > max_depth || has_duplicate_keys(o))
      return false; // the converter refuses a key given twice
    for (auto [key, v] : o) {
      std::string entry, body;
      put_bytes(entry, 1, key);
      if (!value(v, body, depth + 1))
        return false;
      put_bytes(entry, 2, body);
      put_bytes(out, 1, entry);
    }
    return true;
  }

  /// google.protobuf.ListValue's fields: one Value per element.
  bool list(dom::array a, std::string& out, int depth) {
    if (depth > max_depth)
      return false;
    for (auto item : a) {
      std::string body;
      if (!value(item, body, depth + 1))
        return false;
      put_bytes(out, 1, body);
    }
    return true;
  }
};

} // namespace

bool json_to_wire_fast(const pb::Descriptor* type, std::string_view json, std::string& out) {
  // The parser keeps what it allocated for the largest document it saw, per
  // thread: large answers take the converter instead.
  if (json.size() > (1u << 20))
    return false;
  thread_local dom::parser parser;
  dom::element root;
  if (parser.parse(json.data(), json.size()).get(root) != simdjson::SUCCESS)
    return false;
  out.clear();
  return encoder{}.message(type, root, out, 0);
}

} // namespace actor_host::grpc_door::detail
