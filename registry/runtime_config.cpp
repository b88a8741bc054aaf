#include "registry/runtime_config.hpp"

#include "net/url.hpp"

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

namespace actor_host::registry {

namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

/// A config error at a position in the file; caught once at the top.
struct config_error {
  YAML::Mark mark;
  std::string reason;
};

[[noreturn]] void fail(const YAML::Mark& mark, std::string reason) {
  throw config_error{mark, std::move(reason)};
}

/// A mapping entry: its key (for positions and names) and its value.
struct entry {
  std::string key;
  YAML::Node key_node;
  YAML::Node value;

  /// Where to point at the value. An empty value (`key:`) has the position
  /// of whatever follows it, so point at the key instead.
  YAML::Mark mark() const {
    return value.IsNull() ? key_node.Mark() : value.Mark();
  }
};

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      auto up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

/// The entries of a mapping, checked against `allowed`; duplicate and
/// unknown keys are errors.
std::vector<entry> entries(const YAML::Node& map, std::string_view what,
                           std::initializer_list<std::string_view> allowed) {
  if (!map.IsMap())
    fail(map.Mark(), std::string{what} + " must be a mapping");
  std::vector<entry> out;
  std::map<std::string, int> seen;
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (!it->first.IsScalar())
      fail(it->first.Mark(), "keys of " + std::string{what} + " must be strings");
    auto key = it->first.Scalar();
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string reason = "unknown key '" + key + "' in " + std::string{what};
      auto best = std::min_element(allowed.begin(), allowed.end(), [&](auto a, auto b) {
        return edit_distance(key, a) < edit_distance(key, b);
      });
      if (best != allowed.end() && edit_distance(key, *best) <= 2)
        reason += " (did you mean '" + std::string{*best} + "'?)";
      else {
        reason += " (expected one of:";
        for (auto a : allowed)
          reason += " " + std::string{a};
        reason += ")";
      }
      fail(it->first.Mark(), std::move(reason));
    }
    auto [pos, fresh] = seen.emplace(key, it->first.Mark().line + 1);
    if (!fresh)
      fail(it->first.Mark(),
           "duplicate key '" + key + "' (first at line " + std::to_string(pos->second) + ")");
    out.push_back(entry{key, it->first, it->second});
  }
  return out;
}

std::string scalar(const entry& e) {
  if (!e.value.IsScalar())
    fail(e.mark(), "'" + e.key + "' must be a string");
  return e.value.Scalar();
}

std::string non_empty_scalar(const entry& e) {
  auto s = scalar(e);
  if (s.empty())
    fail(e.mark(), "'" + e.key + "' must not be empty");
  return s;
}

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

bool boolean(const entry& e) {
  auto s = e.value.IsScalar() && e.value.Tag() == "?" ? e.value.Scalar() : std::string{};
  if (s == "true" || s == "True" || s == "TRUE")
    return true;
  if (s == "false" || s == "False" || s == "FALSE")
    return false;
  fail(e.mark(), "'" + e.key + "' must be true or false");
}

std::uint64_t unsigned_number(const entry& e) {
  auto s = e.value.IsScalar() ? e.value.Scalar() : std::string{};
  std::uint64_t n = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (s.empty() || ec != std::errc{} || p != s.data() + s.size())
    fail(e.mark(), "'" + e.key + "' must be a non-negative integer");
  return n;
}

