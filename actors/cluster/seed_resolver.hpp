#pragma once

#include <caf/fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

// Where a cluster node's seeds and members are: "host:port" text, resolved
// off the actor threads (getaddrinfo blocks).
namespace actor_host {

/// Splits "host:port" ("[v6]:port" too); false unless the port is 1..65535.
bool split_address(const std::string& address, std::string& host, std::uint16_t& port);

/// Every address the seeds' names resolve to now, as "ip:port" ("[v6]:port");
/// a seed that does not resolve is kept as written (its dial reports why).
std::vector<std::string> resolve_seeds(const std::vector<std::string>& seeds);

/// A detached actor answering (resolve_atom, seeds) -> addresses, so that
/// getaddrinfo blocks its own thread only. Its owner links to it.
caf::actor spawn_seed_resolver(caf::local_actor* owner);

} // namespace actor_host
