// What the listener's reactors share: refusals, message <-> ByteBuffer, and
// the well-known services' own descriptors.

#include "grpc_door/detail/builtin_files.hpp"
#include "grpc_door/detail/door_state.hpp"

#include "grpc/health/v1/health.pb.h"
#include "grpc/reflection/v1/reflection.pb.h"

#include <google/protobuf/descriptor.pb.h>
#include <grpcpp/grpcpp.h>

#include <limits>
#include <vector>

namespace actor_host::grpc_door::detail {

std::optional<std::string> metadata(grpc::GenericServerContext* ctx, std::string_view key) {
  auto& md = ctx->client_metadata();
  auto it = md.find(grpc::string_ref{key.data(), key.size()});
  if (it == md.end())
    return std::nullopt;
  return std::string{it->second.data(), it->second.size()};
}

namespace {

class refusal_reactor final : public generic_reactor {
public:
  refusal_reactor(std::unique_ptr<cq_call> call, grpc::Status status)
    : generic_reactor(std::move(call)) {
    Finish(std::move(status));
  }
  void OnDone() override {
    delete this;
  }
};

/// The pool with the health file, reflection v1 and its v1alpha twin (the
/// same messages in package grpc.reflection.v1alpha, as the gRPC project
/// defines it).
struct builtin_pool {
  google::protobuf::DescriptorPool pool;

  builtin_pool() {
    google::protobuf::FileDescriptorProto health, v1, v1alpha;
    grpc::health::v1::HealthCheckRequest::descriptor()->file()->CopyTo(&health);
    grpc::reflection::v1::ServerReflectionRequest::descriptor()->file()->CopyTo(&v1);
    v1alpha = v1;
    v1alpha.set_name("grpc/reflection/v1alpha/reflection.proto");
    v1alpha.set_package("grpc.reflection.v1alpha");
    for (auto& m : *v1alpha.mutable_message_type())
      for (auto& f : *m.mutable_field())
        if (f.has_type_name())
          f.set_type_name(".grpc.reflection.v1alpha."
                          + f.type_name().substr(std::string{".grpc.reflection.v1."}.size()));
    for (auto& s : *v1alpha.mutable_service())
      for (auto& m : *s.mutable_method()) {
        m.set_input_type(".grpc.reflection.v1alpha.ServerReflectionRequest");
        m.set_output_type(".grpc.reflection.v1alpha.ServerReflectionResponse");
      }
    for (auto* f : {&health, &v1, &v1alpha})
      pool.BuildFile(*f);
  }
};

} // namespace

void refusal(std::unique_ptr<cq_call> call, grpc::Status status) {
  new refusal_reactor(std::move(call), std::move(status));
}

const std::vector<std::string>& builtin_services() {
  static const std::vector<std::string> names{
    "grpc.health.v1.Health",
    "grpc.reflection.v1.ServerReflection",
    "grpc.reflection.v1alpha.ServerReflection",
  };
  return names;
}

bool is_builtin_service(std::string_view service) {
  for (auto& n : builtin_services())
    if (n == service)
      return true;
  return false;
}

const google::protobuf::DescriptorPool& builtin_descriptors() {
  static const builtin_pool p;
  return p.pool;
}

grpc::ByteBuffer wire_buffer(std::string_view bytes) {
  grpc::Slice slice{bytes.data(), bytes.size()};
  return grpc::ByteBuffer{&slice, 1};
}

bool to_buffer(const google::protobuf::Message& msg, grpc::ByteBuffer& out) {
  std::string bytes;
  if (!msg.SerializeToString(&bytes))
    return false;
  out = wire_buffer(bytes);
  return true;
}

bool from_buffer(const grpc::ByteBuffer& in, google::protobuf::Message& msg) {
  // A request read off one HTTP/2 frame is one slice: parsed where it lies,
  // without the vector of slices and the copy into one string.
  if (grpc::Slice one; in.TrySingleSlice(&one).ok()) {
    if (one.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
      return false;
    // Partial: the catalog's files are proto3 (no required fields), so the
    // check for missing ones, a reflection walk over every field, finds none.
    return msg.ParsePartialFromArray(one.begin(), static_cast<int>(one.size()));
  }
  std::vector<grpc::Slice> slices;
  if (!in.Dump(&slices).ok())
    return false;
  std::string bytes;
  bytes.reserve(in.Length());
  for (auto& s : slices)
    bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  return msg.ParseFromString(bytes);
}

} // namespace actor_host::grpc_door::detail
