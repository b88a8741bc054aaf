#include "actors/cluster/tls_port_sweep.hpp"

#include "actors/common/messages.hpp"
#include "obs/metrics.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <arpa/inet.h>
#include <linux/tcp.h> // tcpi_bytes_received (glibc's netinet/tcp.h lacks it)
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>

namespace actor_host {

namespace {

using clock_type = std::chrono::steady_clock;

// Less than this received: no TLS handshake (a ClientHello with a client
// certificate is well over it; a node's link adds BASP's handshake and
// heartbeats).
constexpr std::uint64_t min_handshake_bytes = 512;

struct seen_socket {
  clock_type::time_point since;
  bool dropped = false;
};

std::mutex seen_mtx;
std::map<ino_t, seen_socket> seen; // accepted cluster connections, by socket inode

std::uint16_t port_of(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET)
    return ntohs(reinterpret_cast<const sockaddr_in&>(a).sin_port);
  if (a.ss_family == AF_INET6)
    return ntohs(reinterpret_cast<const sockaddr_in6&>(a).sin6_port);
  return 0;
}

std::string address_of(const sockaddr_storage& a) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (a.ss_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(a).sin_addr, buf, sizeof buf);
  else if (a.ss_family == AF_INET6)
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(a).sin6_addr, buf, sizeof buf);
  return buf;
}

} // namespace

void drop_silent_tls_peers(std::uint16_t port, caf::timespan max_wait) {
  if (port == 0)
    return;
  std::lock_guard guard{seen_mtx};
  auto now = clock_type::now();
  std::map<ino_t, seen_socket> still;
  std::error_code ec;
  for (auto& entry : std::filesystem::directory_iterator{"/proc/self/fd", ec}) {
    char* end = nullptr;
    auto fd = static_cast<int>(std::strtol(entry.path().filename().c_str(), &end, 10));
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode))
      continue;
    sockaddr_storage local{}, peer{};
    socklen_t len = sizeof local;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) != 0 || port_of(local) != port)
      continue;
    int listening = 0;
    len = sizeof listening;
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || listening)
      continue;
    // An accepted connection on the cluster port (this node's own dials have
    // ephemeral local ports).
    auto [i, fresh] = seen.try_emplace(st.st_ino, seen_socket{now});
    auto& s = i->second;
    if (!s.dropped && now - s.since > max_wait) {
      tcp_info info{};
      len = sizeof info;
      if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) == 0
          && info.tcpi_bytes_received < min_handshake_bytes) {
        s.dropped = true;
        len = sizeof peer;
        getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len);
        obs::global().cluster_non_caf_peers.fetch_add(1, std::memory_order_relaxed);
        spdlog::warn("cluster: {}:{} sent no TLS handshake in time ({} bytes); dropped (not a "
                     "cluster node: only nodes with a certificate of the cluster CA pass the "
                     "cluster port)",
                     address_of(peer), port_of(peer), info.tcpi_bytes_received);
        // Not close(): the socket stays caf-openssl's, which sees the end.
        shutdown(fd, SHUT_RDWR);
      }
    }
    still.insert(*i);
  }
  seen = std::move(still);
}

void spawn_tls_port_sweeper(caf::local_actor* owner, std::uint16_t port, caf::timespan max_wait) {
  auto sweeper = owner->spawn<caf::detached>([port, max_wait](caf::event_based_actor* self) {
    self->send(self, beat_atom_v);
    return caf::behavior{
      [self, port, max_wait](beat_atom) {
        drop_silent_tls_peers(port, max_wait);
        self->delayed_send(self, max_wait / 2, beat_atom_v);
      },
    };
  });
  owner->link_to(sweeper);
}

} // namespace actor_host
