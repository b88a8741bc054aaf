#pragma once

#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <vector>

/// Strict reading of YAML config files, shared by every config format:
/// unknown keys (with a "did you mean"), duplicate keys and wrong types are
/// errors that point at `file:line:column`.
namespace actor_host::config::yaml_read {

/// A config error at a position in the file; caught once at the top.
struct config_error {
  YAML::Mark mark;
  std::string reason;
};

[[noreturn]] void fail(const YAML::Mark& mark, std::string reason);

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

/// The entries of a mapping, checked against `allowed`.
std::vector<entry> entries(const YAML::Node& map, std::string_view what,
                           std::initializer_list<std::string_view> allowed);

std::string scalar(const entry& e);
std::string non_empty_scalar(const entry& e);
bool boolean(const entry& e);
std::uint64_t unsigned_number(const entry& e);
std::chrono::milliseconds duration(const entry& e);
std::vector<std::string> string_list(const entry& e);
/// `path` against `base_dir` unless absolute.
std::string resolve(const std::string& base_dir, const std::string& path);
/// env: NAME: value; the names are free, so not checked against a list.
void parse_env(const entry& e, std::map<std::string, std::string>& env);

/// `file:line:column: reason`, or `file: reason` without a position.
std::string format(const std::string& file, const YAML::Mark& mark, const std::string& reason);

/// Reads a whole file; false with `error` = "path: cannot open: ..." else.
bool read_file(const std::string& path, std::string& text, std::string& error);

/// The absolute directory of `path`, for resolving relative paths in it.
std::string directory_of(const std::string& path, std::string& error);

/// Loads `text` and runs `parse` on the root, turning config_error and
/// yaml-cpp's own errors into `error`. False on any error.
template <class F>
bool parse_document(const std::string& text, const std::string& file_name, std::string& error,
                    F&& parse) {
  try {
    parse(YAML::Load(text));
  } catch (const config_error& e) {
    error = format(file_name, e.mark, e.reason);
    return false;
  } catch (const YAML::Exception& e) {
    error = format(file_name, e.mark, e.msg);
    return false;
  }
  return true;
}

} // namespace actor_host::config::yaml_read
