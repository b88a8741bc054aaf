#pragma once

#include <string>
#include <string_view>

namespace actor_host::proc {

/// Writes `content` to `path` for its owner only (mode 0600), whole or not
/// at all: a new file next to it (O_EXCL, O_NOFOLLOW), fsync, rename over
/// `path`. Refuses a `path` that is a symbolic link or not a regular file, so
/// a link planted there cannot redirect the write. Returns why it failed, in
/// words a person can act on; empty on success.
std::string write_private_file(const std::string& path, std::string_view content);

} // namespace actor_host::proc
