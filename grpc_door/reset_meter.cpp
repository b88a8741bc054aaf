#include "grpc_door/reset_meter.hpp"

#include <algorithm>

namespace actor_host::grpc_door {

void reset_meter::leak(entry& e, clock::time_point now) const {
  auto seconds = std::chrono::duration<double>(now - e.at).count();
  if (seconds > 0)
    e.score = std::max(0.0, e.score - seconds * limits_.allowance_per_second);
  e.at = now;
}

namespace {

/// "ipv4:1.2.3.4:5", "ipv6:[::1]:5": ends in ':' and digits.
bool names_a_port(std::string_view connection) {
  auto colon = connection.rfind(':');
  if (colon == std::string_view::npos || colon + 1 == connection.size())
    return false;
  return std::all_of(connection.begin() + static_cast<std::ptrdiff_t>(colon) + 1,
                     connection.end(), [](char c) { return c >= '0' && c <= '9'; });
}

} // namespace

bool reset_meter::reset(std::string_view connection, clock::time_point now) {
  if (limits_.burst == 0 || !names_a_port(connection))
    return false;
  auto i = entries_.find(connection);
  if (i == entries_.end()) {
    if (entries_.size() >= max_tracked)
      return false;
    i = entries_.emplace(std::string{connection}, entry{0, now, false}).first;
  }
  auto& e = i->second;
  leak(e, now);
  e.score += 1;
  if (e.closed || e.score <= static_cast<double>(limits_.burst))
    return false;
  e.closed = true;
  return true;
}

void reset_meter::finished(std::string_view connection, clock::time_point now) {
  if (entries_.empty())
    return; // the common case: no connection has reset anything
  auto i = entries_.find(connection);
  if (i == entries_.end())
    return;
  leak(i->second, now);
  i->second.score = std::max(0.0, i->second.score - 1);
}

void reset_meter::sweep(clock::time_point now) {
  for (auto i = entries_.begin(); i != entries_.end();) {
    leak(i->second, now);
    // A closed connection's entry stays until its score is gone: the calls
    // gRPC had already built for it still end cancelled and must not be
    // taken for a new connection's.
    if (i->second.score <= 0)
      i = entries_.erase(i);
    else
      ++i;
  }
}

} // namespace actor_host::grpc_door
