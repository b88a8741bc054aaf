#pragma once

#include <cstdint>
#include <string>

namespace actor_host::net {

/// Shuts down (both directions) the TCP socket of this process that is
/// connected to `peer_ip`:`peer_port` on local port `local_port`, for a
/// listener whose sockets a library owns and gives no handle to close (the
/// gRPC door's). Its owner then reads end-of-file, fails its writes and
/// closes the descriptor itself; this one is never closed here. False when
/// no such socket is open (it ended meanwhile). Costs a system call per
/// open descriptor: for rare cases such as an abusive peer.
bool shutdown_connection(const std::string& peer_ip, std::uint16_t peer_port,
                         std::uint16_t local_port);

} // namespace actor_host::net
