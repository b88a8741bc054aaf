#pragma once

#include "wire/expected.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace google::protobuf {
class Descriptor;
class DescriptorPool;
class FieldDescriptor;
class FileDescriptor;
class Message;
} // namespace google::protobuf

namespace actor_host::grpc_door {

/// One action of the manager's catalog as the gRPC door sees it: an entry of
/// a runtime's listActions (or of the iii listing). Schemas are JSON text as
/// the runtime sent them ("" = none).
struct catalog_action {
  std::string key;  // "/flow/echo", "/tool/add", "/iii/greet"
  std::string name; // "echo"
  std::string input_schema;
  std::string output_schema;
  std::string stream_schema;
  bool bidi = false; // metadata.bidi === true
};

enum class method_kind { unary, server_streaming, bidi_streaming };

/// One gRPC method of the catalog: the action it calls and its message types
/// (owned by the catalog's pool).
struct catalog_method {
  std::string path; // "/genkit.flow.Flows/echo"
  std::string key;  // "/flow/echo"
  std::string key_json; // the key as a JSON string, for every call's params
  method_kind kind = method_kind::unary;
  const google::protobuf::Descriptor* request = nullptr;
  /// unary: the output; streaming: a message with a `chunk` / `output` oneof.
  const google::protobuf::Descriptor* response = nullptr;
};

/// The services generated from the catalog, immutable once built: the
/// descriptor pool the reflection service answers from and the method table
/// the call path looks methods up in. Rebuilt whole when the catalog changes
/// and read from the door's thread through a snapshot_board.
class catalog {
public:
  ~catalog();
  catalog(const catalog&) = delete;
  catalog& operator=(const catalog&) = delete;

  /// Builds the services of `actions` (naming and schema mapping in
  /// docs/GRPC.md). An action whose schemas cannot be mapped is left out
  /// with a line in `warnings`; nothing in `actions` is trusted.
  static std::shared_ptr<const catalog> build(const std::vector<catalog_action>& actions,
                                              std::vector<std::string>* warnings = nullptr);

  /// nullptr when no such method.
  const catalog_method* find_method(std::string_view path) const;

  const std::vector<catalog_method>& methods() const;

  /// Full names of the generated services, sorted.
  std::vector<std::string> service_names() const;

  /// The pool holding every generated file (and the well-known types they use).
  const google::protobuf::DescriptorPool& pool() const;

  /// A new message of `type` (a descriptor from this pool); it must not
  /// outlive the catalog.
  std::unique_ptr<google::protobuf::Message> new_message(
    const google::protobuf::Descriptor* type) const;

  /// The JSON a runtime gets for `msg` (a message of this catalog): field
  /// names as the schema spells them, integers as numbers, unset optional
  /// fields and empty optional arrays left out, google.protobuf.Value /
  /// Struct / ListValue as plain JSON.
  std::string to_json(const google::protobuf::Message& msg) const;

  /// The same JSON straight from a message's wire bytes, for the shapes the
  /// catalog generates as clients send them (detail/wire_json.hpp); false
  /// when the bytes are not on that path: then parse them and to_json.
  bool wire_to_json(const google::protobuf::Descriptor* type, std::string_view wire,
                    std::string& out) const;

  /// The wire bytes of a message of `type` (a descriptor from this pool)
  /// from the JSON a runtime answered: keys the message does not know are
  /// ignored (schemas allow more); a type mismatch is an error with its
  /// reason. No message object is built (the answer path of every call).
  wire::expected<std::string> json_to_wire(const google::protobuf::Descriptor* type,
                                               std::string_view json) const;

  /// The same into `msg` (a message of this catalog).
  wire::expected<void> from_json(std::string_view json,
                                     google::protobuf::Message& msg) const;

private:
  /// A repeated field whose property is required (sent even when empty).
  bool repeated_required(const google::protobuf::FieldDescriptor* f) const;

  struct impl;
  explicit catalog(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

  /// The JSON a runtime gets for `msg` (a message of this catalog): field
  /// names as the schema spells them, integers as numbers, unset optional
  /// fields and empty optional arrays left out, google.protobuf.Value /
  /// Struct / ListValue as plain JSON.

} // namespace actor_host::grpc_door
