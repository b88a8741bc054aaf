#pragma once

// A runtime's `register` (runtime_connection.cpp's shared behavior hands the
// frame here): checked, put to the directory, answered.

#include "actors/dispatch/runtime_connection.hpp"
#include "wire/jsonrpc.hpp"

#include <string>

namespace actor_host::connection_detail {

using self_ptr = connection_actor::stateful_pointer<connection_state>;

/// A JSON-RPC error answer to the runtime's request `id`.
void reply_error(self_ptr self, const std::string& id, int code, const std::string& message);

/// The runtime's register request or notification: the directory decides
/// whether the id is this socket's; the answer names the telemetry server.
void on_register(self_ptr self, const wire::jsonrpc::message& m);

} // namespace actor_host::connection_detail
