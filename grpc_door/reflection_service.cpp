// gRPC server reflection, v1 and v1alpha from one implementation: their
// messages are the same fields, so both are parsed and answered with the v1
// types. Each request is answered from the catalog current at that moment,
// so a stream follows runtimes as they come and go. One request is read,
// answered and written before the next is read: a stream holds one answer
// at most.

#include "grpc_door/detail/builtin_files.hpp"
#include "grpc_door/detail/door_state.hpp"

#include "grpc/reflection/v1/reflection.pb.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <grpcpp/grpcpp.h>

#include <deque>
#include <set>

namespace actor_host::grpc_door::detail {

namespace {

namespace refl = grpc::reflection::v1;
namespace pb = google::protobuf;

class reflection_stream final : public counted_reactor {
public:
  reflection_stream(door_ptr door, std::unique_ptr<cq_call> call)
    : counted_reactor(std::move(door), std::move(call)) {
    StartRead(&in_);
  }

  void OnReadDone(bool ok) override {
    if (!ok)
      return Finish(grpc::Status::OK); // the client closed its side
    refl::ServerReflectionRequest req;
    if (!from_buffer(in_, req))
      return Finish({grpc::StatusCode::INVALID_ARGUMENT,
                     "the request is not a ServerReflectionRequest"});
    auto res = answer(req);
    if (!to_buffer(res, out_))
      return Finish({grpc::StatusCode::INTERNAL, "the answer does not serialize"});
    StartWrite(&out_);
  }

  void OnWriteDone(bool ok) override {
    if (!ok)
      return Finish({grpc::StatusCode::CANCELLED, "the client left"});
    StartRead(&in_);
  }

  void OnDone() override {
    delete this;
  }

private:
  refl::ServerReflectionResponse answer(const refl::ServerReflectionRequest& req) {
    refl::ServerReflectionResponse res;
    res.set_valid_host(req.host());
    *res.mutable_original_request() = req;
    auto cat = door_->current();
    using kind = refl::ServerReflectionRequest::MessageRequestCase;
    switch (req.message_request_case()) {
      case kind::kListServices: {
        auto* list = res.mutable_list_services_response();
        std::set<std::string> names{builtin_services().begin(), builtin_services().end()};
        if (cat)
          for (auto& n : cat->service_names())
            names.insert(n);
        for (auto& n : names)
          list->add_service()->set_name(n);
        break;
      }
      case kind::kFileByFilename: {
        const auto& name = req.file_by_filename();
        const pb::FileDescriptor* f = cat ? cat->pool().FindFileByName(name) : nullptr;
        if (!f)
          f = builtin_descriptors().FindFileByName(name);
        if (!f)
          return error(res, grpc::StatusCode::NOT_FOUND, "unknown file: " + name);
        send_files(res, f);
        break;
      }
      case kind::kFileContainingSymbol: {
        const auto& symbol = req.file_containing_symbol();
        if (symbol.empty())
          return error(res, grpc::StatusCode::INVALID_ARGUMENT, "the symbol is empty");
        const pb::FileDescriptor* f = cat ? cat->pool().FindFileContainingSymbol(symbol) : nullptr;
        if (!f)
          f = builtin_descriptors().FindFileContainingSymbol(symbol);
        if (!f)
          return error(res, grpc::StatusCode::NOT_FOUND, "unknown symbol: " + symbol);
        send_files(res, f);
        break;
      }
      case kind::kFileContainingExtension: {
        const auto& ext = req.file_containing_extension();
        const auto* type = find_message(cat.get(), ext.containing_type());
        if (!type)
          return error(res, grpc::StatusCode::NOT_FOUND,
                       "unknown type: " + ext.containing_type());
        const auto* field = type->file()->pool()->FindExtensionByNumber(type,
                                                                        ext.extension_number());
        if (!field)
          return error(res, grpc::StatusCode::NOT_FOUND,
                       "no extension " + std::to_string(ext.extension_number()) + " of "
                         + ext.containing_type());
        send_files(res, field->file());
        break;
      }
      case kind::kAllExtensionNumbersOfType: {
        const auto& name = req.all_extension_numbers_of_type();
        const auto* type = find_message(cat.get(), name);
        if (!type)
          return error(res, grpc::StatusCode::NOT_FOUND, "unknown type: " + name);
        auto* numbers = res.mutable_all_extension_numbers_response();
        numbers->set_base_type_name(type->full_name());
        std::vector<const pb::FieldDescriptor*> exts;
        type->file()->pool()->FindAllExtensions(type, &exts);
        for (const auto* e : exts)
          numbers->add_extension_number(e->number());
        break;
      }
      default:
        return error(res, grpc::StatusCode::INVALID_ARGUMENT,
                     "the request names no known message_request");
    }
    return res;
  }

  static const pb::Descriptor* find_message(const catalog* cat, const std::string& name) {
    const pb::Descriptor* d = cat ? cat->pool().FindMessageTypeByName(name) : nullptr;
    return d ? d : builtin_descriptors().FindMessageTypeByName(name);
  }

  static refl::ServerReflectionResponse& error(refl::ServerReflectionResponse& res,
                                               grpc::StatusCode code, std::string message) {
    auto* e = res.mutable_error_response();
    e->set_error_code(code);
    e->set_error_message(std::move(message));
    return res;
  }

  /// `f` and its transitive dependencies, each file once per stream; `f`
  /// itself always (it is what was asked for).
  void send_files(refl::ServerReflectionResponse& res, const pb::FileDescriptor* f) {
    auto* out = res.mutable_file_descriptor_response();
    std::deque<const pb::FileDescriptor*> queue{f};
    std::set<std::string> seen_now;
    bool first = true;
    while (!queue.empty()) {
      const auto* cur = queue.front();
      queue.pop_front();
      if (!seen_now.insert(cur->name()).second)
        continue;
      if (first || sent_.insert(cur->name()).second) {
        sent_.insert(cur->name());
        pb::FileDescriptorProto proto;
        cur->CopyTo(&proto);
        cur->CopyJsonNameTo(&proto); // the schema's property names
        proto.SerializeToString(out->add_file_descriptor_proto());
      }
      first = false;
      for (int i = 0; i < cur->dependency_count(); ++i)
        queue.push_back(cur->dependency(i));
    }
  }

  grpc::ByteBuffer in_;
  grpc::ByteBuffer out_;
  std::set<std::string> sent_; // files this stream has sent
};

} // namespace

void reflection_reactor(door_ptr door, std::unique_ptr<cq_call> call) {
  new reflection_stream(std::move(door), std::move(call));
}

} // namespace actor_host::grpc_door::detail
