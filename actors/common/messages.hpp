#pragma once

#include <caf/all.hpp>

// The message vocabulary of actor-host's actors: each atom has one message
// shape, written next to it (receiver in brackets; "->" is the answer of a
// request). Atoms are at most 10 characters and have no namespaces in
// CAF 0.17, hence the short names.
CAF_BEGIN_TYPE_ID_BLOCK(actor_host, caf::first_custom_type_id)

// socket -> its actor
// (frame_atom, text)                            a text frame read
CAF_ADD_ATOM(actor_host, actor_host::atoms, frame_atom, "frame")
// (closed_atom, reason)                         the socket closed
CAF_ADD_ATOM(actor_host, actor_host::atoms, closed_atom, "closed")

// runtime directory [runtime_directory]
// (register_atom, id, info_json, conn) -> ...   a runtime registers
CAF_ADD_ATOM(actor_host, actor_host::atoms, register_atom, "register")
// (deregister_atom, id, conn)                   its connection ended
CAF_ADD_ATOM(actor_host, actor_host::atoms, deregister_atom, "deregister")
// (route_iii_atom, function_id) -> (conn, id, node) or a call_refusal   [function_registry]
CAF_ADD_ATOM(actor_host, actor_host::atoms, route_iii_atom, "routeiii")
// (list_atom) -> listActions JSON of every runtime
CAF_ADD_ATOM(actor_host, actor_host::atoms, list_atom, "list")
// (list_iii_atom) -> listActions JSON of the iii functions   [function_registry]
CAF_ADD_ATOM(actor_host, actor_host::atoms, list_iii_atom, "listiii")
// (watch_atom, runtime_id, watcher)             readiness of one id
CAF_ADD_ATOM(actor_host, actor_host::atoms, watch_atom, "watch")
// (ready_atom, runtime_id), (unready_atom, runtime_id)   [watcher]
CAF_ADD_ATOM(actor_host, actor_host::atoms, ready_atom, "ready")
CAF_ADD_ATOM(actor_host, actor_host::atoms, unready_atom, "unready")
// (bidi_open_atom, trace, pending), (bidi_close_atom, trace),
// (bidi_find_atom, trace) -> (found, pending)   bidi runs by trace id
CAF_ADD_ATOM(actor_host, actor_host::atoms, bidi_open_atom, "bidiopen")
CAF_ADD_ATOM(actor_host, actor_host::atoms, bidi_close_atom, "bidiclose")
CAF_ADD_ATOM(actor_host, actor_host::atoms, bidi_find_atom, "bidifind")

// caller -> connection -> pending request -> caller
// (call_atom, call_request, caller) -> call     [connection] (actors/call/interfaces.hpp)
CAF_ADD_ATOM(actor_host, actor_host::atoms, call_atom, "call")
// (trace_atom, tag, trace_id)                   [caller] the run's trace id
CAF_ADD_ATOM(actor_host, actor_host::atoms, trace_atom, "trace")
// (chunk_atom, tag, raw)                        [caller] a streamed chunk
CAF_ADD_ATOM(actor_host, actor_host::atoms, chunk_atom, "chunk")
// (done_atom, tag, call_end)                     [caller] the result or the error (call_end.hpp)
CAF_ADD_ATOM(actor_host, actor_host::atoms, done_atom, "done")
// (run_trace_atom, trace_id), (run_chunk_atom, raw)   [pending_request, from its
// connection; active_action, from its handler thread]
CAF_ADD_ATOM(actor_host, actor_host::atoms, run_trace_atom, "runtrace")
CAF_ADD_ATOM(actor_host, actor_host::atoms, run_chunk_atom, "runchunk")
// (response_atom, ok, raw)                      [pending_request, invocation] the answer
// (response_atom, call_error)                   [pending_request] an answer that failed here
CAF_ADD_ATOM(actor_host, actor_host::atoms, response_atom, "response")
// (input_atom, id, raw), (end_input_atom, id)  [call_actor] bidi input for a run, by the
//                                               call id its hand-off answered (call_handle)
// (input_atom, raw), (end_input_atom)           [bidi_session] the same, in the runtime role
CAF_ADD_ATOM(actor_host, actor_host::atoms, input_atom, "input")
CAF_ADD_ATOM(actor_host, actor_host::atoms, end_input_atom, "endinput")
// (abort_atom, id)                              [call_actor] caller gone
CAF_ADD_ATOM(actor_host, actor_host::atoms, abort_atom, "abort")
// (forget_atom, wire_id, trace_id, cancel)      [runtime_connection] a call ended early
CAF_ADD_ATOM(actor_host, actor_host::atoms, forget_atom, "forget")
// (forget_inv_atom, invocation_id)              [worker_connection] the same for iii
CAF_ADD_ATOM(actor_host, actor_host::atoms, forget_inv_atom, "forgetinv")
// (conn_lost_atom, reason)                      [pending_request, invocation]
CAF_ADD_ATOM(actor_host, actor_host::atoms, conn_lost_atom, "connlost")
// (expired_atom)                                a deadline of the receiver passed
CAF_ADD_ATOM(actor_host, actor_host::atoms, expired_atom, "expired")
// (probe_atom) -> bool                          [runtime_connection] answers a ping?
CAF_ADD_ATOM(actor_host, actor_host::atoms, probe_atom, "probe")
// (pong_atom, bool)                             [runtime_connection] the ping was answered
CAF_ADD_ATOM(actor_host, actor_host::atoms, pong_atom, "pong")

