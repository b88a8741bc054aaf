#include "config/runtime_config.hpp"

#include "config/precedence.hpp"
#include "config/yaml_read.hpp"
#include "wire/url.hpp"

#include <boost/json.hpp>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <map>
#include <sstream>
#include <string_view>

#include <sys/stat.h>
#include <unistd.h>

namespace actor_host::config {

namespace {

namespace json = boost::json;
using namespace yaml_read;

/// YAML 1.2 core schema resolution of a plain scalar, for converting
/// mappings to JSON: quoted scalars and `!!str` stay strings.
json::value scalar_to_json(const YAML::Node& n) {
  const auto& s = n.Scalar();
  if (n.Tag() != "?")
    return json::value(s);
  if (s == "null" || s == "Null" || s == "NULL" || s == "~" || s.empty())
    return nullptr;
  if (s == "true" || s == "True" || s == "TRUE")
    return true;
  if (s == "false" || s == "False" || s == "FALSE")
    return false;
  const char* first = s.data();
  const char* last = s.data() + s.size();
  if (*first == '+')
    ++first;
  std::int64_t i = 0;
  if (auto [p, ec] = std::from_chars(first, last, i); ec == std::errc{} && p == last)
    return i;
  // Only decimal forms: from_chars would also take "inf" and "nan", which
  // JSON cannot carry, and YAML spells those .inf/.nan anyway.
  bool numeric = first != last
                 && std::all_of(first, last, [](char c) {
                      return std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e'
                             || c == 'E' || c == '-' || c == '+';
                    });
  double d = 0;
  if (auto [p, ec] = std::from_chars(first, last, d);
      numeric && ec == std::errc{} && p == last && std::isfinite(d))
    return d;
  return json::value(s);
}

json::value to_json(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Null:
      return nullptr;
    case YAML::NodeType::Scalar:
      return scalar_to_json(n);
    case YAML::NodeType::Sequence: {
      json::array arr;
      for (const auto& item : n)
        arr.push_back(to_json(item));
      return arr;
    }
    case YAML::NodeType::Map: {
      json::object obj;
      for (auto it = n.begin(); it != n.end(); ++it) {
        if (!it->first.IsScalar())
          fail(it->first.Mark(), "keys must be strings to convert to JSON");
        auto key = it->first.Scalar();
        if (obj.contains(key))
          fail(it->first.Mark(), "duplicate key '" + key + "'");
        obj[key] = to_json(it->second);
      }
      return obj;
    }
    default:
      fail(n.Mark(), "value cannot be converted to JSON");
  }
}

/// A schema or metadata: a YAML mapping, or a string holding JSON text.
std::string json_object_text(const entry& e) {
  if (e.value.IsMap())
    return json::serialize(to_json(e.value));
  if (e.value.IsScalar()) {
    boost::system::error_code ec;
    auto v = json::parse(e.value.Scalar(), ec);
    if (ec)
      fail(e.mark(), "'" + e.key + "' is not valid JSON: " + ec.message());
    if (!v.is_object() && !(e.key != "metadata" && v.is_bool()))
      fail(e.mark(), "'" + e.key + "' must be a JSON object");
    return json::serialize(v);
  }
  fail(e.mark(), "'" + e.key + "' must be a mapping or a JSON object string");
}

actions::program_spec parse_action(const YAML::Node& node, const std::string& base_dir) {
  auto items = entries(node, "action",
                       {"name", "type", "description", "command", "args", "env", "cwd",
                        "inputSchema", "outputSchema", "streamSchema", "initSchema", "metadata",
                        "bidi", "timeout", "maxConcurrency", "killGrace"});
  actions::program_spec spec;
  const entry* command = nullptr;
  const entry* args = nullptr;
  const entry* cwd = nullptr;
  bool has_name = false;
  for (auto& e : items) {
    if (e.key == "name") {
      spec.name = non_empty_scalar(e);
      has_name = true;
    } else if (e.key == "type") {
      spec.type = non_empty_scalar(e);
      if (spec.type.find('/') != std::string::npos)
        fail(e.mark(), "'type' must not contain '/'");
    } else if (e.key == "description") {
      spec.description = scalar(e);
    } else if (e.key == "command") {
      command = &e;
    } else if (e.key == "args") {
      args = &e;
    } else if (e.key == "env") {
      parse_env(e, spec.env);
    } else if (e.key == "cwd") {
      cwd = &e;
    } else if (e.key == "inputSchema") {
      spec.input_schema = json_object_text(e);
    } else if (e.key == "outputSchema") {
      spec.output_schema = json_object_text(e);
    } else if (e.key == "streamSchema") {
      spec.stream_schema = json_object_text(e);
    } else if (e.key == "initSchema") {
      spec.init_schema = json_object_text(e);
    } else if (e.key == "metadata") {
      spec.metadata = json_object_text(e);
    } else if (e.key == "bidi") {
      spec.bidi = boolean(e);
    } else if (e.key == "timeout") {
      spec.timeout = duration(e);
    } else if (e.key == "killGrace") {
      spec.kill_grace = duration(e);
    } else if (e.key == "maxConcurrency") {
      spec.max_concurrency = static_cast<std::size_t>(unsigned_number(e));
    }
  }
  if (!has_name)
    fail(node.Mark(), "action without 'name'");
  if (command == nullptr)
    fail(node.Mark(), "action '" + spec.name + "' has no 'command'");
  // command: a string (the program, not split: no shell is involved) or a
  // list [program, arg...]; args: are appended either way.
  if (command->value.IsScalar()) {
    auto program = non_empty_scalar(*command);
    if (program.find_first_of(" \t") != std::string::npos)
      fail(command->mark(), "'command' string contains whitespace; no shell splits it: write "
                            "a list [program, arg, ...] or use 'args'");
    spec.command.push_back(std::move(program));
  } else {
    spec.command = string_list(*command);
    if (spec.command.empty() || spec.command.front().empty())
      fail(command->mark(), "'command' must name a program");
  }
  if (args != nullptr) {
    auto more = string_list(*args);
    spec.command.insert(spec.command.end(), more.begin(), more.end());
  }
  // Relative paths mean "next to the config file", wherever the runtime
  // was started from.
  spec.cwd = cwd != nullptr ? resolve(base_dir, non_empty_scalar(*cwd)) : base_dir;
  if (cwd != nullptr) {
    struct stat st {};
    if (::stat(spec.cwd.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      fail(cwd->mark(), "cwd '" + spec.cwd + "' is not a directory");
  }
  auto& program = spec.command.front();
  if (program.find('/') != std::string::npos) {
    program = resolve(base_dir, program);
    struct stat st {};
    if (::stat(program.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
      fail(command->mark(), "program '" + program + "' not found");
    if (::access(program.c_str(), X_OK) != 0)
      fail(command->mark(), "program '" + program + "' is not executable");
  }
  return spec;
}

void parse(const YAML::Node& root, const std::string& base_dir, runtime_config& out) {
  if (root.IsNull())
    fail(root.Mark(), "the config is empty");
  for (auto& e : entries(root, "runtime config", {"manager", "id", "name", "actions"})) {
    if (e.key == "manager") {
      auto url = non_empty_scalar(e);
      if (!wire::parse_url(url))
        fail(e.mark(), "'manager' is not a ws://, wss://, http:// or https:// URL: " + url);
      out.manager_url = std::move(url);
    } else if (e.key == "id") {
      out.id = non_empty_scalar(e);
    } else if (e.key == "name") {
      out.name = non_empty_scalar(e);
    } else if (e.key == "actions") {
      if (e.value.IsNull())
        continue;
      if (!e.value.IsSequence())
        fail(e.mark(), "'actions' must be a list");
      std::map<std::string, int> lines;
      for (const auto& node : e.value) {
        auto spec = parse_action(node, base_dir);
        auto key = "/" + spec.type + "/" + spec.name;
        auto [pos, fresh] = lines.emplace(key, node.Mark().line + 1);
        if (!fresh)
          fail(node.Mark(), "duplicate action " + key + " (first at line "
                              + std::to_string(pos->second) + ")");
        out.actions.push_back(std::move(spec));
      }
    }
  }
}

} // namespace

bool parse_runtime_config(const std::string& text, const std::string& file_name,
                          const std::string& base_dir, runtime_config& out, std::string& error) {
  runtime_config result;
  if (!yaml_read::parse_document(text, file_name, error,
                                 [&](const YAML::Node& root) { parse(root, base_dir, result); }))
    return false;
  out = std::move(result);
  return true;
}

bool load_runtime_config(const std::string& path, runtime_config& out, std::string& error) {
  std::string text;
  if (!yaml_read::read_file(path, text, error))
    return false;
  error.clear();
  auto dir = yaml_read::directory_of(path, error);
  if (!error.empty())
    return false;
  return parse_runtime_config(text, path, dir, out, error);
}

runtime_link resolve_runtime_link(const runtime_link& flags,
                                  const std::map<std::string, std::string>& env,
                                  const runtime_config& file) {
  auto pick = [&](const std::string& flag, const char* flag_name, const char* env_name,
                  const std::optional<std::string>& in_file) {
    layer_value from_file;
    if (in_file)
      from_file = setting_value{*in_file, "runtime config"};
    return effective_value({"", "default"}, from_file,
                           env_name != nullptr ? env_value(env, env_name, true) : std::nullopt,
                           non_empty(flag, flag_name))
      .value;
  };
  runtime_link out;
  out.manager_url = pick(flags.manager_url, "flag --manager", "GENKIT_REFLECTION_V2_SERVER",
                         file.manager_url);
  out.id = pick(flags.id, "flag --id", "GENKIT_RUNTIME_ID", file.id);
  out.name = pick(flags.name, "flag --name", nullptr, file.name);
  out.tls_ca_file = pick(flags.tls_ca_file, "flag --tls-ca-file", "ACTOR_HOST_TLS_CA_FILE",
                         std::nullopt);
  return out;
}

} // namespace actor_host::config
