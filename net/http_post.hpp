#pragma once

#include <chrono>
#include <functional>
#include <string>

namespace actor_host::net {

class io_runtime;

/// What became of one POST: the HTTP status (0 when none arrived) and, when
/// it failed before a status, why.
struct post_outcome {
  int status = 0;
  std::string error;
};

/// POSTs `body` to an http:// URL on the I/O threads and calls `done` there
/// with the outcome; the answer's body is read (up to 64 KiB) and dropped.
/// The whole exchange, resolve to last byte, has `timeout`. For exporters
/// (spans to a telemetry server): nothing waits on it, nothing retries.
void http_post(io_runtime& io, const std::string& url, std::string body,
               std::string content_type, std::chrono::milliseconds timeout,
               std::function<void(post_outcome)> done);

} // namespace actor_host::net
