#include "proc/private_file.hpp"

#include "proc/unique_fd.hpp"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace actor_host::proc {

namespace {

std::string errno_text(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    auto n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

std::string temp_name_for(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  return path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
}

} // namespace

std::string write_private_file(const std::string& path, std::string_view content) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode))
      return "refusing to write " + path
             + ": it is a symbolic link (remove it, or give the path it points to)";
    if (!S_ISREG(st.st_mode))
      return "refusing to write " + path + ": it exists and is not a regular file";
  } else if (errno != ENOENT) {
    return errno_text("cannot write " + path);
  }
  auto tmp = temp_name_for(path);
  unique_fd fd{::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)};
  if (!fd)
    return errno_text("cannot write " + path + " (creating " + tmp + ")");
  auto fail = [&](const std::string& what) {
    auto why = errno_text("cannot write " + path + " (" + what + ")");
    ::unlink(tmp.c_str());
    return why;
  };
  // The umask may have taken bits away; 0600 is what the caller asked for.
  if (::fchmod(fd.get(), 0600) != 0)
    return fail("chmod");
  if (!write_all(fd.get(), content))
    return fail("write");
  if (::fsync(fd.get()) != 0)
    return fail("fsync");
  if (::close(fd.release()) != 0)
    return fail("close");
  // rename() replaces a link planted since the lstat above; it never follows one.
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    return fail("rename");
  auto dir = std::filesystem::path{path}.parent_path().string();
  unique_fd dfd{::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (dfd)
    ::fsync(dfd.get()); // best effort: the rename itself is already visible
  return {};
}

} // namespace actor_host::proc
