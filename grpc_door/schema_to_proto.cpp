// JSON Schemas (as Genkit runtimes list them: zod-to-json-schema's draft-07)
// as proto3 message types. What a proto cannot say exactly becomes a
// well-known type (docs/GRPC.md): unions, `const`, untyped and `null` ->
// google.protobuf.Value, objects without properties -> Struct, arrays of
// arrays -> ListValue. Schemas are walked with a work list, never recursion:
// they come from runtimes.

#include "grpc_door/schema_to_proto.hpp"

#include "schema/ref_closure.hpp"

#include <boost/json/parse.hpp>

#include <cctype>

namespace actor_host::grpc_door::detail {

namespace json = boost::json;
namespace pb = google::protobuf;
using ftype = pb::FieldDescriptorProto;

namespace {

constexpr int max_ref_hops = 32;

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])))
    return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      return false;
  return true;
}

std::string lower(std::string_view s) {
  std::string out;
  for (char c : s)
    if (c != '_')
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

const json::value* member(const json::object& o, std::string_view key) {
  auto it = o.find(key);
  return it == o.end() ? nullptr : &it->value();
}

std::string string_member(const json::object& o, std::string_view key) {
  auto* v = member(o, key);
  return v && v->is_string() ? std::string{v->get_string()} : std::string{};
}

const std::string value_type = ".google.protobuf.Value";
const std::string struct_type = ".google.protobuf.Struct";
const std::string list_type = ".google.protobuf.ListValue";

} // namespace

struct schema_mapper::field_type {
  ftype::Type type = ftype::TYPE_MESSAGE;
  std::string type_name = value_type; // message and enum types
  bool repeated = false;
  bool scalar() const {
    return type != ftype::TYPE_MESSAGE;
  }
};

schema_mapper::schema_mapper(pb::FileDescriptorProto& file, std::string prefix,
                             std::set<std::string>& taken)
  : file_(file), prefix_(std::move(prefix)), taken_(taken) {
}

const json::value* schema_mapper::parse(std::string_view text, std::string& error) {
  if (text.size() > max_schema_bytes) {
    error = "a schema is over 1 MiB";
    return nullptr;
  }
  json::parse_options po;
  po.max_depth = 64; // Boost.JSON's parser is iterative; this caps what it builds
  boost::system::error_code ec;
  auto v = json::parse(text, ec, {}, po);
  if (ec) {
    error = "a schema is not JSON (or nested over 64 levels): " + ec.message();
    return nullptr;
  }
  return &docs_.emplace_back(std::move(v));
}

const json::object* schema_mapper::resolve(const json::value* v, const json::value* doc,
                                           std::string* ref) const {
  for (int hop = 0; v && hop < max_ref_hops; ++hop) {
    auto* o = v->if_object();
    if (!o)
      return nullptr;
    auto* r = member(*o, "$ref");
    if (!r)
      return o;
    if (!r->is_string())
      return nullptr;
    if (ref)
      *ref = std::string{r->get_string()};
    v = schema::json_pointer(*doc, r->get_string());
  }
  return nullptr; // a ref loop, or unresolvable
}

std::string schema_mapper::new_message(pb::DescriptorProto* parent,
                                       const std::string& parent_name, const std::string& base,
                                       const json::object* schema, const json::value* doc) {
  pb::DescriptorProto* msg;
  std::string full;
  if (parent) {
    auto name = unique_name(base, scopes_[parent]);
    msg = parent->add_nested_type();
    msg->set_name(name);
    full = parent_name + "." + name;
  } else {
    auto name = unique_name(base, taken_);
    msg = file_.add_message_type();
    msg->set_name(name);
    full = file_.package() + "." + name;
  }
  ++messages_;
  jobs_.push_back({msg, full, schema, doc});
  return "." + full;
}

schema_mapper::field_type schema_mapper::map_field(const json::value* v, const json::value* doc,
                                                   pb::DescriptorProto* parent,
                                                   const std::string& parent_name,
                                                   const std::string& field, std::string& error) {
  field_type out; // Value unless the schema says more
  std::string ref;
  auto* o = resolve(v, doc, &ref);
  if (!o)
    return out;
  for (auto* k : {"anyOf", "oneOf", "allOf", "const", "not"})
    if (member(*o, k))
      return out;
  auto type = string_member(*o, "type");
  auto* t = member(*o, "type");
  if (t && !t->is_string())
    return out; // ["string","null"] and other unions
  if (auto* e = member(*o, "enum"); e && e->is_array() && (type.empty() || type == "string")) {
    auto& values = e->get_array();
    auto& scope = scopes_[parent];
    bool identifiers = !values.empty();
    std::set<std::string> folded;
    for (auto& x : values)
      identifiers = identifiers && x.is_string() && is_identifier(x.get_string())
                    && scope.count(std::string{x.get_string()}) == 0
                    && folded.insert(lower(x.get_string())).second;
    if (!identifiers) {
      bool strings = !values.empty();
      for (auto& x : values)
        strings = strings && x.is_string();
      if (strings)
        out.type = ftype::TYPE_STRING;
      return out;
    }
    auto name = unique_name(camel_name(field) + "Enum", scope);
    auto* en = parent->add_enum_type();
    en->set_name(name);
    int n = 0;
    for (auto& x : values) {
      auto* ev = en->add_value();
      ev->set_name(std::string{x.get_string()});
      ev->set_number(n++);
      scope.insert(ev->name());
    }
    out.type = ftype::TYPE_ENUM;
    out.type_name = "." + parent_name + "." + name;
    return out;
  }
  if (type == "string") {
    out.type = ftype::TYPE_STRING;
  } else if (type == "number") {
    out.type = ftype::TYPE_DOUBLE;
  } else if (type == "integer") {
    out.type = ftype::TYPE_INT64;
  } else if (type == "boolean") {
    out.type = ftype::TYPE_BOOL;
  } else if (type == "array") {
    auto* items = member(*o, "items");
    if (!items || !items->is_object()) {
      out.type_name = list_type;
      return out;
    }
    auto item = map_field(items, doc, parent, parent_name, field + "Item", error);
    if (item.repeated) {
      out.type_name = list_type; // an array of arrays
      return out;
    }
    item.repeated = true;
    return item;
  } else if (type == "object" || (type.empty() && member(*o, "properties"))) {
    auto* props = member(*o, "properties");
    if (!props || !props->is_object() || props->get_object().empty()) {
      out.type_name = struct_type;
      return out;
    }
    if (!ref.empty()) {
      // One message per definition, shared by every reference to it (so a
      // recursive schema is a recursive message).
      auto key = std::make_pair(static_cast<const void*>(doc), ref);
      if (auto it = by_ref_.find(key); it != by_ref_.end()) {
        out.type_name = it->second;
        return out;
      }
      auto slash = ref.rfind('/');
      auto base = prefix_ + "_" + camel_name(slash == std::string::npos ? ref : ref.substr(slash + 1));
      out.type_name = new_message(nullptr, {}, base, o, doc);
      by_ref_.emplace(key, out.type_name);
      return out;
    }
    out.type_name = new_message(parent, parent_name, camel_name(field), o, doc);
  }
  return out;
}

