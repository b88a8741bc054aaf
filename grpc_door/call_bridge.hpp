#pragma once

#include <memory>
#include <string>

// What passes between one gRPC call (on the door's thread) and the actor that
// makes it a call of the manager's one call path. JSON text only: messages
// are converted at the door (grpc_door/), so the actor side never sees
// protobuf and the runtime gets the same JSON as over HTTP.
namespace actor_host::grpc_door {

/// A call, as the door hands it on once its request is read.
struct call_start {
  std::string key;    // the action's key
  std::string params; // a runAction's params as HTTP takes them: {key, input, runtimeId?, context?, timeoutMs?}
  bool stream = false;       // server-streaming or bidi: chunks wanted
  bool stream_input = false; // bidi: input follows through call_source::input
  std::string peer;          // for log lines
};

/// The door's end: the call's events, called from any thread, in order, by
/// one actor. Each is a no-op once the call is over (the client left).
class call_sink {
public:
  virtual ~call_sink() = default;
  virtual void trace(std::string trace_id) = 0;
  /// A chunk of a streaming run (its JSON).
  virtual void chunk(std::string json) = 0;
  /// The run's output (its JSON); the call ends.
  virtual void output(std::string json) = 0;
  /// The call failed: a Status code (gRPC's numbering) and its message.
  virtual void fail(int status_code, std::string message) = 0;
};

/// The actor's end: what the client does, called from the door's thread.
class call_source {
public:
  virtual ~call_source() = default;
  /// Bidi: one input message (its JSON).
  virtual void input(std::string json) = 0;
  /// Bidi: the client closed its side.
  virtual void end_input() = 0;
  /// The client cancelled, its deadline passed, or the connection dropped:
  /// the run is to be cancelled; nothing reaches the sink any more.
  virtual void cancelled() = 0;
};

} // namespace actor_host::grpc_door