// runtime role
// (connected_atom, transport), (connect_failed_atom, reason), (reconnect_atom)   [manager_link]
CAF_ADD_ATOM(actor_host, actor_host::atoms, connected_atom, "connected")
CAF_ADD_ATOM(actor_host, actor_host::atoms, connect_failed_atom, "connfail")
CAF_ADD_ATOM(actor_host, actor_host::atoms, reconnect_atom, "reconnect")
// (cancel_atom)                                 cancel the receiver's run(s)
CAF_ADD_ATOM(actor_host, actor_host::atoms, cancel_atom, "cancel")
// (result_atom, ok, raw)                        [active_action] the handler's outcome
CAF_ADD_ATOM(actor_host, actor_host::atoms, result_atom, "result")
// (input_error_atom, message)                   [active_action] bad bidi input
CAF_ADD_ATOM(actor_host, actor_host::atoms, input_error_atom, "inputerr")
// (action_trace_atom, request_id, trace_id), (action_chunk_atom, request_id, raw),
// (action_done_atom, request_id, ok, raw)       [manager_link] from an active_action
CAF_ADD_ATOM(actor_host, actor_host::atoms, action_trace_atom, "acttrace")
CAF_ADD_ATOM(actor_host, actor_host::atoms, action_chunk_atom, "actchunk")
CAF_ADD_ATOM(actor_host, actor_host::atoms, action_done_atom, "actdone")

// supervision
// (adopt_atom, child)                           [supervisor]
CAF_ADD_ATOM(actor_host, actor_host::atoms, adopt_atom, "adopt")
// (shutdown_atom) -> ok                         [supervisor, manager_link]
CAF_ADD_ATOM(actor_host, actor_host::atoms, shutdown_atom, "shutdown")
// (serving_atom, directory, service_ids, services)   [manager_supervisor] listening;
// these runtime ids must register; these child_runtime actors are the services
CAF_ADD_ATOM(actor_host, actor_host::atoms, serving_atom, "serving")
// (readiness_atom) -> string                    [manager_supervisor] "" = ready, else why not
CAF_ADD_ATOM(actor_host, actor_host::atoms, readiness_atom, "readiness")

// child runtimes and drain [child_runtime]
// (start_atom, generation), (kill_atom, generation), (exited_atom, generation, status),
// (ready_timeout_atom, generation)
CAF_ADD_ATOM(actor_host, actor_host::atoms, start_atom, "start")
CAF_ADD_ATOM(actor_host, actor_host::atoms, exited_atom, "exited")
CAF_ADD_ATOM(actor_host, actor_host::atoms, kill_atom, "kill")
CAF_ADD_ATOM(actor_host, actor_host::atoms, ready_timeout_atom, "readytime")
// (stop_atom, signal) -> ok                     [child_runtime; manager_supervisor: drain,
//                                               then stop the services with signal]
CAF_ADD_ATOM(actor_host, actor_host::atoms, stop_atom, "stop")
// (stop_atom, close_code)                     [runtime connection] close the link with
//                                               close_code (1012: register at another node)
// (drain_atom) -> ok [connection] / vector<actor> [directory] / string [manager_supervisor:
//                                               drain this node and stop, as on SIGTERM]
CAF_ADD_ATOM(actor_host, actor_host::atoms, drain_atom, "drain")

