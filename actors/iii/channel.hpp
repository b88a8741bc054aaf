#pragma once

#include "actors/call/call_end.hpp"
#include "actors/call/call_policy.hpp"
#include "actors/common/live_counts.hpp"
#include "actors/common/messages.hpp"
#include "net/transport.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace actor_host {

/// Path prefix of the channel sockets on the worker listeners.
inline constexpr std::string_view channel_path_prefix = "/ws/channels/";

/// Buffer of a channel (frames): the engine's default and maximum.
inline constexpr std::size_t channel_default_buffer = 64;
inline constexpr std::size_t channel_max_buffer = 1024;

/// Frames a channel's writer has handed over that the reader has not been
/// given yet. Counted up by the writer socket's handler, on its I/O strand,
/// which pauses the socket at `limit` at once (a pause decided by the actor
/// would land after an unknown number of further frames); counted down by
/// the channel actor as frames reach the reader, which resumes the socket.
/// The limits are atomics too: a writer whose channel is at another node
/// learns them from there once the channel took its socket (until then one
/// frame may go; channel_link.cpp).
struct channel_flow {
  std::atomic<std::int64_t> pending{0};
  std::atomic<std::int64_t> pending_bytes{0};
  std::atomic<std::int64_t> limit{channel_default_buffer};
  std::atomic<std::int64_t> byte_limit{0}; // 0 = none

  /// The writer must wait at these counts.
  bool full(std::int64_t frames, std::int64_t bytes) const {
    auto cap = byte_limit.load();
    return frames >= limit.load() || (cap > 0 && bytes >= cap);
  }
};
using channel_flow_ptr = std::shared_ptr<channel_flow>;

/// A channel end's socket -> the actor that stands for that end (the
/// channel, or the end's link when the channel is at another node): its
/// frames as (channel_frame_atom, writer, binary, data), its close as
/// (channel_closed_atom, writer, clean, code, reason). A writer's handler
/// (`flow` set) counts its frames and pauses the socket when the flow is
/// full, on the socket's strand, before the next read.
net::frame_handler_ptr channel_socket_handler(caf::actor end, bool writer, channel_flow_ptr flow,
                                              const net::transport_ptr& transport);

/// A channel end whose socket is at another node of the cluster
/// (channel_link.hpp): the channel hands it a credit for every writer frame
/// it has passed on (or dropped), which travels back to the writer's node,
/// where the socket waits on them (its flow).
class remote_channel_end : public net::transport {
public:
  virtual void released(std::int64_t frames) = 0;
};

/// Open channels by id: what the upgrade check (on an I/O thread, before
/// the WebSocket exists) and the socket factory consult, so it is a locked
/// map, not an actor. Channel actors are added by `create_channel` and
/// removed when they end. One per process, like the metrics registry: the
/// ids are random UUIDs, so listeners and tests never collide.
class channel_table {
public:
  void add(const std::string& id, std::string key, caf::actor channel, channel_flow_ptr flow,
           caf::actor_addr owner = {});
  /// Open channels owned by `owner` (max_channels_per_worker).
  std::size_t owned_by(const caf::actor_addr& owner) const;
  void remove(const std::string& id);
  /// The channel if `id` is open and `key` is its access key, else null.
  caf::actor find(const std::string& id, std::string_view key) const;

  enum class take_result { ok, not_found, taken };
  /// Claims one end for a socket: each end is taken once, decided here
  /// (under the lock) so that two sockets racing for an end cannot both win.
  take_result take(const std::string& id, std::string_view key, bool writer, caf::actor& out,
                   channel_flow_ptr& flow);

  std::size_t size() const;

private:
  struct entry {
    std::string key;
    caf::actor channel;
    channel_flow_ptr flow;
    caf::actor_addr owner;
    bool reader_taken = false;
    bool writer_taken = false;
  };
  mutable std::mutex mtx_;
  std::unordered_map<std::string, entry> entries_;
};

channel_table& channels();

