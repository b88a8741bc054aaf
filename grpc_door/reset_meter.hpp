#pragma once

// No gRPC headers here: the unit tests drive this with their own clock.

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace actor_host::grpc_door {

/// Which connections reset calls faster than they let them finish (HTTP/2
/// rapid reset, CVE-2023-44487). gRPC 1.51 builds a call for every stream a
/// client opens, also one it resets at once, and keeps no count of its own:
/// one connection sending HEADERS, DATA, RST_STREAM in a loop grew the
/// manager by gigabytes. Per connection a score goes up by one for each call
/// its client cancelled before it was answered, down by one for each call
/// that finished, and leaks away at `allowance_per_second`; past `burst` the
/// connection is to be closed. Calls that end at their own deadline are
/// neither. One thread (the door's) uses it.
class reset_meter {
public:
  using clock = std::chrono::steady_clock;

  struct limits {
    /// Score at which a connection is closed; 0 = never.
    std::size_t burst = 200;
    /// Resets a connection may make per second for ever.
    double allowance_per_second = 100;
  };

  explicit reset_meter(limits l) : limits_(l) {
  }

  /// A call of `connection` was cancelled by its client. True once, when
  /// the connection's score passed the burst: close it now. A name with no
  /// port is not scored: gRPC names the peer of some calls torn down with
  /// their stream "unknown", and those of every connection would add up
  /// under that one name (and could not be closed by it anyway).
  bool reset(std::string_view connection, clock::time_point now);
  /// A call of `connection` finished (not cancelled).
  void finished(std::string_view connection, clock::time_point now);
  /// Forgets the connections whose score has leaked back to zero (a map
  /// entry lives only while its connection resets).
  void sweep(clock::time_point now);

  std::size_t tracked() const {
    return entries_.size();
  }

  /// Connections tracked at most: past it a new one is not (the table
  /// cannot grow with an attacker's connections, which the listener's fd
  /// limit caps well below this anyway).
  static constexpr std::size_t max_tracked = 65536;

private:
  struct entry {
    double score = 0;
    clock::time_point at;
    bool closed = false; // told once; the rest of its calls die with it
  };
  void leak(entry& e, clock::time_point now) const;

  struct name_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const {
      return std::hash<std::string_view>{}(s);
    }
  };
  limits limits_;
  std::unordered_map<std::string, entry, name_hash, std::equal_to<>> entries_;
};

} // namespace actor_host::grpc_door