// iii workers: connections <-> function registry <-> invocations, triggers
// (iii_options_atom, function_registry_options) [function_registry]
CAF_ADD_ATOM(actor_host, actor_host::atoms, iii_options_atom, "iiiopts")
// (invoke_atom, caller, tag, invocation_request) [function_registry] route a call
CAF_ADD_ATOM(actor_host, actor_host::atoms, invoke_atom, "invoke")
// (execute_atom, caller, tag, invocation_request)   [worker_connection] run it here
CAF_ADD_ATOM(actor_host, actor_host::atoms, execute_atom, "execute")
// (worker_atom, id, token, conn, transport, ip, access)   [function_registry]
CAF_ADD_ATOM(actor_host, actor_host::atoms, worker_atom, "worker")
// (reattach_atom, worker_id, previous_id, token)  [function_registry]
CAF_ADD_ATOM(actor_host, actor_host::atoms, reattach_atom, "reattach")
// (replaced_atom)                               [worker_connection] retired by a reattach
CAF_ADD_ATOM(actor_host, actor_host::atoms, replaced_atom, "replaced")
// (fn_add_atom, worker_function), (fn_remove_atom, worker_id, function_id),
// (type_add_atom, trigger_type_entry), (bind_atom, worker_id, trigger_binding_args),
// (unbind_atom, worker_id, trigger_id)          [function_registry]
CAF_ADD_ATOM(actor_host, actor_host::atoms, fn_add_atom, "fnadd")
CAF_ADD_ATOM(actor_host, actor_host::atoms, fn_remove_atom, "fnremove")
CAF_ADD_ATOM(actor_host, actor_host::atoms, type_add_atom, "typeadd")
CAF_ADD_ATOM(actor_host, actor_host::atoms, bind_atom, "bind")
CAF_ADD_ATOM(actor_host, actor_host::atoms, unbind_atom, "unbind")
// (bind_result_atom, worker_id, trigger_id, error)   [function_registry] a
// provider's triggerregistrationresult
CAF_ADD_ATOM(actor_host, actor_host::atoms, bind_result_atom, "bindresult")
// (bind_answer_atom, error)                     [trigger_binding] the same, for it
CAF_ADD_ATOM(actor_host, actor_host::atoms, bind_answer_atom, "bindanswer")
// (provider_atom, transport), (park_atom), (retire_atom)   [trigger_binding]
CAF_ADD_ATOM(actor_host, actor_host::atoms, provider_atom, "provider")
CAF_ADD_ATOM(actor_host, actor_host::atoms, park_atom, "park")
CAF_ADD_ATOM(actor_host, actor_host::atoms, retire_atom, "retire")
// (flush_atom)                                  [function_registry] compare the function set
//                                               [worker_connection] take the next held frame
//                                               [cluster_gateway] send what it batched
//                                               [runtime_directory] publish the routes it held
CAF_ADD_ATOM(actor_host, actor_host::atoms, flush_atom, "flush")

// iii streaming channels [channel]
// (attach_atom, writer, transport)              a socket for one end
CAF_ADD_ATOM(actor_host, actor_host::atoms, attach_atom, "attach")
// (channel_frame_atom, from_writer, binary, data),
// (channel_closed_atom, from_writer, clean, code, reason)   from an end's socket
CAF_ADD_ATOM(actor_host, actor_host::atoms, channel_frame_atom, "chframe")
CAF_ADD_ATOM(actor_host, actor_host::atoms, channel_closed_atom, "chclosed")