/// `250ms`, `30s`, `2m`, `1h` or a bare number of milliseconds.
std::chrono::milliseconds duration(const entry& e) {
  auto s = e.value.IsScalar() ? e.value.Scalar() : std::string{};
  auto bad = [&] {
    fail(e.mark(), "bad " + e.key + " '" + s
                     + "': expected e.g. 250ms, 30s, 2m, 1h or a number of milliseconds");
  };
  std::uint64_t n = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (s.empty() || ec != std::errc{} || p == s.data())
    bad();
  std::string_view unit{p, static_cast<std::size_t>(s.data() + s.size() - p)};
  std::uint64_t scale = 0;
  if (unit.empty() || unit == "ms")
    scale = 1;
  else if (unit == "s")
    scale = 1000;
  else if (unit == "m")
    scale = 60 * 1000;
  else if (unit == "h")
    scale = 3600 * 1000;
  else
    bad();
  // Keep it far from overflow when added to a steady_clock time point.
  constexpr std::uint64_t max_ms = std::uint64_t{1} << 40; // ~35 years
  if (n > max_ms / scale)
    bad();
  return std::chrono::milliseconds{static_cast<std::int64_t>(n * scale)};
}

std::vector<std::string> string_list(const entry& e) {
  if (!e.value.IsSequence())
    fail(e.mark(), "'" + e.key + "' must be a list of strings");
  std::vector<std::string> out;
  for (const auto& item : e.value) {
    if (!item.IsScalar())
      fail(item.Mark(), "'" + e.key + "' must be a list of strings");
    out.push_back(item.Scalar());
  }
  return out;
}

std::string resolve(const std::string& base_dir, const std::string& path) {
  fs::path p{path};
  if (p.is_absolute() || base_dir.empty())
    return p.lexically_normal().string();
  return (fs::path{base_dir} / p).lexically_normal().string();
}

/// env: NAME: value; the names are free, so not checked against a list.
void parse_env(const entry& e, std::map<std::string, std::string>& env) {
  if (!e.value.IsMap())
    fail(e.mark(), "'env' must be a mapping of NAME: value");
  for (auto it = e.value.begin(); it != e.value.end(); ++it) {
    auto var = it->first.IsScalar() ? it->first.Scalar() : std::string{};
    if (var.empty() || var.find('=') != std::string::npos)
      fail(it->first.Mark(), "bad environment variable name '" + var + "'");
    if (env.count(var) != 0)
      fail(it->first.Mark(), "duplicate key '" + var + "'");
    if (!it->second.IsScalar())
      fail(it->second.IsNull() ? it->first.Mark() : it->second.Mark(),
           "value of environment variable '" + var + "' must be a string");
    env[var] = it->second.Scalar();
  }
}

program_spec parse_action(const YAML::Node& node, const std::string& base_dir) {
  auto items = entries(node, "action",
                       {"name", "type", "description", "command", "args", "env", "cwd",
                        "inputSchema", "outputSchema", "streamSchema", "initSchema", "metadata",
                        "bidi", "timeout", "maxConcurrency", "killGrace"});
  program_spec spec;
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
      if (!net::parse_url(url))
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

std::string format(const std::string& file, const YAML::Mark& mark, const std::string& reason) {
  if (mark.is_null() || mark.line < 0)
    return file + ": " + reason;
  return file + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1) + ": "
         + reason;
}

} // namespace

bool parse_runtime_config(const std::string& text, const std::string& file_name,
                          const std::string& base_dir, runtime_config& out, std::string& error) {
  runtime_config result;
  try {
    parse(YAML::Load(text), base_dir, result);
  } catch (const config_error& e) {
    error = format(file_name, e.mark, e.reason);
    return false;
  } catch (const YAML::Exception& e) {
    error = format(file_name, e.mark, e.msg);
    return false;
  }
  out = std::move(result);
  return true;
}

bool load_runtime_config(const std::string& path, runtime_config& out, std::string& error) {
  std::ifstream in{path, std::ios::binary};
  if (!in) {
    error = path + ": cannot open: " + std::strerror(errno);
    return false;
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    error = path + ": cannot read: " + std::strerror(errno);
    return false;
  }
  std::error_code ec;
  auto dir = fs::absolute(fs::path{path}, ec).parent_path().lexically_normal().string();
  if (ec) {
    error = path + ": " + ec.message();
    return false;
  }
  return parse_runtime_config(text.str(), path, dir, out, error);
}

} // namespace actor_host::registry
