// The catalog's services. Naming (stable across restarts: it depends only
// on the action keys and names, sorted), documented in docs/GRPC.md:
// - one service per action type, the key's first segment: "/flow/x" ->
//   genkit.flow.Flows, "/tool/x" -> genkit.tool.Tools, "/model/x" ->
//   genkit.model.Models; iii functions ("/iii/<id>") -> iii.Functions;
// - one method per action, named after it ("/flow/echo" -> echo; other
//   characters than [A-Za-z0-9_] become '_'; a clash gets _2, _3 in key
//   order); an action offered by several runtimes appears once, with the
//   schemas of the first (newest) one;
// - one file per service ("actor_host/genkit/flow.proto",
//   "actor_host/iii/functions.proto"), its messages <Method>Request and
//   <Method>Response (streaming: a oneof of chunk and output), nested
//   messages named after their fields, shared definitions ($ref)
//   <Method>_<Definition>;
// - bidi actions (metadata.bidi) are bidi-streaming methods, actions with a
//   streamSchema server-streaming, the others unary.

#include "grpc_door/catalog.hpp"
#include "grpc_door/detail/json_wire.hpp"
#include "grpc_door/schema_to_proto.hpp"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/type_resolver.h>
#include <google/protobuf/util/type_resolver_util.h>
#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>

#include <algorithm>
#include <map>
#include <set>

namespace actor_host::grpc_door {

namespace pb = google::protobuf;

namespace {

constexpr const char* type_url_prefix = "type.googleapis.com";
/// Larger answers are refused before protobuf's converter sees them.
constexpr std::size_t max_runtime_json = 64u << 20;

struct service_plan {
  std::string package;   // "genkit.flow"
  std::string service;   // "Flows"
  std::string file_name; // "actor_host/genkit/flow.proto"
  std::vector<const catalog_action*> actions;
  std::map<std::string, std::string> keys; // method name -> action key, once built
};

/// The service of a key, or false for keys without a type segment.
bool plan_for(const catalog_action& a, std::string& type, std::string& name) {
  if (a.key.size() < 2 || a.key[0] != '/')
    return false;
  auto slash = a.key.find('/', 1);
  if (slash == std::string::npos || slash == 1 || slash + 1 >= a.key.size())
    return false;
  type = a.key.substr(1, slash - 1);
  name = a.key.substr(slash + 1);
  return true;
}

pb::FileDescriptorProto struct_file() {
  pb::FileDescriptorProto f;
  pb::Struct::descriptor()->file()->CopyTo(&f);
  return f;
}

struct error_collector final : pb::DescriptorPool::ErrorCollector {
  std::string first;
  void AddError(const std::string& file, const std::string& element, const pb::Message*,
                ErrorLocation, const std::string& message) override {
    if (first.empty())
      first = file + ": " + element + ": " + message;
  }
};

} // namespace

struct catalog::impl {
  pb::DescriptorPool pool;
  std::unique_ptr<pb::DynamicMessageFactory> factory;
  std::vector<catalog_method> methods;
  std::map<std::string, std::size_t, std::less<>> by_path;
  std::vector<std::string> services;
  std::set<std::string> required_repeated; // full field names
  /// For protobuf's JSON converter, made once (JsonStringToMessage would
  /// make one per call for a pool that is not the generated one).
  std::unique_ptr<pb::util::TypeResolver> resolver;