// cluster [cluster_node] (actors/cluster/): between nodes
// (hello_atom, member_card, vector<runtime_record>)
//   -> (member_card, vector<member_card>, vector<runtime_record>)   join / rejoin
CAF_ADD_ATOM(actor_host, actor_host::atoms, hello_atom, "hello")
// (member_atom, member_card)                    a node another node admitted
CAF_ADD_ATOM(actor_host, actor_host::atoms, member_atom, "member")
// (rt_up_atom, node, runtime_record), (rt_down_atom, node, runtime_id)
CAF_ADD_ATOM(actor_host, actor_host::atoms, rt_up_atom, "rtup")
CAF_ADD_ATOM(actor_host, actor_host::atoms, rt_down_atom, "rtdown")
// (node_status_atom, node, workers, ids, in_flight)   periodic: the node's iii worker
//                                               count and its runtimes' calls in flight
// (remote_load_atom, node, ids, in_flight)      [runtime_directory] from the cluster node
CAF_ADD_ATOM(actor_host, actor_host::atoms, node_status_atom, "nodestatus")
CAF_ADD_ATOM(actor_host, actor_host::atoms, remote_load_atom, "remoteload")
// (leave_atom, node)                            the node shuts down
CAF_ADD_ATOM(actor_host, actor_host::atoms, leave_atom, "leave")
// cluster, within a node
// (local_up_atom, id, info_json, conn, load), (local_down_atom, id)   [cluster_node] from the directory
CAF_ADD_ATOM(actor_host, actor_host::atoms, local_up_atom, "localup")
CAF_ADD_ATOM(actor_host, actor_host::atoms, local_down_atom, "localdown")
// (remote_up_atom, node, id, info_json, conn), (remote_down_atom, node, id),
// (node_lost_atom, node)                        [runtime_directory] from the cluster node
CAF_ADD_ATOM(actor_host, actor_host::atoms, remote_up_atom, "remoteup")
CAF_ADD_ATOM(actor_host, actor_host::atoms, remote_down_atom, "remotedown")
CAF_ADD_ATOM(actor_host, actor_host::atoms, node_lost_atom, "nodelost")
// (local_fns_atom, iii_node_set)    [cluster_node] this node's iii functions, workers, types
// (fn_set_atom, node, iii_node_set)  [cluster_node, function_registry] another node's
CAF_ADD_ATOM(actor_host, actor_host::atoms, local_fns_atom, "localfns")
CAF_ADD_ATOM(actor_host, actor_host::atoms, fn_set_atom, "fnset")
// (cluster_atom, cluster_node, gateway, node_name)   [runtime_directory, function_registry]
//                                               where local changes and remote calls go
// (listening_atom, advertised_address, reflection_url) [cluster_node] its endpoint is up: start
CAF_ADD_ATOM(actor_host, actor_host::atoms, listening_atom, "listening")
CAF_ADD_ATOM(actor_host, actor_host::atoms, cluster_atom, "cluster")
// (dial_atom, peer_cluster_node)               [cluster_node] say hello to it
// (resolve_atom, seeds) -> addresses            [seed resolver]
// (beat_atom)                                   [cluster_node] its own timer
CAF_ADD_ATOM(actor_host, actor_host::atoms, dial_atom, "dial")
CAF_ADD_ATOM(actor_host, actor_host::atoms, resolve_atom, "resolve")
CAF_ADD_ATOM(actor_host, actor_host::atoms, beat_atom, "beat")

// cluster gateway [cluster_gateway] (actors/cluster/gateway.hpp): every call
// between two nodes passes their two long-lived gateways, so a call costs no
// per-call remote actor (no proxy to announce, create and kill on each node).
// From this node:
//   (gateway_atom, node, peer_gateway)          [from cluster_node] null: gone
//   (call_atom, node, target, conn, load, call_request, caller) -> call_handle
//                                               [from the call path] a call for another
//                                               node's runtime or function
//   (input_atom, id, raw), (end_input_atom, id), (abort_atom, id)   its input, from its caller
//   (execute_atom, node, conn, caller, tag, invocation_request)   an iii invocation
//   (flush_atom)                                its own: send what it batched
// Between gateways, batched (everything one gateway has for another when its
// mailbox runs dry is one BASP message; actors/cluster/cluster_types.hpp):
//   (gw_requests_atom, vector<gw_request>)      entry node's -> owner's
//   (gw_events_atom, vector<gw_event>)          owner's -> entry node's
CAF_ADD_ATOM(actor_host, actor_host::atoms, gateway_atom, "gateway")
CAF_ADD_ATOM(actor_host, actor_host::atoms, gw_requests_atom, "gwrequests")
CAF_ADD_ATOM(actor_host, actor_host::atoms, gw_events_atom, "gwevents")

