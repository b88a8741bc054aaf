#define CAF_SUITE v1_discovery

#include "test_support.hpp"

#include "actors/doors/v1/v1_discovery.hpp"
#include "registry/runtime_file.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

// The manager's watch over a Genkit project's runtime files: which files
// lead to a connection, when a connection is closed, when a file is removed.
// The connections are stand-ins; scans are driven by the test.

using namespace actor_host;
using namespace actor_host::testing;
namespace fs = std::filesystem;

namespace {

std::string file_json(const std::string& id, std::int64_t pid, const std::string& url) {
  return R"({"id":")" + id + R"(","pid":)" + std::to_string(pid) + R"(,"reflectionServerUrl":")"
         + url + R"(","timestamp":"2026-12-04T10:00:00.000Z","genkitVersion":"nodejs/1.43.0","reflectionApiSpecVersion":1})";
}

// A pid no process has: above Linux's pid_max.
constexpr std::int64_t gone_pid = 999999999;

struct fixture : actor_fixture {
  fs::path dir;
  std::vector<std::string> connected; // ids, in order
  std::map<std::string, std::pair<caf::actor, fake_transport_ptr>> conns;
  caf::actor discovery;

  fixture() {
    char tmpl[] = "/tmp/v1-discovery-XXXXXX";
    dir = fs::path{::mkdtemp(tmpl)} / ".genkit" / "runtimes";
    fs::create_directories(dir);
    v1_discovery_options o;
    o.runtimes_dir = dir.string();
    o.scan_interval = std::chrono::milliseconds{0};
    o.connect = [this](const registry::runtime_file& f) {
      connected.push_back(f.id);
      auto t = std::make_shared<fake_transport>();
      auto conn = spawn_dummy();
      conns[f.id] = {conn, t};
      return v1_connection{conn, t};
    };
    discovery = sys.spawn(v1_discovery, std::move(o));
    sched.run();
  }

  ~fixture() {
    for (auto& [id, c] : conns)
      caf::anon_send_exit(c.first, caf::exit_reason::kill);
    caf::anon_send_exit(discovery, caf::exit_reason::kill);
    sched.run();
    std::error_code ec;
    fs::remove_all(dir.parent_path().parent_path(), ec);
  }

  void write(const std::string& name, const std::string& text) {
    std::ofstream{dir / name} << text;
  }

  // A changed file gets a later mtime even within the clock's granularity.
  void rewrite(const std::string& name, const std::string& text) {
    auto before = fs::last_write_time(dir / name);
    write(name, text);
    fs::last_write_time(dir / name, before + std::chrono::seconds(1));
  }

