#pragma once

#include <caf/fwd.hpp>

#include <cstdint>
#include <functional>

namespace boost::asio {
class io_context;
}

namespace actor_host {

/// Actors on the socket threads. CAF's coordinator hands every runnable
/// actor to a worker thread of its own, so each message between a socket
/// and its actor crosses threads: at one call in flight a call woke the
/// worker twice and the I/O thread twice (futex and epoll wake-ups, a
/// context switch each), and the manager spent 2-2.6x the CPU of a relay
/// that answers on its I/O thread (bench/ANALYSIS.md). With this scheduler
/// an actor made runnable is posted to the io_context instead, and runs on
/// the I/O thread between socket handlers: a message from a socket handler
/// to its actor, and the actor's write back, stay on one thread with no
/// system call. Nothing changes for the actors: one actor still runs on
/// one thread at a time, and a turn is at most `turn_messages` messages,
/// so one busy actor cannot keep the sockets waiting for long. An actor a
/// socket's handler wakes runs at that handler's end rather than posted,
/// and the writes a burst of turns queues go at the burst's end
/// (net/handler_tail.hpp): no post, so no reactor poll, between the steps.
///
/// Until attach() and after detach() (startup, shutdown: the I/O threads
/// do not run then) actors run on CAF's own sharing worker as before, and
/// so does any actor whose post the io_context dropped unrun (stopped).
/// Detached actors keep their own threads.
///
/// Chosen with `ACTOR_HOST_CAF=actor-host.io-scheduler=true` (or the
/// host setting `actors_on_io_threads`).
void use_io_scheduler(caf::actor_system_config& cfg);

/// From now on runnable actors are posted to `ioc`. No-op unless the
/// system was configured with use_io_scheduler.
void attach_io_scheduler(caf::actor_system& sys, boost::asio::io_context& ioc);

/// Back to CAF's worker; returns once no thread is still posting to the
/// context it was attached to (which may then stop and go).
void detach_io_scheduler(caf::actor_system& sys);

/// For work that gains from waiting for the other sockets' reads that the
/// same reactor poll made ready (a batch for another node collects the
/// calls all of them read): inside a socket's read handler on an I/O thread
/// of the context `sys` is attached to, posts `fn` behind those handlers,
/// to run as a burst of its own (the actors it wakes run at its end), and
/// returns true. Elsewhere (a burst of actor turns, CAF's threads, tests)
/// returns false and does nothing: the caller does the work at once. `fn`
/// runs exactly once: if the context drops the post unrun (stopped), as the
/// post is destroyed.
bool post_behind_ready_reads(caf::actor_system& sys, std::function<void()> fn);

/// Turns run on the I/O threads so far (0 without this scheduler).
std::uint64_t io_scheduler_turns(caf::actor_system& sys);

} // namespace actor_host