struct channel_args {
  std::string id;
  std::size_t buffer_size = channel_default_buffer;
  std::size_t max_bytes = 0; // channel_limits::max_bytes
  /// A channel whose two ends have not both connected by then is removed.
  caf::timespan sweep_after{std::chrono::minutes(5)};
  /// The worker_connection whose call created it (may be null): when it
  /// goes away, a channel not yet in full use goes with it.
  caf::actor owner;
  /// The actor that made it (the function registry): it ends with it.
  caf::actor parent;
  /// Shared with the writer socket's handler; made by the channel if null.
  channel_flow_ptr flow;
};

struct channel_state {
  struct item {
    bool binary = false;
    std::string data;
  };

  live_count live{actor_kind::channel};
  std::string id;
  std::size_t buffer_size = channel_default_buffer;
  caf::actor_addr owner;
  net::transport_ptr reader;
  net::transport_ptr writer;
  bool reader_taken = false;
  bool writer_taken = false;
  bool writer_done = false;   // the writer closed; `buffered` is all there is
  std::uint16_t close_code = 1000;
  std::string close_reason;   // the writer's, passed on to the reader
  channel_flow_ptr flow;
  std::deque<item> buffered;  // written before the reader connected
  std::size_t buffered_bytes = 0;
  std::size_t max_bytes = 0;
  // Sizes of the frames given to a reader at another node that its node
  // has not handed to the socket yet: they count against the writer's
  // limits until then, so the window holds end to end. At most the limits.
  std::deque<std::size_t> unacked;
  static inline const char* name = "channel";
};

/// One iii streaming channel (`engine::channels::create`): pairs a writer
/// socket and a reader socket (`/ws/channels/<id>?key=&dir=write|read`),
/// each end taken once. Writer frames reach the reader in order, text as
/// text and binary as binary. Frames written before the reader connects
/// are buffered: at `buffer_size` the writer's socket is paused (TCP pushes
/// back on it, see channel_flow) until the reader arrives. Should a writer
/// still send twice `buffer_size` (a transport without flow control), the
/// channel ends: the writer is closed with 1008 "channel buffer full". When the writer
/// closes, the reader is closed after the buffered frames with the writer's
/// close code and reason (`stream_complete`, `channel_close`). When the
/// reader closes first, the writer is closed (1001 "channel reader
/// closed"). The actor ends when the stream is over, when `sweep_after`
/// passes without both ends connected, when its owner goes away before
/// both ends connected, or with its parent; it then leaves the table and
/// closes the ends it still holds.
///
/// - (attach_atom, is_writer, transport): a socket for one end
/// - (channel_frame_atom, from_writer, binary, data), (channel_closed_atom, from_writer,
///   clean, code, reason): from the end sockets
/// - (slot_atom, frames): a reader at another node has that many more frames
/// - (expired_atom): the sweep timer
caf::behavior channel(caf::stateful_actor<channel_state>* self, channel_args args);

/// `engine::channels::create {buffer_size?}`: spawns a channel owned by
/// `owner` and registers it in the table. Returns the refs, or the iii
/// error INVALID_ARGUMENTS, or LIMIT_EXCEEDED when `owner` already has
/// `limits.max_per_worker` open channels. `buffer_size` is an integer
/// >= 1; larger than 1024 is clamped to 1024; absent or null is 64.
call_end create_channel(caf::local_actor* parent, caf::actor owner, const std::string& data,
                        const channel_limits& limits = {},
                        caf::timespan sweep_after = std::chrono::minutes(5));

/// The upgrade check of `/ws/channels/`: 400 without a valid `dir`, 404 for
/// an unknown id or a wrong key, else 0 (go ahead).
int check_channel_upgrade(const net::upgrade_request& up);

/// Makes the handler of an accepted `/ws/channels/` socket: hands it to its
/// channel. A second socket for an end already taken, or a channel gone
/// since the check, is closed at once (1008).
net::frame_handler_ptr open_channel_end(net::transport_ptr transport);

} // namespace actor_host
