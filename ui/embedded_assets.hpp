#pragma once

#include <string_view>

/// The dashboard's files (ui/assets/), compiled into the binary by
/// cmake/embed_assets.cmake: nothing to install, no Node at run time.
namespace actor_host::ui {

struct asset {
  std::string_view path;         // "/ui/app.js"
  std::string_view content_type; // with charset for text
  std::string_view body;
  std::string_view etag;         // quoted, from the content's SHA-256
};

/// The asset served at `path` ("/ui/<file>"), or null.
const asset* find_asset(std::string_view path);

} // namespace actor_host::ui
