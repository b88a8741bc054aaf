#define CAF_SUITE asset_dir

#include <caf/test/unit_test.hpp>

#include "ui/asset_dir.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>

// --ui-assets: a web app's folder read once and served from memory.

using namespace actor_host::ui;
namespace fs = std::filesystem;

namespace {

struct fixture {
  fs::path dir;
  fixture() {
    char tmpl[] = "/tmp/asset-dir-XXXXXX";
    dir = ::mkdtemp(tmpl);
    fs::create_directories(dir / "assets");
    put("index.html", "<html>app</html>");
    put("main.js", "console.log(1)");
    put("assets/logo.svg", "<svg/>");
  }
  ~fixture() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  void put(const std::string& name, const std::string& text) {
    std::ofstream{dir / name} << text;
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(asset_dir_tests, fixture)

CAF_TEST(files are served by path with their types and the app routes get index html) {
  std::string err;
  auto a = asset_dir::load(dir.string(), err);
  CAF_REQUIRE(a != nullptr);
  CAF_CHECK_EQUAL(a->size(), 3u);
  auto* js = a->find("/main.js");
  CAF_REQUIRE(js != nullptr);
  CAF_CHECK_EQUAL(js->content_type, "text/javascript; charset=utf-8");
  CAF_CHECK_EQUAL(js->body, "console.log(1)");
  CAF_CHECK(js->etag.front() == '"' && js->etag.back() == '"');
  auto* svg = a->find("/assets/logo.svg");
  CAF_REQUIRE(svg != nullptr);
  CAF_CHECK_EQUAL(svg->content_type, "image/svg+xml");
  for (auto route : {"/", "/flows/echo", "/traces"}) {
    auto* f = a->find(route);
    CAF_REQUIRE(f != nullptr);
    CAF_CHECK_EQUAL(f->body, "<html>app</html>");
  }
  CAF_CHECK(a->find("/missing.js") == nullptr);
  // Nothing outside the folder: such a path is one of the app's routes at most.
  auto* outside = a->find("/../../etc/passwd");
  CAF_REQUIRE(outside != nullptr);
  CAF_CHECK_EQUAL(outside->body, "<html>app</html>");
  CAF_CHECK(a->find("/../../etc/hostname.txt") == nullptr);
}

CAF_TEST(what changes on disk later is not served and symlinks are not followed) {
  fs::create_symlink("/etc/hostname", dir / "host.txt");
  std::string err;
  auto a = asset_dir::load(dir.string(), err);
  CAF_REQUIRE(a != nullptr);
  CAF_CHECK(a->find("/host.txt") == nullptr);
  put("later.js", "x");
  CAF_CHECK(a->find("/later.js") == nullptr);
}

CAF_TEST(a folder without index html or over its caps is refused with the reason) {
  std::string err;
  CAF_CHECK(asset_dir::load((dir / "assets").string(), err) == nullptr);
  CAF_CHECK(err.find("no index.html") != std::string::npos);
  CAF_CHECK(asset_dir::load(dir.string(), err, 2) == nullptr);
  CAF_CHECK(err.find("more than 2 files") != std::string::npos);
  CAF_CHECK(asset_dir::load(dir.string(), err, 100, 10) == nullptr);
  CAF_CHECK(err.find("MiB") != std::string::npos);
  CAF_CHECK(asset_dir::load((dir / "nope").string(), err) == nullptr);
  CAF_CHECK(err.find("not a folder") != std::string::npos);
}

CAF_TEST_FIXTURE_SCOPE_END()
