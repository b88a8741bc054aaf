#include "config/project_root.hpp"

#include <array>
#include <filesystem>
#include <system_error>

namespace actor_host::config {

namespace fs = std::filesystem;

std::string find_project_root(const std::string& start_dir) {
  static constexpr std::array markers{"package.json", "go.mod",       "pyproject.toml",
                                      "requirements.txt", "pom.xml",  "build.gradle",
                                      "build.gradle.kts", "pubspec.yaml"};
  std::error_code ec;
  auto dir = fs::absolute(start_dir, ec);
  if (ec)
    return start_dir;
  for (auto d = dir; d != d.root_path() && !d.empty(); d = d.parent_path()) {
    for (auto* m : markers)
      if (fs::exists(d / m, ec))
        return d.string();
  }
  return dir.string();
}

std::string current_directory() {
  std::error_code ec;
  auto d = fs::current_path(ec);
  return ec ? std::string{"."} : d.string();
}

} // namespace actor_host::config
