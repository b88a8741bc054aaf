#include "actors/call/stream_sink.hpp"

#include <utility>

namespace actor_host {

void stream_sink::trace(const std::string& id) {
  std::lock_guard<std::mutex> g{mtx_};
  if (closed_ || traced_)
    return;
  traced_ = true;
  write_trace(id, !std::exchange(started_, true));
}

void stream_sink::chunk(std::string chunk) {
  std::lock_guard<std::mutex> g{mtx_};
  if (closed_)
    return;
  write_chunk(std::move(chunk), !std::exchange(started_, true));
}

bool stream_sink::close() {
  std::lock_guard<std::mutex> g{mtx_};
  closed_ = true;
  return started_;
}

} // namespace actor_host
