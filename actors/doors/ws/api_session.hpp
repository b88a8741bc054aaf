#pragma once

#include "actors/call/describe.hpp"
#include "actors/common/held_input.hpp"
#include "actors/common/live_counts.hpp"
#include "actors/common/messages.hpp"
#include "actors/dispatch/call_path.hpp"
#include "net/transport.hpp"

#include <boost/unordered/unordered_flat_set.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace actor_host {

struct api_session_state {
  struct call {
    std::string caller_id; // the caller's raw JSON-RPC id
    call_handle pending;   // known once accepted
    held_input held;       // input that arrived before `pending`
    bool input_ended = false;
    bool events = false;   // relay runActionState / streamChunk (runAction)
    // What few calls have, out of line (inline it was 24 of a call's 88
    // bytes; 100,000 calls in flight are 100,000 of these): a streaming
    // run's sink, where the connection writes its events, and for
    // `describe` what turns the listing into its answer.
    struct rare_part {
      stream_sink_ptr sink;
      std::optional<describe_target> target;
      std::string runtime;
    };
    std::unique_ptr<rare_part> rare;

    stream_sink* sink() const noexcept { return rare ? rare->sink.get() : nullptr; }
  };

  live_count live{actor_kind::caller_session};
  net::transport_ptr transport;
  front_door door;
  std::uint64_t next_tag = 1;
  std::unordered_map<std::uint64_t, call> calls; // by tag

  // The calls' tags by the caller's id, hashed and compared by the id their
  // call keeps: a flat set of 8-byte slots, where a map node with its own
  // copy of the id was 56 bytes and a bucket per call. A tag leaves it
  // before its call leaves `calls`.
  struct by_caller_id {
    using is_transparent = void;
    const std::unordered_map<std::uint64_t, call>* calls;
    std::string_view id_of(std::uint64_t tag) const { return calls->at(tag).caller_id; }
    std::size_t operator()(std::uint64_t tag) const { return (*this)(id_of(tag)); }
    std::size_t operator()(std::string_view id) const { return std::hash<std::string_view>{}(id); }
    bool operator()(std::uint64_t a, std::uint64_t b) const { return a == b; }
    bool operator()(std::uint64_t a, std::string_view b) const { return id_of(a) == b; }
    bool operator()(std::string_view a, std::uint64_t b) const { return a == id_of(b); }
  };
  boost::unordered_flat_set<std::uint64_t, by_caller_id, by_caller_id> by_id{
    0, by_caller_id{&calls}, by_caller_id{&calls}};
  bool over_call_cap = false; // logged once per stretch over max_calls_per_caller
  static inline const char* name = "api_session";
};

/// A program's WebSocket on /api/ws: JSON-RPC 2.0 with the methods a manager
/// sends to runtimes, plus listRuntimes and runtimeId routing. Runs calls
/// concurrently (at most policy.max_calls_per_caller at a time; more get
/// RESOURCE_EXHAUSTED) and relays their events with the caller's own ids.
/// When the socket closes, every call it started is forgotten and its runs
/// cancelled.
using api_session_ptr = api_session_actor::stateful_pointer<api_session_state>;

api_session_actor::behavior_type api_session(api_session_ptr self, net::transport_ptr transport,
                                             front_door door);

} // namespace actor_host
