#include "ui/asset_dir.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>

namespace actor_host::ui {

namespace fs = std::filesystem;

std::string_view content_type_for(std::string_view name) {
  static const std::pair<std::string_view, std::string_view> types[] = {
    {".html", "text/html; charset=utf-8"},
    {".js", "text/javascript; charset=utf-8"},
    {".mjs", "text/javascript; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},
    {".json", "application/json"},
    {".map", "application/json"},
    {".txt", "text/plain; charset=utf-8"},
    {".svg", "image/svg+xml"},
    {".png", "image/png"},
    {".jpg", "image/jpeg"},
    {".jpeg", "image/jpeg"},
    {".gif", "image/gif"},
    {".webp", "image/webp"},
    {".ico", "image/x-icon"},
    {".woff", "font/woff"},
    {".woff2", "font/woff2"},
    {".ttf", "font/ttf"},
    {".wasm", "application/wasm"},
  };
  for (auto& [ext, type] : types)
    if (name.ends_with(ext))
      return type;
  return "application/octet-stream";
}

std::shared_ptr<const asset_dir> asset_dir::load(const std::string& dir, std::string& error,
                                                 std::size_t max_files, std::size_t max_bytes) {
  auto out = std::make_shared<asset_dir>();
  std::error_code ec;
  auto root = fs::path{dir};
  if (!fs::is_directory(root, ec)) {
    error = "'" + dir + "' is not a folder";
    return nullptr;
  }
  std::size_t total = 0;
  fs::recursive_directory_iterator it{root, fs::directory_options::none, ec};
  for (; !ec && it != fs::recursive_directory_iterator{}; it.increment(ec)) {
    std::error_code sec;
    if (it->is_symlink(sec) || !it->is_regular_file(sec))
      continue;
    if (out->files_.size() == max_files) {
      error = "'" + dir + "' holds more than " + std::to_string(max_files) + " files";
      return nullptr;
    }
    auto size = it->file_size(sec);
    if (sec || total + size > max_bytes) {
      error = "'" + dir + "' holds more than " + std::to_string(max_bytes >> 20) + " MiB";
      return nullptr;
    }
    total += size;
    std::ifstream in{it->path(), std::ios::binary};
    std::string body{std::istreambuf_iterator<char>{in}, {}};
    if (!in.good() && !in.eof()) {
      error = "cannot read '" + it->path().string() + "'";
      return nullptr;
    }
    auto url = "/" + fs::relative(it->path(), root, sec).generic_string();
    char etag[32];
    std::snprintf(etag, sizeof etag, "\"%zx-%zx\"", std::hash<std::string>{}(body), body.size());
    file f{std::string{content_type_for(url)}, std::move(body), etag};
    out->files_.emplace(std::move(url), std::move(f));
  }
  if (ec) {
    error = "cannot read '" + dir + "': " + ec.message();
    return nullptr;
  }
  if (!out->files_.count("/index.html")) {
    error = "'" + dir + "' has no index.html";
    return nullptr;
  }
  return out;
}

const asset_dir::file* asset_dir::find(std::string_view path) const {
  if (auto i = files_.find(std::string{path}); i != files_.end())
    return &i->second;
  // The app's own routes (/flows/x, /traces) are its index.html; a missing
  // file (/main.abc.js) is a 404, not a page.
  auto last = path.substr(path.rfind('/') + 1);
  if (last.find('.') != std::string_view::npos)
    return nullptr;
  return &files_.at("/index.html");
}

} // namespace actor_host::ui