// dashboard feed [dashboard_feed] (actors/doors/ws/dashboard_feed.hpp)
//   (subscribe_atom, listener)                  [runtime_directory, function_registry]
//                                               the listener hears of changes
//   (subscribe_atom, session, topics) -> ok     [dashboard_feed] a watch on /api/ws
//   (changed_atom, topic)                       [dashboard_feed] a topic changed
//   (snapshot_atom) -> string                   [function_registry] workers as the dashboard shows them
//   (service_atom, name, state_json)            [dashboard_feed] a service's state
//   (sample_atom)                               [dashboard_feed] its own: sample the metrics
//   (feed_atom, notification)                   [api_session] write it to the socket
CAF_ADD_ATOM(actor_host, actor_host::atoms, subscribe_atom, "subscribe")
CAF_ADD_ATOM(actor_host, actor_host::atoms, changed_atom, "changed")
CAF_ADD_ATOM(actor_host, actor_host::atoms, snapshot_atom, "snapshot")
CAF_ADD_ATOM(actor_host, actor_host::atoms, service_atom, "service")
CAF_ADD_ATOM(actor_host, actor_host::atoms, sample_atom, "sample")
CAF_ADD_ATOM(actor_host, actor_host::atoms, feed_atom, "feed")
// services and replicas (actors/dispatch/service_queue.hpp)
//   (limits_atom, service_limits)               [runtime_directory] admission settings
//   (services_atom) -> string                   [runtime_directory] GET /api/services
//   (slot_atom)                                 [service_queue] a replica finished a call
CAF_ADD_ATOM(actor_host, actor_host::atoms, limits_atom, "limits")
CAF_ADD_ATOM(actor_host, actor_host::atoms, services_atom, "services")
CAF_ADD_ATOM(actor_host, actor_host::atoms, slot_atom, "slot")
//   (idempotent_atom, id, keys, conn)           [runtime_directory] the actions a runtime
//                                               declares safe to run twice (metadata.retry)
CAF_ADD_ATOM(actor_host, actor_host::atoms, idempotent_atom, "idempotent")
//   (restart_atom, service) -> string           [manager_supervisor] a rolling restart
//   (restart_atom) -> ok                        [child_runtime] a new process, once registered
//   (drain_atom, id) -> connection              [runtime_directory] out of rotation
CAF_ADD_ATOM(actor_host, actor_host::atoms, restart_atom, "restart")
//   (restart_atom, spec) -> ok                  [child_runtime] the same with a new spec
//   (reload_atom, steps)                        [manager_supervisor] SIGHUP: children whose
//                                               host.yaml spec changed, rolling per service
CAF_ADD_ATOM(actor_host, actor_host::atoms, reload_atom, "reload")
// A runtime's message over max_frame_bytes, read and dropped by its socket:
//   (oversized_atom, head, tail, size)          [runtime_connection] find its call
//   (oversized_atom, error)                     [pending_request] fail it, cancel the run
CAF_ADD_ATOM(actor_host, actor_host::atoms, oversized_atom, "oversized")
// Reflection V1 runtimes found through their files (v1_discovery):
//   (scan_atom)                                 [v1_discovery] its own: read the folder again
CAF_ADD_ATOM(actor_host, actor_host::atoms, scan_atom, "scan")

CAF_END_TYPE_ID_BLOCK(actor_host)

namespace actor_host {
using namespace atoms;
} // namespace actor_host

#include "net/transport.hpp"

// Sockets cross actor boundaries only inside one process.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(actor_host::net::transport_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<caf::actor>)