  void scan() {
    caf::anon_send(discovery, scan_atom_v);
    sched.run();
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(v1_discovery_tests, fixture)

CAF_TEST(only valid files of loopback runtimes are connected and each once) {
  write("a-1.json", file_json("a", ::getpid(), "http://localhost:3100"));
  write("b-1.json", "{not json");
  write("c-1.json", file_json("c", ::getpid(), "http://evil.example:3100"));
  write("d-1.json", file_json("d", ::getpid(), "file:///etc/passwd"));
  write("e-1.json", file_json("bad\nid", ::getpid(), "http://127.0.0.1:3101"));
  write("notes.txt", file_json("f", ::getpid(), "http://127.0.0.1:3102"));
  fs::create_symlink(dir / "a-1.json", dir / "g-1.json");
  scan();
  CAF_CHECK_EQUAL(connected, std::vector<std::string>{"a"});
  scan();
  CAF_CHECK_EQUAL(connected.size(), 1u);
}

CAF_TEST(a refused file is tried again once it changes) {
  write("b-1.json", "{not json");
  scan();
  CAF_CHECK(connected.empty());
  rewrite("b-1.json", file_json("b", ::getpid(), "http://[::1]:3100"));
  scan();
  CAF_CHECK_EQUAL(connected, std::vector<std::string>{"b"});
}

CAF_TEST(a removed file closes its connection) {
  write("a-1.json", file_json("a", ::getpid(), "http://localhost:3100"));
  scan();
  CAF_REQUIRE_EQUAL(connected.size(), 1u);
  auto t = conns["a"].second;
  CAF_CHECK_EQUAL(t->close_calls(), 0);
  fs::remove(dir / "a-1.json");
  scan();
  CAF_CHECK_EQUAL(t->close_calls(), 1);
}

CAF_TEST(a connection that ends leaves the file of a live process and removes a dead one) {
  write("live-1.json", file_json("live", ::getpid(), "http://localhost:3100"));
  write("dead-1.json", file_json("dead", gone_pid, "http://localhost:3101"));
  scan();
  CAF_REQUIRE_EQUAL(connected.size(), 2u);
  stop(conns["live"].first);
  stop(conns["dead"].first);
  CAF_CHECK(fs::exists(dir / "live-1.json"));
  CAF_CHECK(!fs::exists(dir / "dead-1.json"));
  // The live one is not dialed again until it writes its file anew.
  scan();
  CAF_CHECK_EQUAL(connected.size(), 2u);
  rewrite("live-1.json", file_json("live", ::getpid(), "http://localhost:3100"));
  scan();
  CAF_CHECK_EQUAL(connected.size(), 3u);
}

CAF_TEST(no folder yet is no error and a folder that appears is read) {
  fs::remove_all(dir);
  scan();
  CAF_CHECK(connected.empty());
  fs::create_directories(dir);
  write("a-1.json", file_json("a", ::getpid(), "http://localhost:3100"));
  scan();
  CAF_CHECK_EQUAL(connected.size(), 1u);
}

CAF_TEST(url checks) {
  CAF_CHECK(v1_url_problem("http://localhost:3100").empty());
  CAF_CHECK(v1_url_problem("http://127.0.0.1:3100").empty());
  CAF_CHECK(!v1_url_problem("https://localhost:3100").empty());
  CAF_CHECK(!v1_url_problem("http://localhost:3100/api").empty());
  CAF_CHECK(!v1_url_problem("http://10.0.0.1:3100").empty());
  // The manager's own listeners: a file pointing there made calls loop.
  std::vector<std::uint16_t> own{4100, 3200};
  CAF_CHECK(v1_url_problem("http://localhost:3100", own).empty());
  CAF_CHECK_EQUAL(v1_url_problem("http://127.0.0.1:4100", own),
                  "is this manager's own listener (port 4100): a runtime file must point at a "
                  "runtime");
  CAF_CHECK(!v1_url_problem("http://[::1]:3200", own).empty());
  CAF_CHECK(v1_url_problem("http://[::1]", own).empty());
  CAF_CHECK(!v1_url_problem("http://localhost", {80}).empty());
}

CAF_TEST_FIXTURE_SCOPE_END()

// A file swapped for a FIFO (or a link) between the scan and the open: it is
// refused at once. Reading it used to block in open() until a writer came.
CAF_TEST(a runtime file swapped for a fifo or a symlink is refused without blocking) {
  char tmpl[] = "/tmp/v1-fifo-XXXXXX";
  fs::path dir{::mkdtemp(tmpl)};
  auto fifo = (dir / "a-1.json").string();
  CAF_REQUIRE_EQUAL(::mkfifo(fifo.c_str(), 0600), 0);
  registry::runtime_file f;
  std::string why;
  auto read = std::async(std::launch::async, [&] { return registry::read_runtime_file(fifo, f, why); });
  bool prompt = read.wait_for(std::chrono::seconds{10}) == std::future_status::ready;
  if (!prompt) // unblock the reader so the test can end (and fail)
    ::close(::open(fifo.c_str(), O_WRONLY));
  CAF_CHECK(!read.get());
  CAF_CHECK(prompt);
  CAF_CHECK_EQUAL(why, "is not a regular file");
  std::ofstream{dir / "real.json"} << file_json("a", ::getpid(), "http://localhost:3100");
  fs::create_symlink(dir / "real.json", dir / "b-1.json");
  CAF_CHECK(!registry::read_runtime_file((dir / "b-1.json").string(), f, why));
  CAF_CHECK_EQUAL(why, "is a symbolic link");
  CAF_CHECK(registry::read_runtime_file((dir / "real.json").string(), f, why));
  CAF_CHECK_EQUAL(f.id, "a");
  fs::remove_all(dir);
}