bool schema_mapper::run_jobs(std::string& error) {
  while (!jobs_.empty()) {
    if (messages_ > max_messages) {
      error = "its schemas make over " + std::to_string(max_messages) + " message types";
      return false;
    }
    auto j = jobs_.front();
    jobs_.pop_front();
    auto& props = j.schema->at("properties").get_object();
    if (props.size() > max_fields) {
      error = j.full_name + " has over " + std::to_string(max_fields) + " properties";
      return false;
    }
    std::set<std::string> required;
    if (auto* r = member(*j.schema, "required"); r && r->is_array())
      for (auto& x : r->get_array())
        if (x.is_string())
          required.insert(std::string{x.get_string()});
    auto& scope = scopes_[j.msg];
    int number = 0;
    for (auto& [key, sub] : props) {
      auto name = unique_name(proto_identifier(key), scope);
      auto t = map_field(&sub, j.doc, j.msg, j.full_name, key, error);
      if (!error.empty())
        return false;
      auto* f = j.msg->add_field();
      f->set_name(name);
      f->set_json_name(std::string{key});
      f->set_number(++number);
      f->set_type(t.type);
      if (!t.scalar() || t.type == ftype::TYPE_ENUM)
        f->set_type_name(t.type_name);
      bool is_required = required.count(std::string{key}) != 0;
      if (t.repeated) {
        f->set_label(ftype::LABEL_REPEATED);
        if (is_required)
          required_repeated_.insert(j.full_name + "." + name);
      } else {
        f->set_label(ftype::LABEL_OPTIONAL);
        if (t.scalar() && !is_required) {
          // proto3 `optional`: presence, so an unset field is not sent.
          f->set_proto3_optional(true);
          auto* oneof = j.msg->add_oneof_decl();
          oneof->set_name(unique_name("_" + name, scope));
          f->set_oneof_index(j.msg->oneof_decl_size() - 1);
        }
      }
    }
  }
  return true;
}

std::string schema_mapper::message_for(std::string_view schema_text, const std::string& suffix,
                                       std::string& error) {
  if (schema_text.empty())
    return value_type;
  auto* doc = parse(schema_text, error);
  if (!doc)
    return {};
  std::string ref;
  auto* o = resolve(doc, doc, &ref);
  auto* props = o ? member(*o, "properties") : nullptr;
  auto type = o ? string_member(*o, "type") : std::string{};
  if (!o || !props || !props->is_object() || props->get_object().empty()
      || !(type.empty() || type == "object") || member(*o, "anyOf") || member(*o, "oneOf")
      || member(*o, "allOf"))
    return value_type;
  auto name = new_message(nullptr, {}, prefix_ + suffix, o, doc);
  if (!ref.empty())
    by_ref_.emplace(std::make_pair(static_cast<const void*>(doc), ref), name);
  if (!run_jobs(error))
    return {};
  return name;
}

std::string schema_mapper::stream_response(std::string_view chunk_schema,
                                           std::string_view output_schema, std::string& error) {
  auto name = unique_name(prefix_ + "Response", taken_);
  auto* msg = file_.add_message_type();
  msg->set_name(name);
  auto full = file_.package() + "." + name;
  ++messages_;
  msg->add_oneof_decl()->set_name("result");
  scopes_[msg] = {"chunk", "output", "result"};
  int number = 0;
  for (auto [field, text] : {std::pair{"chunk", chunk_schema}, std::pair{"output", output_schema}}) {
    field_type t;
    if (!text.empty()) {
      auto* doc = parse(text, error);
      if (!doc)
        return {};
      t = map_field(doc, doc, msg, full, field, error);
      if (!error.empty() || !run_jobs(error))
        return {};
    }
    auto* f = msg->add_field();
    f->set_name(field);
    f->set_json_name(field);
    f->set_number(++number);
    f->set_label(ftype::LABEL_OPTIONAL);
    f->set_oneof_index(0);
    if (t.repeated) { // a oneof member cannot repeat
      f->set_type(ftype::TYPE_MESSAGE);
      f->set_type_name(list_type);
      continue;
    }
    f->set_type(t.type);
    if (!t.scalar() || t.type == ftype::TYPE_ENUM)
      f->set_type_name(t.type_name);
  }
  return "." + full;
}

} // namespace actor_host::grpc_door::detail
