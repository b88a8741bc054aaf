#include "actors/doors/http/caller_slots.hpp"

#include <spdlog/spdlog.h>

namespace actor_host {

bool caller_slots::acquire(const std::string& address) {
  std::lock_guard<std::mutex> g{mtx_};
  auto& e = in_flight_[address];
  if (cap_ > 0 && e.calls >= cap_) {
    if (!e.warned) {
      e.warned = true;
      spdlog::warn("HTTP caller {} has {} calls in flight (max_calls_per_caller); refusing "
                   "more with 429 until some finish",
                   address, e.calls);
    }
    return false;
  }
  e.warned = false;
  ++e.calls;
  return true;
}

void caller_slots::release(const std::string& address) {
  std::lock_guard<std::mutex> g{mtx_};
  auto i = in_flight_.find(address);
  if (i != in_flight_.end() && --i->second.calls == 0)
    in_flight_.erase(i);
}

std::string address_of(const std::string& peer) {
  auto colon = peer.rfind(':');
  return colon == std::string::npos ? peer : peer.substr(0, colon);
}

} // namespace actor_host
