#include "actors/call/describe.hpp"

#include "actors/call/errors.hpp"
#include "grpc_door/naming.hpp"
#include "schema/ref_closure.hpp"
#include "wire/iii_protocol.hpp"

#include <boost/json.hpp>

namespace actor_host {

namespace json = boost::json;

namespace {

constexpr std::size_t max_symbol = 1024;

// -32602 (Status INVALID_ARGUMENT, HTTP 400), as every door's bad params.
call_error invalid(std::string_view why) {
  return manager_errors::invalid_params("'symbol' " + std::string{why});
}

bool printable(std::string_view s) {
  for (char c : s)
    if (c <= 0x20 || c >= 0x7f)
      return false;
  return true;
}

} // namespace

std::optional<call_error> parse_describe_symbol(std::string_view symbol, describe_target& out) {
  if (symbol.empty())
    return invalid("is required: an action key such as /flow/echo or a gRPC method such as "
                   "genkit.flow.Flows.echo");
  if (symbol.size() > max_symbol)
    return invalid("is over 1 KiB");
  if (!printable(symbol))
    return invalid("must be printable ASCII without spaces");
  if (symbol[0] == '/' && symbol.find('/', 1) != std::string_view::npos
      && symbol.find('.') != 1) {
    // An action key, unless it is "/genkit.flow.Flows/echo" (a gRPC path).
    auto second = symbol.find('/', 1);
    if (symbol.substr(1, second - 1).find('.') == std::string_view::npos) {
      out.key = std::string{symbol};
      return {};
    }
  }
  // A gRPC method: [/]package.Service(./)method.
  auto s = symbol[0] == '/' ? symbol.substr(1) : symbol;
  auto cut = s.rfind('/');
  if (cut == std::string_view::npos)
    cut = s.rfind('.');
  if (cut == std::string_view::npos || cut + 1 >= s.size())
    return invalid("is neither an action key (/flow/echo) nor a gRPC method "
                   "(genkit.flow.Flows.echo)");
  auto service = s.substr(0, cut);
  out.grpc_method = std::string{s.substr(cut + 1)};
  if (service == "iii.Functions") {
    out.type = "iii";
    return {};
  }
  // genkit.<type>.<Type>s
  if (service.substr(0, 7) != "genkit." || service.find('.', 7) == std::string_view::npos)
    return invalid("names no service of the gRPC door (genkit.<type>.<Type>s, iii.Functions)");
  auto dot = service.find('.', 7);
  out.type = std::string{service.substr(7, dot - 7)};
  return {};
}

call_request describe_call(const describe_target& t, std::string runtime_id,
                           const call_policy& policy) {
  bool iii = t.type == "iii" || t.key.rfind("/iii/", 0) == 0;
  return list_actions_call(iii ? std::string{wire::iii::iii_runtime_id} : std::move(runtime_id),
                           policy);
}

std::optional<call_error> describe_from_listing(const std::string& listing,
                                                const describe_target& t,
                                                const std::string& runtime_id, std::string& out) {
  boost::system::error_code ec;
  json::parse_options po;
  po.max_depth = 512; // Boost.JSON parses without recursion; schemas nest deep
  auto v = json::parse(listing, ec, {}, po);
  const json::object* actions = nullptr;
  if (!ec && v.is_object())
    if (auto* a = v.get_object().if_contains("actions"))
      actions = a->if_object();
  if (!actions)
    return manager_errors::internal("the runtime's listActions has no actions map");
  const json::object* entry = nullptr;
  std::string key;
  for (auto& kv : *actions) {
    std::string_view k = kv.key();
    bool match = false;
    if (!t.key.empty()) {
      match = k == t.key;
    } else if (k.size() > t.type.size() + 2 && k.substr(1, t.type.size()) == t.type
               && k[t.type.size() + 1] == '/') {
      match = grpc_door::proto_identifier(k.substr(t.type.size() + 2)) == t.grpc_method;
    }
    if (match && kv.value().is_object()) {
      entry = &kv.value().get_object();
      key = std::string{k};
      break;
    }
  }
  auto shown = t.key.empty() ? t.type + " method " + t.grpc_method : t.key;
  if (!entry)
    return manager_errors::make_error(
      wire::status_code::not_found,
      "no action " + shown + (runtime_id.empty() ? std::string{} : " on runtime " + runtime_id));
  json::object d;
  d["key"] = key;
  if (auto* n = entry->if_contains("name"))
    d["name"] = *n;
  if (!runtime_id.empty())
    d["runtimeId"] = runtime_id;
  for (auto* f : {"description", "metadata"})
    if (auto* x = entry->if_contains(f))
      d[f] = *x;
  for (auto* f : {"inputSchema", "outputSchema", "streamSchema"}) {
    auto* x = entry->if_contains(f);
    if (!x)
      continue;
    json::value resolved;
    if (auto why = schema::resolve_refs(*x, resolved); !why.empty())
      return manager_errors::make_error(wire::status_code::failed_precondition,
                                        "the " + std::string{f} + " of " + key + ": " + why);
    d[f] = std::move(resolved);
  }
  out = json::serialize(d);
  return {};
}

} // namespace actor_host
