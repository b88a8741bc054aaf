#pragma once

// Channels between nodes (docs/CLUSTER.md "Calls"): a channel lives at the
// node that created it (its id ends in `~<node>`); a socket for one of its
// ends may connect to any node. There the socket is served by an end actor
// whose link (through the two nodes' gateways, actors/cluster/gateway_iii.cpp)
// reaches the channel, which sees a remote_channel_end as that end's
// transport. Order holds (one path of ordered actors each way); the writer's
// socket pauses on its own node when the channel's buffer (frames) or byte
// cap is in flight or held there, and goes on with the credits the channel
// gives back as the reader takes frames. The loss of either node closes the
// other side with 1011 and a reason naming the node.

#include "actors/iii/channel.hpp"

#include <caf/fwd.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace actor_host {

/// This node joined a cluster: its channels' ids name it, and sockets for
/// another node's channel go through `gateway`. Process-wide, as the
/// channel table.
void set_channel_cluster(std::string node, caf::actor gateway);

/// `~<node>` in a cluster, else "".
std::string channel_id_suffix();

/// The node that holds channel `id` when it is another node of the cluster
/// this node is in, else "".
std::string remote_channel_node(std::string_view id);

/// The handler of a socket for an end of another node's channel (null when
/// `id` is not one): spawns its end actor, which opens the link.
net::frame_handler_ptr open_remote_channel_end(const net::transport_ptr& transport,
                                               const std::string& id, const std::string& key,
                                               bool writer);

/// At the channel's node: takes the end `writer` of channel `id` (with
/// `key`) for a socket at `node`, whose link is `tag` at `gateway`. The
/// channel with its buffer size (frames) and byte cap; false when there is
/// no such channel or that end is taken.
bool accept_remote_end(const caf::actor& gateway, std::uint64_t tag, const std::string& id,
                       const std::string& key, bool writer, const std::string& node,
                       caf::actor& channel, std::uint64_t& buffer, std::uint64_t& max_bytes);

} // namespace actor_host
