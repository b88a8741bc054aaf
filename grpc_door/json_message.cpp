// Messages of the catalog as the JSON runtimes take and give. Not protobuf's
// JsonUtil for the way out: it prints int64 as strings, and a runtime
// validating {"type":"integer"} wants numbers.

#include "grpc_door/catalog.hpp"
#include "grpc_door/detail/json_shapes.hpp"
#include "grpc_door/detail/wire_json.hpp"

#include <boost/json/serialize.hpp>
#include <boost/json/string_view.hpp>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <google/protobuf/util/json_util.h>

#include <charconv>
#include <functional>
#include <cmath>

namespace actor_host::grpc_door {

namespace pb = google::protobuf;

namespace {

void put_string(std::string& out, const std::string& s) {
  out += boost::json::serialize(boost::json::string_view{s});
}

/// Writes messages as JSON. Recursive over the message, which is bounded:
/// protobuf's parser refuses nesting past 100 levels, and what the door
/// parses from a client is the only input.
class writer {
public:
  writer(const std::function<bool(const pb::FieldDescriptor*)>& required) : required_(required) {
  }

  void message(const pb::Message& m, std::string& out) const {
    const auto* d = m.GetDescriptor();
    auto name = d->full_name();
    if (name == "google.protobuf.Value")
      return value(m, out);
    if (name == "google.protobuf.Struct")
      return structure(m, out);
    if (name == "google.protobuf.ListValue")
      return list(m, out);
    const auto* r = m.GetReflection();
    out += '{';
    bool first = true;
    for (int i = 0; i < d->field_count(); ++i) {
      const auto* f = d->field(i);
      if (f->is_repeated()) {
        if (r->FieldSize(m, f) == 0 && !required_(f))
          continue;
      } else if (f->has_presence() && !r->HasField(m, f)) {
        continue;
      }
      if (!first)
        out += ',';
      first = false;
      put_string(out, f->json_name());
      out += ':';
      if (f->is_repeated()) {
        out += '[';
        for (int k = 0; k < r->FieldSize(m, f); ++k) {
          if (k)
            out += ',';
          element(m, f, k, out);
        }
        out += ']';
      } else {
        element(m, f, -1, out);
      }
    }
    out += '}';
  }

private:
  void element(const pb::Message& m, const pb::FieldDescriptor* f, int k,
               std::string& out) const {
    const auto* r = m.GetReflection();
    bool rep = k >= 0;
    using cpp = pb::FieldDescriptor::CppType;
    switch (f->cpp_type()) {
      case cpp::CPPTYPE_INT32:
        out += std::to_string(rep ? r->GetRepeatedInt32(m, f, k) : r->GetInt32(m, f));
        break;
      case cpp::CPPTYPE_INT64:
        out += std::to_string(rep ? r->GetRepeatedInt64(m, f, k) : r->GetInt64(m, f));
        break;
      case cpp::CPPTYPE_UINT32:
        out += std::to_string(rep ? r->GetRepeatedUInt32(m, f, k) : r->GetUInt32(m, f));
        break;
      case cpp::CPPTYPE_UINT64:
        out += std::to_string(rep ? r->GetRepeatedUInt64(m, f, k) : r->GetUInt64(m, f));
        break;
      case cpp::CPPTYPE_DOUBLE:
        detail::put_json_double(out, rep ? r->GetRepeatedDouble(m, f, k) : r->GetDouble(m, f));
        break;
      case cpp::CPPTYPE_FLOAT:
        detail::put_json_double(out, rep ? r->GetRepeatedFloat(m, f, k) : r->GetFloat(m, f));
        break;
      case cpp::CPPTYPE_BOOL:
        out += (rep ? r->GetRepeatedBool(m, f, k) : r->GetBool(m, f)) ? "true" : "false";
        break;
      case cpp::CPPTYPE_STRING:
        put_string(out, rep ? r->GetRepeatedString(m, f, k) : r->GetString(m, f));
        break;
      case cpp::CPPTYPE_ENUM: {
        const auto* e = rep ? r->GetRepeatedEnum(m, f, k) : r->GetEnum(m, f);
        put_string(out, e->name());
        break;
      }
      case cpp::CPPTYPE_MESSAGE:
        message(rep ? r->GetRepeatedMessage(m, f, k) : r->GetMessage(m, f), out);
        break;
    }
  }

  void value(const pb::Message& m, std::string& out) const {
    const auto* d = m.GetDescriptor();
    const auto* r = m.GetReflection();
    const auto* kind = d->FindOneofByName("kind");
    const auto* f = kind ? r->GetOneofFieldDescriptor(m, kind) : nullptr;
    if (!f || f->name() == "null_value")
      out += "null";
    else if (f->name() == "number_value")
      detail::put_json_double(out, r->GetDouble(m, f));
    else if (f->name() == "string_value")
      put_string(out, r->GetString(m, f));
    else if (f->name() == "bool_value")
      out += r->GetBool(m, f) ? "true" : "false";
    else
      message(r->GetMessage(m, f), out); // struct_value, list_value
  }

  void structure(const pb::Message& m, std::string& out) const {
    const auto* f = m.GetDescriptor()->FindFieldByName("fields");
    const auto* r = m.GetReflection();
    out += '{';
    for (int k = 0; k < r->FieldSize(m, f); ++k) {
      const auto& entry = r->GetRepeatedMessage(m, f, k);
      const auto* ed = entry.GetDescriptor();
      if (k)
        out += ',';
      put_string(out, entry.GetReflection()->GetString(entry, ed->FindFieldByName("key")));
      out += ':';
      value(entry.GetReflection()->GetMessage(entry, ed->FindFieldByName("value")), out);
    }
    out += '}';
  }

  void list(const pb::Message& m, std::string& out) const {
    const auto* f = m.GetDescriptor()->FindFieldByName("values");
    const auto* r = m.GetReflection();
    out += '[';
    for (int k = 0; k < r->FieldSize(m, f); ++k) {
      if (k)
        out += ',';
      value(r->GetRepeatedMessage(m, f, k), out);
    }
    out += ']';
  }

  const std::function<bool(const pb::FieldDescriptor*)>& required_;
};

} // namespace

std::string catalog::to_json(const pb::Message& msg) const {
  std::function<bool(const pb::FieldDescriptor*)> required
    = [this](const pb::FieldDescriptor* f) { return repeated_required(f); };
  std::string out;
  writer{required}.message(msg, out);
  return out;
}

bool catalog::wire_to_json(const pb::Descriptor* type, std::string_view wire,
                           std::string& out) const {
  std::function<bool(const pb::FieldDescriptor*)> required
    = [this](const pb::FieldDescriptor* f) { return repeated_required(f); };
  return detail::wire_to_json_fast(type, wire, required, out);
}

} // namespace actor_host::grpc_door
