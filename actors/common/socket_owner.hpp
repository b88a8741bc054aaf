#pragma once

#include "actors/common/messages.hpp"

#include <caf/typed_actor.hpp>

#include <string>

namespace actor_host {

/// An actor that owns a WebSocket: what the socket reads, in order, then its
/// end (frame_bridge.hpp is the only sender).
using socket_owner_actor = caf::typed_actor<caf::reacts_to<frame_atom, std::string>,
                                            caf::reacts_to<closed_atom, std::string>>;

} // namespace actor_host
