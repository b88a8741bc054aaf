#define CAF_SUITE private_file

#include <caf/test/unit_test.hpp>

#include "proc/private_file.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <sys/stat.h>

using namespace actor_host;
namespace fs = std::filesystem;

namespace {

struct tmp_dir {
  fs::path path;
  tmp_dir() {
    std::string tmpl = (fs::temp_directory_path() / "private-file-XXXXXX").string();
    path = ::mkdtemp(tmpl.data());
  }
  ~tmp_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string read(const fs::path& p) {
  std::ifstream in{p};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

unsigned mode_of(const fs::path& p) {
  struct stat st {};
  ::lstat(p.c_str(), &st);
  return st.st_mode & 07777;
}

} // namespace

CAF_TEST(the file is written for its owner only and replaced whole) {
  tmp_dir dir;
  auto file = dir.path / "runtime.env";
  { std::ofstream{file} << "OLD=1\nLONGER=than the new one\n"; }
  fs::permissions(file, fs::perms{0644});
  auto old_mask = ::umask(0);
  auto err = proc::write_private_file(file.string(), "A=1\n");
  ::umask(old_mask);
  CAF_CHECK_EQUAL(err, "");
  CAF_CHECK_EQUAL(read(file), "A=1\n");
  CAF_CHECK_EQUAL(mode_of(file), 0600u);
  // No temporary file is left behind.
  CAF_CHECK_EQUAL(std::distance(fs::directory_iterator{dir.path}, fs::directory_iterator{}), 1);
}

CAF_TEST(a symbolic link planted at the path is not followed) {
  tmp_dir dir;
  auto target = dir.path / "victim";
  { std::ofstream{target} << "precious\n"; }
  auto link = dir.path / "runtime.env";
  fs::create_symlink(target, link);
  auto err = proc::write_private_file(link.string(), "A=1\n");
  CAF_CHECK_EQUAL(err, "refusing to write " + link.string()
                         + ": it is a symbolic link (remove it, or give the path it points to)");
  CAF_CHECK_EQUAL(read(target), "precious\n");
  CAF_CHECK(fs::is_symlink(fs::symlink_status(link)));
  // A dangling link would have let the old code create a file where it points.
  auto dangling = dir.path / "dangling.env";
  fs::create_symlink(dir.path / "created-elsewhere", dangling);
  CAF_CHECK_NOT_EQUAL(proc::write_private_file(dangling.string(), "A=1\n"), "");
  CAF_CHECK(!fs::exists(dir.path / "created-elsewhere"));
}

CAF_TEST(a path in a missing directory fails with the reason) {
  tmp_dir dir;
  auto err = proc::write_private_file((dir.path / "no" / "such.env").string(), "A=1\n");
  CAF_CHECK(err.find("No such file or directory") != std::string::npos);
}
