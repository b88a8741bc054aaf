#pragma once

// Private to grpc_door/: JSON Schemas as protobuf message types. Includes
// protobuf's descriptor.pb.h.

#include "grpc_door/naming.hpp"

#include <boost/json/value.hpp>
#include <google/protobuf/descriptor.pb.h>

#include <cstddef>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <string_view>

namespace actor_host::grpc_door::detail {

using grpc_door::camel_name;
using grpc_door::proto_identifier;
using grpc_door::unique_name;

/// The message types of one action's schemas, added to one file. Caps what
/// one action may generate (a schema comes from an untrusted runtime).
class schema_mapper {
public:
  static constexpr std::size_t max_messages = 1000;
  static constexpr std::size_t max_fields = 1000;
  static constexpr std::size_t max_schema_bytes = 1u << 20;

  /// `file` gets the messages; `prefix` names them (the method's base name);
  /// `package` is the file's package; `taken` the file's top-level names.
  schema_mapper(google::protobuf::FileDescriptorProto& file, std::string prefix,
                std::set<std::string>& taken);

  /// The type a top-level schema (JSON text, "" = none) maps to as a whole
  /// message: ".pkg.<Prefix><suffix>" for an object with properties, else
  /// ".google.protobuf.Value". "" and `error` when the schema is refused.
  std::string message_for(std::string_view schema_text, const std::string& suffix,
                          std::string& error);

  /// A message `<Prefix>Response` with oneof result {chunk = 1; output = 2}
  /// (streaming methods). "" and `error` when refused.
  std::string stream_response(std::string_view chunk_schema, std::string_view output_schema,
                              std::string& error);

  /// Repeated fields whose property is required: sent even when empty.
  const std::set<std::string>& required_repeated() const {
    return required_repeated_;
  }

private:
  struct field_type;
  struct job {
    google::protobuf::DescriptorProto* msg;
    std::string full_name; // without the leading dot
    const boost::json::object* schema;
    const boost::json::value* doc; // for $ref
  };

  const boost::json::value* parse(std::string_view text, std::string& error);
  const boost::json::object* resolve(const boost::json::value* v, const boost::json::value* doc,
                                     std::string* ref) const;
  field_type map_field(const boost::json::value* v, const boost::json::value* doc,
                       google::protobuf::DescriptorProto* parent, const std::string& parent_name,
                       const std::string& field, std::string& error);
  std::string new_message(google::protobuf::DescriptorProto* parent,
                          const std::string& parent_name, const std::string& base,
                          const boost::json::object* schema, const boost::json::value* doc);
  bool run_jobs(std::string& error);

  google::protobuf::FileDescriptorProto& file_;
  std::string prefix_;
  std::set<std::string>& taken_;
  std::set<std::string> required_repeated_; // "full.Message.field"
  std::deque<boost::json::value> docs_;
  std::deque<job> jobs_;
  std::map<const void*, std::set<std::string>> scopes_; // names per message
  std::map<std::pair<const void*, std::string>, std::string> by_ref_; // (doc, pointer) -> type
  std::size_t messages_ = 0;
};

} // namespace actor_host::grpc_door::detail
