#include "net/socket_shutdown.hpp"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace actor_host::net {

namespace {

struct endpoint {
  sockaddr_storage addr{};
  socklen_t len = 0;
};

bool make_endpoint(const std::string& ip, std::uint16_t port, endpoint& out) {
  auto* v4 = reinterpret_cast<sockaddr_in*>(&out.addr);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&out.addr);
  if (inet_pton(AF_INET, ip.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    out.len = sizeof(sockaddr_in);
    return true;
  }
  if (inet_pton(AF_INET6, ip.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    out.len = sizeof(sockaddr_in6);
    return true;
  }
  return false;
}

/// Address and port equal (an IPv4 peer of a dual-stack listener shows as
/// ::ffff:a.b.c.d).
bool same_endpoint(const sockaddr_storage& a, const endpoint& want) {
  const auto& w = want.addr;
  if (a.ss_family == AF_INET && w.ss_family == AF_INET) {
    const auto& x = reinterpret_cast<const sockaddr_in&>(a);
    const auto& y = reinterpret_cast<const sockaddr_in&>(w);
    return x.sin_port == y.sin_port && x.sin_addr.s_addr == y.sin_addr.s_addr;
  }
  if (a.ss_family == AF_INET6 && w.ss_family == AF_INET6) {
    const auto& x = reinterpret_cast<const sockaddr_in6&>(a);
    const auto& y = reinterpret_cast<const sockaddr_in6&>(w);
    return x.sin6_port == y.sin6_port
           && std::memcmp(&x.sin6_addr, &y.sin6_addr, sizeof(in6_addr)) == 0;
  }
  if (a.ss_family == AF_INET6 && w.ss_family == AF_INET) {
    const auto& x = reinterpret_cast<const sockaddr_in6&>(a);
    const auto& y = reinterpret_cast<const sockaddr_in&>(w);
    static constexpr unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return x.sin6_port == y.sin_port && std::memcmp(x.sin6_addr.s6_addr, mapped, 12) == 0
           && std::memcmp(x.sin6_addr.s6_addr + 12, &y.sin_addr, 4) == 0;
  }
  return false;
}

std::uint16_t local_port_of(int fd) {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    return 0;
  if (a.ss_family == AF_INET)
    return ntohs(reinterpret_cast<const sockaddr_in&>(a).sin_port);
  if (a.ss_family == AF_INET6)
    return ntohs(reinterpret_cast<const sockaddr_in6&>(a).sin6_port);
  return 0;
}

bool connected_to(int fd, const endpoint& peer, std::uint16_t local_port) {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    return false; // not a socket, or not a connected one
  return same_endpoint(a, peer) && local_port_of(fd) == local_port;
}

} // namespace

bool shutdown_connection(const std::string& peer_ip, std::uint16_t peer_port,
                         std::uint16_t local_port) {
  endpoint peer;
  if (!make_endpoint(peer_ip, peer_port, peer))
    return false;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr)
    return false;
  bool done = false;
  while (auto* ent = readdir(dir)) {
    char* end = nullptr;
    long n = std::strtol(ent->d_name, &end, 10);
    if (end == ent->d_name || *end != '\0' || n == dirfd(dir))
      continue;
    if (!connected_to(static_cast<int>(n), peer, local_port))
      continue;
    // The number may have been closed and reused since it was looked at:
    // a duplicate holds the socket it names now, which is checked again
    // before it is shut down.
    int dup_fd = fcntl(static_cast<int>(n), F_DUPFD_CLOEXEC, 0);
    if (dup_fd < 0)
      continue;
    if (connected_to(dup_fd, peer, local_port)) {
      ::shutdown(dup_fd, SHUT_RDWR);
      done = true;
    }
    ::close(dup_fd);
    if (done)
      break;
  }
  closedir(dir);
  return done;
}

} // namespace actor_host::net