  impl() {
    pool.BuildFile(struct_file());
    resolver.reset(pb::util::NewTypeResolverForDescriptorPool(type_url_prefix, &pool));
  }
};

/// Adds the methods of `actions` to `file` (one service). Returns the
/// actions left out with why.
static void plan_file(const service_plan& plan, pb::FileDescriptorProto& file,
                      std::set<std::string>& required_repeated,
                      std::map<std::string, std::string>& keys,
                      std::vector<std::pair<const catalog_action*, std::string>>& refused,
                      const std::set<const catalog_action*>& skip) {
  file.set_name(plan.file_name);
  file.set_package(plan.package);
  file.set_syntax("proto3");
  file.add_dependency("google/protobuf/struct.proto");
  auto* svc = file.add_service();
  svc->set_name(plan.service);
  std::set<std::string> method_names;
  std::set<std::string> taken{plan.service};
  // Names first, the actions' own before their streaming twins', so a twin
  // never takes an action's name.
  std::vector<std::string> names, twins;
  for (const auto* a : plan.actions) {
    std::string type, name;
    plan_for(*a, type, name);
    names.push_back(skip.count(a) ? std::string{}
                                  : detail::unique_name(detail::proto_identifier(name), method_names));
  }
  for (std::size_t i = 0; i < plan.actions.size(); ++i) {
    const auto* a = plan.actions[i];
    bool twin = !names[i].empty() && !a->bidi && a->stream_schema.empty() && plan.package != "iii";
    twins.push_back(twin ? detail::unique_name(names[i] + "_stream", method_names) : std::string{});
  }
  for (std::size_t i = 0; i < plan.actions.size(); ++i) {
    const auto* a = plan.actions[i];
    if (names[i].empty())
      continue;
    const auto& method = names[i];
    auto prefix = detail::camel_name(method);
    if (!method.empty() && method[0] == '_')
      prefix = "M" + prefix;
    // The file as it was, to undo a refused action's messages.
    auto before = file;
    detail::schema_mapper mapper{file, prefix, taken};
    std::string error;
    auto request = mapper.message_for(a->input_schema, "Request", error);
    std::string response;
    bool streaming = a->bidi || !a->stream_schema.empty();
    if (error.empty())
      response = streaming ? mapper.stream_response(a->stream_schema, a->output_schema, error)
                           : mapper.message_for(a->output_schema, "Response", error);
    if (!error.empty()) {
      file = std::move(before);
      svc = file.mutable_service(0);
      refused.emplace_back(a, error);
      continue;
    }
    required_repeated.insert(mapper.required_repeated().begin(), mapper.required_repeated().end());
    auto* m = svc->add_method();
    m->set_name(method);
    m->set_input_type(request);
    m->set_output_type(response);
    m->set_server_streaming(streaming);
    m->set_client_streaming(a->bidi);
    keys[method] = a->key;
    if (twins[i].empty())
      continue;
    // Genkit's JS runtime lists no streamSchema, yet its flows and models
    // may stream: a server-streaming twin with untyped chunks.
    auto twin_prefix = detail::camel_name(twins[i]);
    detail::schema_mapper twin_mapper{file, twin_prefix, taken};
    auto twin_response = twin_mapper.stream_response({}, a->output_schema, error);
    if (!error.empty())
      continue; // the same schema mapped above; cannot fail differently
    required_repeated.insert(twin_mapper.required_repeated().begin(),
                             twin_mapper.required_repeated().end());
    auto* t = file.mutable_service(0)->add_method();
    t->set_name(twins[i]);
    t->set_input_type(request);
    t->set_output_type(twin_response);
    t->set_server_streaming(true);
    keys[twins[i]] = a->key;
  }
}

std::shared_ptr<const catalog> catalog::build(const std::vector<catalog_action>& actions,
                                              std::vector<std::string>* warnings) {
  auto p = std::make_unique<impl>();
  auto warn = [&](std::string w) {
    if (warnings)
      warnings->push_back(std::move(w));
  };
  // Newest first wins a key; then key order, so names do not depend on
  // which runtime registered first.
  std::map<std::string, const catalog_action*> by_key;
  for (auto& a : actions)
    by_key.emplace(a.key, &a);
  std::map<std::string, service_plan> plans; // by full service name
  for (auto& [key, a] : by_key) {
    std::string type, name;
    if (!plan_for(*a, type, name)) {
      warn("action " + detail::proto_identifier(key) + " has no type segment; not served over gRPC");
      continue;
    }
    service_plan sp;
    if (type == "iii") {
      sp = {"iii", "Functions", "actor_host/iii/functions.proto", {}, {}};
    } else {
      auto t = detail::proto_identifier(type);
      sp = {"genkit." + t, detail::camel_name(t) + "s", "actor_host/genkit/" + t + ".proto", {}, {}};
    }
    auto full = sp.package + "." + sp.service;
    auto [it, fresh] = plans.emplace(full, std::move(sp));
    it->second.actions.push_back(a);
  }
  for (auto& [full, plan] : plans) {
    std::set<const catalog_action*> skip;
    // A file the pool refuses: find the actions it refuses alone, leave them out, retry.
    for (int attempt = 0; attempt < 2; ++attempt) {
      pb::FileDescriptorProto file;
      std::vector<std::pair<const catalog_action*, std::string>> refused;
      std::set<std::string> required;
      std::map<std::string, std::string> keys;
      plan_file(plan, file, required, keys, refused, skip);
      for (auto& [a, why] : refused) {
        warn("action " + a->key + " is not served over gRPC: " + why);
        skip.insert(a);
      }
      if (file.service(0).method_size() == 0)
        break;
      error_collector errors;
      pb::DescriptorPool scratch;
      scratch.BuildFile(struct_file());
      if (scratch.BuildFileCollectingErrors(file, &errors) && p->pool.BuildFile(file)) {
        p->required_repeated.insert(required.begin(), required.end());
        plan.keys = std::move(keys);
        break;
      }
      for (const auto* a : plan.actions) {
        if (skip.count(a))
          continue;
        service_plan alone = plan;
        alone.actions = {a};
        pb::FileDescriptorProto one;
        std::vector<std::pair<const catalog_action*, std::string>> ignored;
        std::set<std::string> ignored_required;
        std::map<std::string, std::string> ignored_keys;
        plan_file(alone, one, ignored_required, ignored_keys, ignored, {});
        pb::DescriptorPool test;
        test.BuildFile(struct_file());
        error_collector why;
        if (!test.BuildFileCollectingErrors(one, &why)) {
          warn("action " + a->key + " is not served over gRPC: " + why.first);
          skip.insert(a);
        }
      }
    }
  }
  p->factory = std::make_unique<pb::DynamicMessageFactory>(&p->pool);
  for (auto& [full, plan] : plans) {
    const auto* svc = p->pool.FindServiceByName(full);
    if (!svc)
      continue;
    p->services.push_back(full);
    for (int i = 0; i < svc->method_count(); ++i) {
      const auto* m = svc->method(i);
      // The method's action: the plan's actions in order, minus those left out.
      catalog_method cm;
      cm.path = "/" + full + "/" + m->name();
      cm.key = plan.keys[m->name()];
      cm.key_json = boost::json::serialize(boost::json::string{cm.key});
      cm.kind = m->client_streaming()   ? method_kind::bidi_streaming
                : m->server_streaming() ? method_kind::server_streaming
                                        : method_kind::unary;
      cm.request = m->input_type();
      cm.response = m->output_type();
      p->methods.push_back(std::move(cm));
    }
  }
  std::sort(p->services.begin(), p->services.end());
  for (std::size_t i = 0; i < p->methods.size(); ++i)
    p->by_path.emplace(p->methods[i].path, i);
  return std::shared_ptr<const catalog>{new catalog(std::move(p))};
}

catalog::catalog(std::unique_ptr<impl> p) : impl_(std::move(p)) {
}

catalog::~catalog() = default;

const catalog_method* catalog::find_method(std::string_view path) const {
  auto it = impl_->by_path.find(path);
  return it == impl_->by_path.end() ? nullptr : &impl_->methods[it->second];
}

const std::vector<catalog_method>& catalog::methods() const {
  return impl_->methods;
}

std::vector<std::string> catalog::service_names() const {
  return impl_->services;
}

const pb::DescriptorPool& catalog::pool() const {
  return impl_->pool;
}

std::unique_ptr<pb::Message> catalog::new_message(const pb::Descriptor* type) const {
  return std::unique_ptr<pb::Message>{impl_->factory->GetPrototype(type)->New()};
}

wire::expected<std::string> catalog::json_to_wire(const pb::Descriptor* type,
                                                      std::string_view json) const {
  if (json.size() > max_runtime_json)
    return wire::unexpected{"over 64 MiB"};
  std::string out;
  if (detail::json_to_wire_fast(type, json, out))
    return out;
  out.clear();
  pb::util::JsonParseOptions options;
  options.ignore_unknown_fields = true; // schemas allow more than they name
  // The converter's input stream reads the text in place.
  pb::io::ArrayInputStream in{json.data(), static_cast<int>(json.size())};
  pb::io::StringOutputStream sink{&out};
  auto status = pb::util::JsonToBinaryStream(
    impl_->resolver.get(), std::string{type_url_prefix} + "/" + type->full_name(), &in, &sink,
    options);
  if (!status.ok())
    return wire::unexpected{std::string{status.message()}};
  return out;
}

wire::expected<void> catalog::from_json(std::string_view json, pb::Message& msg) const {
  auto wire = json_to_wire(msg.GetDescriptor(), json);
  if (!wire)
    return wire::unexpected{std::move(wire).error()};
  if (!msg.ParseFromString(*wire))
    return wire::unexpected{"the converted message does not parse"};
  return {};
}

bool catalog::repeated_required(const pb::FieldDescriptor* f) const {
  return impl_->required_repeated.count(f->full_name()) != 0;
}

} // namespace actor_host::grpc_door
