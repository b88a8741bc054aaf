#include "config/yaml_read.hpp"

#include "config/duration.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace actor_host::config::yaml_read {

namespace fs = std::filesystem;

namespace {

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

} // namespace

void fail(const YAML::Mark& mark, std::string reason) {
  throw config_error{mark, std::move(reason)};
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
  auto ms = parse_duration_ms(s);
  if (!ms)
    fail(e.mark(), "bad " + e.key + " '" + s
                     + "': expected e.g. 250ms, 30s, 2m, 1h or a number of milliseconds");
  return std::chrono::milliseconds{*ms};
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

std::string format(const std::string& file, const YAML::Mark& mark, const std::string& reason) {
  if (mark.is_null() || mark.line < 0)
    return file + ": " + reason;
  return file + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1) + ": "
         + reason;
}

bool read_file(const std::string& path, std::string& text, std::string& error) {
  std::ifstream in{path, std::ios::binary};
  if (!in) {
    error = path + ": cannot open: " + std::strerror(errno);
    return false;
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) {
    error = path + ": cannot read: " + std::strerror(errno);
    return false;
  }
  text = buf.str();
  return true;
}

std::string directory_of(const std::string& path, std::string& error) {
  std::error_code ec;
  auto dir = fs::absolute(fs::path{path}, ec).parent_path().lexically_normal().string();
  if (ec)
    error = path + ": " + ec.message();
  return dir;
}

} // namespace actor_host::config::yaml_read
