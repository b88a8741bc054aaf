#include "registry/runtime_file.hpp"

#include "wire/jsonrpc.hpp"

#include <boost/json.hpp>

#include <cerrno>
#include <cstring>
#include <ctime>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace actor_host::registry {

namespace json = boost::json;
using wire::jsonrpc::quote;

namespace {

constexpr std::size_t max_file_bytes = 64 * 1024;

/// YYYY-MM-DDTHH:MM[:SS[.fff]][Z|±HH:MM]: the shapes JS's Date.parse reads
/// from Genkit runtimes; a checked format, not a general date parser.
bool looks_like_date(std::string s) {
  for (auto& c : s)
    if (c == '_')
      c = ':';
  auto digits = [&](std::size_t at, std::size_t n) {
    if (at + n > s.size())
      return false;
    for (std::size_t i = at; i < at + n; ++i)
      if (s[i] < '0' || s[i] > '9')
        return false;
    return true;
  };
  return s.size() >= 16 && digits(0, 4) && s[4] == '-' && digits(5, 2) && s[7] == '-'
         && digits(8, 2) && s[10] == 'T' && digits(11, 2) && s[13] == ':' && digits(14, 2);
}

} // namespace

std::string runtime_file_json(const runtime_file& f) {
  std::string out = R"({"id":)" + quote(f.id) + R"(,"pid":)" + std::to_string(f.pid);
  if (!f.name.empty())
    out += R"(,"name":)" + quote(f.name);
  out += R"(,"reflectionServerUrl":)" + quote(f.reflection_server_url) + R"(,"timestamp":)"
         + quote(f.timestamp) + R"(,"genkitVersion":)" + quote(f.genkit_version)
         + R"(,"reflectionApiSpecVersion":)" + std::to_string(f.reflection_api_spec_version)
         + "}";
  return out;
}

bool parse_runtime_file(std::string_view text, runtime_file& out, std::string& error) {
  if (text.size() > max_file_bytes) {
    error = "larger than " + std::to_string(max_file_bytes / 1024) + " KiB";
    return false;
  }
  json::error_code ec;
  // Depth-limited by Boost.JSON's parser (32 by default), no recursion risk.
  auto v = json::parse(text, ec);
  if (ec || !v.is_object()) {
    error = "not a JSON object";
    return false;
  }
  auto& o = v.as_object();
  auto str = [&](const char* k) -> const json::string* {
    auto* x = o.if_contains(k);
    return x && x->is_string() ? &x->as_string() : nullptr;
  };
  auto* id = str("id");
  auto* url = str("reflectionServerUrl");
  auto* ts = str("timestamp");
  auto* pid = o.if_contains("pid");
  if (!id || id->empty()) {
    error = "'id' must be a non-empty string";
    return false;
  }
  if (!pid || !pid->is_number()) {
    error = "'pid' must be a number";
    return false;
  }
  if (!url) {
    error = "'reflectionServerUrl' must be a string";
    return false;
  }
  if (!ts || !looks_like_date(std::string{*ts})) {
    error = "'timestamp' must be a date";
    return false;
  }
  out.id = std::string{*id};
  out.pid = pid->is_int64()    ? pid->as_int64()
            : pid->is_uint64() ? static_cast<std::int64_t>(pid->as_uint64())
                               : static_cast<std::int64_t>(pid->as_double());
  out.reflection_server_url = std::string{*url};
  out.timestamp = std::string{*ts};
  if (auto* n = str("name"))
    out.name = std::string{*n};
  if (auto* g = str("genkitVersion"))
    out.genkit_version = std::string{*g};
  if (auto* s = o.if_contains("reflectionApiSpecVersion"); s && s->is_int64())
    out.reflection_api_spec_version = static_cast<int>(s->as_int64());
  return true;
}

bool read_runtime_file(const std::string& path, runtime_file& out, std::string& error) {
  // Any local process may write into the runtimes folder, and swap a file
  // for a FIFO or a symlink between the folder's scan and this open: never
  // block (a FIFO with no writer would hold the discovery actor and its
  // thread for ever), never follow a link, and look at what was opened.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    error = errno == ELOOP ? "is a symbolic link" : std::string{"cannot be read: "} + std::strerror(errno);
    return false;
  }
  struct closer {
    int fd;
    ~closer() { ::close(fd); }
  } close_fd{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    error = "is not a regular file";
    return false;
  }
  std::string text(max_file_bytes + 1, '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    auto n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      error = std::string{"cannot be read: "} + std::strerror(errno);
      return false;
    }
    if (n == 0)
      break;
    got += static_cast<std::size_t>(n);
  }
  text.resize(got);
  return parse_runtime_file(text, out, error);
}

std::string iso_timestamp(std::chrono::system_clock::time_point t) {
  using namespace std::chrono;
  auto ms = duration_cast<milliseconds>(t.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  ::gmtime_r(&secs, &tm);
  char buf[40];
  auto n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(buf + n, sizeof buf - n, ".%03dZ", static_cast<int>(ms % 1000));
  return buf;
}

std::string runtimes_directory(const std::string& project_root) {
  return project_root + "/.genkit/runtimes";
}

} // namespace actor_host::registry
