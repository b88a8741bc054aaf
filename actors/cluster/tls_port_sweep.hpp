#pragma once

#include <caf/fwd.hpp>
#include <caf/timespan.hpp>

#include <cstdint>

namespace actor_host {

/// With mTLS the connections on the cluster port are caf-openssl's, which
/// the multiplexer guard (cluster_port_guard.hpp) does not see, and
/// caf-openssl 0.17 has no handshake timeout: a peer that connects and never
/// completes a TLS handshake would keep its connection for ever. Called on
/// every beat of the cluster node: a connection accepted on `port` that has
/// received less than a TLS handshake (512 bytes) after `max_wait` is shut
/// down (both ways; CAF then sees the end and cleans up), with a warning and
/// actor_host_cluster_non_caf_peers_total. Linux only (/proc/self/fd, TCP_INFO).
void drop_silent_tls_peers(std::uint16_t port, caf::timespan max_wait);

/// Runs drop_silent_tls_peers every `max_wait / 2` on a detached actor (a
/// scan is a few syscalls per open file descriptor: not on the scheduler's
/// threads), linked to `owner`, the cluster node.
void spawn_tls_port_sweeper(caf::local_actor* owner, std::uint16_t port, caf::timespan max_wait);

} // namespace actor_host
