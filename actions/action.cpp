#include "actions/action.hpp"

#include "schema/json_schema.hpp"
#include "wire/jsonrpc.hpp"

#include <algorithm>

namespace actor_host::actions {

namespace {

// Input and output schemas compile the same way; a schema that does not
// compile is a start-up error, never a surprise during a run.
void compile_once(const std::string& text, std::shared_ptr<const schema::json_schema>& validator,
                  std::string_view what, const std::string& key) {
  if (text.empty() || validator)
    return;
  auto compiled = schema::json_schema::compile(text);
  if (!compiled)
    throw std::invalid_argument(std::string{what} + " schema of " + key + " does not compile: "
                                + compiled.error());
  validator = std::move(*compiled);
}

} // namespace

void action_catalog::add(action_descriptor action) {
  auto key = action.key();
  compile_once(action.input_schema, action.input_validator, "input", key);
  compile_once(action.output_schema, action.output_validator, "output", key);
  auto i = std::find_if(actions_.begin(), actions_.end(), [&](auto& a) { return a.key() == key; });
  if (i != actions_.end())
    *i = std::move(action);
  else
    actions_.push_back(std::move(action));
}

void action_catalog::add_value(std::string type, std::string name, std::string json) {
  values_[std::move(type)][std::move(name)] = std::move(json);
}

const action_descriptor* action_catalog::find(std::string_view key) const {
  for (auto& a : actions_)
    if (a.key() == key)
      return &a;
  return nullptr;
}

std::string action_catalog::list_actions_json() const {
  return R"({"actions":)" + actions_map_json() + "}";
}

std::string action_catalog::actions_map_json() const {
  using wire::jsonrpc::quote;
  std::string out = "{";
  bool first = true;
  for (auto& a : actions_) {
    if (!first)
      out += ',';
    first = false;
    auto key = quote(a.key());
    out += key + R"(:{"key":)" + key + R"(,"name":)" + quote(a.name);
    if (!a.description.empty())
      out += R"(,"description":)" + quote(a.description);
    if (!a.metadata.empty())
      out += R"(,"metadata":)" + a.metadata;
    if (!a.input_schema.empty())
      out += R"(,"inputSchema":)" + a.input_schema;
    if (!a.output_schema.empty())
      out += R"(,"outputSchema":)" + a.output_schema;
    // Genkit's JS runtime leaves it out; its tools keep it, and it is how
    // the gRPC door knows a streaming action (server-streaming method).
    if (!a.stream_schema.empty())
      out += R"(,"streamSchema":)" + a.stream_schema;
    out += '}';
  }
  out += "}";
  return out;
}

std::optional<std::string> action_catalog::list_values_json(std::string_view type) const {
  if (auto values = values_map_json(type))
    return R"({"values":)" + *values + "}";
  return std::nullopt;
}

std::optional<std::string> action_catalog::values_map_json(std::string_view type) const {
  if (type != "defaultModel" && type != "middleware")
    return std::nullopt;
  std::string out = "{";
  if (auto i = values_.find(std::string{type}); i != values_.end()) {
    bool first = true;
    for (auto& [name, json] : i->second) {
      if (!first)
        out += ',';
      first = false;
      out += wire::jsonrpc::quote(name) + ":" + json;
    }
  }
  out += "}";
  return out;
}

} // namespace actor_host::actions
