#include "actors/cluster/seed_resolver.hpp"

#include "actors/common/messages.hpp"

#include <caf/all.hpp>

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>

namespace actor_host {

bool split_address(const std::string& a, std::string& host, std::uint16_t& port) {
  auto colon = a.rfind(':');
  if (colon == std::string::npos || colon == 0)
    return false;
  unsigned long p = 0;
  auto digits = a.substr(colon + 1);
  if (digits.empty() || digits.size() > 5
      || !std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(c); }))
    return false;
  p = std::stoul(digits);
  if (p == 0 || p > 65535)
    return false;
  host = a.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  port = static_cast<std::uint16_t>(p);
  return true;
}

std::vector<std::string> resolve_seeds(const std::vector<std::string>& seeds) {
  std::vector<std::string> out;
  for (auto& s : seeds) {
    std::string host;
    std::uint16_t port = 0;
    if (!split_address(s, host, port))
      continue;
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    if (::getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 || res == nullptr) {
      out.push_back(s); // let the dial report it
      continue;
    }
    for (auto* p = res; p != nullptr; p = p->ai_next) {
      char buf[INET6_ADDRSTRLEN] = {};
      const void* addr = p->ai_family == AF_INET
                           ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(p->ai_addr)->sin_addr)
                           : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(p->ai_addr)->sin6_addr);
      if (::inet_ntop(p->ai_family, addr, buf, sizeof buf) == nullptr)
        continue;
      std::string a = p->ai_family == AF_INET6 ? "[" + std::string{buf} + "]" : std::string{buf};
      a += ":" + std::to_string(port);
      if (std::find(out.begin(), out.end(), a) == out.end())
        out.push_back(std::move(a));
    }
    ::freeaddrinfo(res);
  }
  return out;
}

namespace {

caf::behavior resolver_actor(caf::event_based_actor*) {
  return {
    [](resolve_atom, const std::vector<std::string>& seeds) { return resolve_seeds(seeds); },
  };
}

} // namespace

caf::actor spawn_seed_resolver(caf::local_actor* owner) {
  auto r = owner->spawn<caf::detached>(resolver_actor);
  owner->link_to(r);
  return r;
}

} // namespace actor_host
