#pragma once

#include <caf/all.hpp>

// The message vocabulary of actor-host's actors. Atoms are at most 10
// characters and have no namespaces in CAF 0.17, hence the short names.
CAF_BEGIN_TYPE_ID_BLOCK(actor_host, caf::first_custom_type_id)

// socket -> actor
CAF_ADD_ATOM(actor_host, actor_host::atoms, frame_atom, "frame")
CAF_ADD_ATOM(actor_host, actor_host::atoms, closed_atom, "closed")

// caller <-> directory
CAF_ADD_ATOM(actor_host, actor_host::atoms, register_atom, "register")
CAF_ADD_ATOM(actor_host, actor_host::atoms, deregister_atom, "deregister")
CAF_ADD_ATOM(actor_host, actor_host::atoms, route_atom, "route")
CAF_ADD_ATOM(actor_host, actor_host::atoms, list_atom, "list")
CAF_ADD_ATOM(actor_host, actor_host::atoms, bidi_open_atom, "bidiopen")
CAF_ADD_ATOM(actor_host, actor_host::atoms, bidi_close_atom, "bidiclose")
CAF_ADD_ATOM(actor_host, actor_host::atoms, bidi_find_atom, "bidifind")

// caller -> connection -> pending request -> caller
CAF_ADD_ATOM(actor_host, actor_host::atoms, call_atom, "call")
CAF_ADD_ATOM(actor_host, actor_host::atoms, accepted_atom, "accepted")
CAF_ADD_ATOM(actor_host, actor_host::atoms, trace_atom, "trace")
CAF_ADD_ATOM(actor_host, actor_host::atoms, chunk_atom, "chunk")
CAF_ADD_ATOM(actor_host, actor_host::atoms, done_atom, "done")
CAF_ADD_ATOM(actor_host, actor_host::atoms, response_atom, "response")
CAF_ADD_ATOM(actor_host, actor_host::atoms, input_atom, "input")
CAF_ADD_ATOM(actor_host, actor_host::atoms, end_input_atom, "endinput")
CAF_ADD_ATOM(actor_host, actor_host::atoms, abort_atom, "abort")
CAF_ADD_ATOM(actor_host, actor_host::atoms, forget_atom, "forget")
CAF_ADD_ATOM(actor_host, actor_host::atoms, conn_lost_atom, "connlost")
CAF_ADD_ATOM(actor_host, actor_host::atoms, expired_atom, "expired")

// runtime role
CAF_ADD_ATOM(actor_host, actor_host::atoms, connected_atom, "connected")
CAF_ADD_ATOM(actor_host, actor_host::atoms, connect_failed_atom, "connfail")
CAF_ADD_ATOM(actor_host, actor_host::atoms, reconnect_atom, "reconnect")
CAF_ADD_ATOM(actor_host, actor_host::atoms, cancel_atom, "cancel")
CAF_ADD_ATOM(actor_host, actor_host::atoms, result_atom, "result")
CAF_ADD_ATOM(actor_host, actor_host::atoms, input_error_atom, "inputerr")

// supervision
CAF_ADD_ATOM(actor_host, actor_host::atoms, adopt_atom, "adopt")
CAF_ADD_ATOM(actor_host, actor_host::atoms, shutdown_atom, "shutdown")
CAF_ADD_ATOM(actor_host, actor_host::atoms, directory_atom, "directory")

// child runtimes and drain
CAF_ADD_ATOM(actor_host, actor_host::atoms, start_atom, "start")
CAF_ADD_ATOM(actor_host, actor_host::atoms, exited_atom, "exited")
CAF_ADD_ATOM(actor_host, actor_host::atoms, watch_atom, "watch")
CAF_ADD_ATOM(actor_host, actor_host::atoms, ready_atom, "ready")
CAF_ADD_ATOM(actor_host, actor_host::atoms, unready_atom, "unready")
CAF_ADD_ATOM(actor_host, actor_host::atoms, kill_atom, "kill")
CAF_ADD_ATOM(actor_host, actor_host::atoms, stop_atom, "stop")
CAF_ADD_ATOM(actor_host, actor_host::atoms, drain_atom, "drain")
CAF_ADD_ATOM(actor_host, actor_host::atoms, idle_atom, "idle")

// iii workers: connections <-> function registry <-> invocations, triggers
CAF_ADD_ATOM(actor_host, actor_host::atoms, iii_atom, "iii")
CAF_ADD_ATOM(actor_host, actor_host::atoms, invoke_atom, "invoke")
CAF_ADD_ATOM(actor_host, actor_host::atoms, worker_atom, "worker")
CAF_ADD_ATOM(actor_host, actor_host::atoms, reattach_atom, "reattach")
CAF_ADD_ATOM(actor_host, actor_host::atoms, fn_add_atom, "fnadd")
CAF_ADD_ATOM(actor_host, actor_host::atoms, fn_remove_atom, "fnremove")
CAF_ADD_ATOM(actor_host, actor_host::atoms, type_add_atom, "typeadd")
CAF_ADD_ATOM(actor_host, actor_host::atoms, bind_atom, "bind")
CAF_ADD_ATOM(actor_host, actor_host::atoms, unbind_atom, "unbind")
CAF_ADD_ATOM(actor_host, actor_host::atoms, bind_result_atom, "bindresult")
CAF_ADD_ATOM(actor_host, actor_host::atoms, provider_atom, "provider")
CAF_ADD_ATOM(actor_host, actor_host::atoms, park_atom, "park")
CAF_ADD_ATOM(actor_host, actor_host::atoms, flush_atom, "flush")

// iii streaming channels: a socket for one end -> channel
CAF_ADD_ATOM(actor_host, actor_host::atoms, attach_atom, "attach")

CAF_END_TYPE_ID_BLOCK(actor_host)

namespace actor_host {
using namespace atoms;
} // namespace actor_host

#include "net/transport.hpp"

// Sockets cross actor boundaries only inside one process.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(actor_host::net::transport_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<caf::actor>)
