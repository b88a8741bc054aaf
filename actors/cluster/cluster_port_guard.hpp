#pragma once

#include <caf/fwd.hpp>
#include <caf/timespan.hpp>

namespace actor_host {

/// Makes the middleman of `cfg` watch what arrives on the cluster port
/// (plain BASP): a peer whose first bytes are not a CAF client handshake
/// (garbage, another protocol, a scanner) is closed (CAF 0.17's BASP broker
/// would keep it open), and leaves a warning with its address and a count
/// in actor_host_cluster_non_caf_peers_total. CAF 0.17 has no hook for this:
/// the middleman's network backend is CAF's default multiplexer with one
/// change, the scribes of accepted connections look at the first header
/// before BASP does. Every BASP header, on accepted and dialed connections,
/// is read first too: a payload over the cap (64 KiB for a handshake, 64 MiB
/// otherwise) closes the connection before CAF sizes a buffer from it, with a
/// warning and actor_host_cluster_oversized_messages_total. With mTLS, caf-openssl makes its own scribes: a peer
/// without the handshake fails the TLS handshake instead (not counted).
/// Call instead of cfg.load<caf::io::middleman>().
void load_guarded_middleman(caf::actor_system_config& cfg);

/// Closes (with the same warning and counter) the connections on the
/// cluster port that have sent no whole first header for `max_wait`: CAF
/// has no handshake timeout. Thread-safe; a no-op without the guard.
void drop_silent_cluster_peers(caf::actor_system& sys, caf::timespan max_wait);

} // namespace actor_host
