#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

namespace actor_host::ui {

/// A web app's files read from a folder once, at start (`--ui-assets DIR`,
/// e.g. the Genkit Dev UI build the Genkit CLI unpacks into
/// ~/.genkit/assets/<version>/ui/browser): only what was there then is
/// served, from memory, so no request reaches the disk or another path.
class asset_dir {
public:
  struct file {
    std::string content_type;
    std::string body;
    std::string etag; // quoted
  };

  /// Reads every regular file under `dir` (symlinks are not followed).
  /// Fails (null, `error` says why) on an unreadable folder, one without
  /// index.html, more than `max_files` files or `max_bytes` in all.
  static std::shared_ptr<const asset_dir> load(const std::string& dir, std::string& error,
                                               std::size_t max_files = 4096,
                                               std::size_t max_bytes = 64u << 20);

  /// The file at URL path `path` ("/main.js"); "/" and paths that name no
  /// file and no extension (the app's own routes) get index.html, as the
  /// Genkit tools server answers them. Null when nothing fits.
  const file* find(std::string_view path) const;

  std::size_t size() const {
    return files_.size();
  }

private:
  std::unordered_map<std::string, file> files_; // by URL path
};

/// The content type of a file name, by its extension ("application/octet-stream"
/// when unknown).
std::string_view content_type_for(std::string_view name);

} // namespace actor_host::ui
