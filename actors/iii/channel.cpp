#include "actors/iii/channel.hpp"

#include "actors/call/errors.hpp"
#include "actors/iii/channel_link.hpp"
#include "obs/metrics.hpp"
#include "wire/iii_protocol.hpp"
#include "wire/jsonrpc.hpp"
#include "wire/secure_random.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>

namespace actor_host {

namespace iii = wire::iii;
namespace rpc = wire::jsonrpc;

// -- table ---------------------------------------------------------------------

void channel_table::add(const std::string& id, std::string key, caf::actor channel,
                        channel_flow_ptr flow, caf::actor_addr owner) {
  std::lock_guard<std::mutex> guard{mtx_};
  entries_[id] = {std::move(key), std::move(channel), std::move(flow), std::move(owner), false,
                  false};
}

std::size_t channel_table::owned_by(const caf::actor_addr& owner) const {
  std::lock_guard<std::mutex> guard{mtx_};
  return static_cast<std::size_t>(std::count_if(
    entries_.begin(), entries_.end(), [&](auto& kv) { return kv.second.owner == owner; }));
}

void channel_table::remove(const std::string& id) {
  std::lock_guard<std::mutex> guard{mtx_};
  entries_.erase(id);
}

caf::actor channel_table::find(const std::string& id, std::string_view key) const {
  std::lock_guard<std::mutex> guard{mtx_};
  auto i = entries_.find(id);
  if (i == entries_.end() || !wire::secrets_equal(i->second.key, key))
    return {};
  return i->second.channel;
}

channel_table::take_result channel_table::take(const std::string& id, std::string_view key,
                                                bool writer, caf::actor& out,
                                                channel_flow_ptr& flow) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto i = entries_.find(id);
  if (i == entries_.end() || !wire::secrets_equal(i->second.key, key))
    return take_result::not_found;
  auto& taken = writer ? i->second.writer_taken : i->second.reader_taken;
  if (taken)
    return take_result::taken;
  taken = true;
  out = i->second.channel;
  flow = i->second.flow;
  return take_result::ok;
}

std::size_t channel_table::size() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return entries_.size();
}

channel_table& channels() {
  static channel_table table;
  return table;
}

// -- the actor -------------------------------------------------------------------

namespace {

using self_ptr = caf::stateful_actor<channel_state>*;

const char* end_name(bool writer) {
  return writer ? "writer" : "reader";
}

/// `n` frames of `bytes` left the channel (given to the reader, or
/// dropped): a writer paused at a limit may go on.
void release(self_ptr self, std::int64_t n, std::size_t bytes) {
  auto& st = self->state;
  if (auto* remote = dynamic_cast<remote_channel_end*>(st.writer.get()))
    return remote->released(n); // its node counts the bytes
  auto b = static_cast<std::int64_t>(bytes);
  auto before = st.flow->pending.fetch_sub(n);
  auto before_bytes = st.flow->pending_bytes.fetch_sub(b);
  if (st.flow->full(before, before_bytes) && !st.flow->full(before - n, before_bytes - b)
      && st.writer)
    st.writer->resume_reading();
}

void relay(self_ptr self, channel_state::item& it) {
  auto& r = self->state.reader;
  if (dynamic_cast<remote_channel_end*>(r.get()))
    self->state.unacked.push_back(it.data.size());
  if (it.binary)
    r->send_binary(std::move(it.data));
  else
    r->send_text(std::move(it.data));
  obs::global().channel_frames.fetch_add(1, std::memory_order_relaxed);
}

/// Frames given to the reader: released now, or, for a reader at another
/// node, when that node has handed them to its socket (on_reader_credit).
void relayed(self_ptr self, std::int64_t n, std::size_t bytes) {
  if (!dynamic_cast<remote_channel_end*>(self->state.reader.get()))
    release(self, n, bytes);
}

void on_reader_credit(self_ptr self, std::uint64_t frames) {
  auto& st = self->state;
  std::int64_t n = 0;
  std::size_t bytes = 0;
  for (; n < static_cast<std::int64_t>(frames) && !st.unacked.empty(); ++n) {
    bytes += st.unacked.front();
    st.unacked.pop_front();
  }
  if (n > 0)
    release(self, n, bytes);
}

void close_ends(self_ptr self, std::uint16_t code, const std::string& reason) {
  auto& st = self->state;
  if (st.reader)
    st.reader->close(code, reason);
  if (st.writer)
    st.writer->close(code, reason);
  st.reader = nullptr;
  st.writer = nullptr;
}

/// Ends the channel: closes the ends it still holds; the table entry goes
/// with the actor (create_channel attached that).
void finish(self_ptr self, std::uint16_t code, const std::string& reason) {
  close_ends(self, code, reason);
  self->quit();
}

bool fully_used(const channel_state& st) {
  return st.reader_taken && st.writer_taken;
}

void on_attach(self_ptr self, bool writer, net::transport_ptr& t) {
  auto& st = self->state;
  auto& taken = writer ? st.writer_taken : st.reader_taken;
  if (taken) {
    // The table hands out each end once; this is only for direct senders.
    spdlog::info("iii channel {}: a second {} socket from {} refused", st.id, end_name(writer),
                 t->peer());
    t->close(1008, std::string{"channel "} + end_name(writer) + " already connected");
    return;
  }
  taken = true;
  spdlog::debug("iii channel {}: {} connected from {}", st.id, end_name(writer), t->peer());
  if (writer) {
    st.writer = std::move(t);
    return;
  }
  st.reader = std::move(t);
  auto n = static_cast<std::int64_t>(st.buffered.size());
  auto bytes = st.buffered_bytes;
  for (auto& it : st.buffered)
    relay(self, it);
  st.buffered.clear();
  st.buffered_bytes = 0;
  if (st.writer_done)
    return finish(self, st.close_code, st.close_reason);
  relayed(self, n, bytes);
}

void on_data(self_ptr self, bool from_writer, bool binary, std::string& data) {
  auto& st = self->state;
  // The reader has nothing to say (the engine ignores it too); a writer
  // that closed has no more frames.
  if (!from_writer)
    return;
  auto size = data.size();
  if (st.writer_done || !st.writer)
    return release(self, 1, size);
  channel_state::item it{binary, std::move(data)};
  if (st.reader) {
    relay(self, it);
    if (st.unacked.size() >= 2 * st.buffer_size) {
      // A writer (a peer node) past its limits toward a reader at another
      // node: as with no reader, the stream cannot be delivered whole.
      obs::global().channel_overflows.fetch_add(1, std::memory_order_relaxed);
      spdlog::warn("iii channel {}: {} frames on the way to its reader; ending", st.id,
                   st.unacked.size());
      return finish(self, 1008, "channel buffer full");
    }
    return relayed(self, 1, size);
  }
  st.buffered.push_back(std::move(it));
  st.buffered_bytes += size;
  if (st.max_bytes > 0 && st.buffered_bytes > 2 * st.max_bytes) {
    // Paused at max_bytes, the writer can only get here with a frame larger
    // than the cap, or through a transport without flow control.
    obs::global().channel_overflows.fetch_add(1, std::memory_order_relaxed);
    spdlog::warn("iii channel {}: {} bytes buffered and no reader (max_channel_bytes {}); ending "
                 "the channel",
                 st.id, st.buffered_bytes, st.max_bytes);
    return finish(self, 1008, "channel buffer full (max_channel_bytes)");
  }
  if (st.buffered.size() >= 2 * st.buffer_size) {
    // The writer's socket should have been paused at buffer_size; this
    // many means it was not, and the stream cannot be delivered whole.
    obs::global().channel_overflows.fetch_add(1, std::memory_order_relaxed);
    spdlog::warn("iii channel {}: {} frames buffered and no reader; ending the channel", st.id,
                 st.buffered.size());
    return finish(self, 1008, "channel buffer full");
  }
}

void on_end_closed(self_ptr self, bool from_writer, bool clean, std::uint16_t code,
                   std::string& reason) {
  auto& st = self->state;
  if (from_writer) {
    st.writer = nullptr;
    st.writer_done = true;
    // A clean close passes on as it came (codes a peer may send); a lost
    // writer becomes 1001, so a reader can tell a cut stream.
    bool sendable = code >= 1000 && code < 5000 && code != 1005 && code != 1006 && code != 1015;
    st.close_code = clean && sendable ? code : (clean ? 1000 : 1001);
    st.close_reason = clean ? reason : "channel writer disconnected";
    spdlog::debug("iii channel {}: writer closed ({}), {} frame(s) buffered", st.id, reason,
                  st.buffered.size());
    if (st.reader)
      finish(self, st.close_code, st.close_reason);
    // Else the frames wait for the reader (or the sweep).
    return;
  }
  st.reader = nullptr;
  spdlog::debug("iii channel {}: reader closed ({})", st.id, reason);
  finish(self, 1001, "channel reader closed");
}

} // namespace

caf::behavior channel(caf::stateful_actor<channel_state>* self, channel_args args) {
  auto& st = self->state;
  st.id = std::move(args.id);
  st.buffer_size = std::max<std::size_t>(args.buffer_size, 1);
  st.max_bytes = args.max_bytes;
  // A flow from create_channel is already shared with the I/O threads: its
  // limit was set before and is only read from then on.
  if (!args.flow) {
    args.flow = std::make_shared<channel_flow>();
    args.flow->limit = static_cast<std::int64_t>(st.buffer_size);
    args.flow->byte_limit = static_cast<std::int64_t>(st.max_bytes);
  }
  st.flow = std::move(args.flow);
  if (args.owner) {
    st.owner = args.owner.address();
    self->monitor(args.owner);
  }
  if (args.parent)
    self->monitor(args.parent);
  self->set_down_handler([self](caf::down_msg& dm) {
    auto& st = self->state;
    if (dm.source == st.owner) {
      // As the engine: the owner's channels go, but a stream already
      // flowing between two connected ends finishes on its own.
      if (fully_used(st))
        return;
      spdlog::info("iii channel {}: owner disconnected before both ends connected", st.id);
      return finish(self, 1001, "channel owner disconnected");
    }
    finish(self, 1001, "going away"); // the parent: manager shutdown
  });
  self->set_exit_handler([self](caf::exit_msg& em) {
    close_ends(self, 1001, "going away");
    self->quit(em.reason);
  });
  self->delayed_send(self, args.sweep_after, expired_atom_v);
  return {
    [self](attach_atom, bool writer, net::transport_ptr& t) { on_attach(self, writer, t); },
    [self](channel_frame_atom, bool from_writer, bool binary, std::string& data) {
      on_data(self, from_writer, binary, data);
    },
    [self](channel_closed_atom, bool from_writer, bool clean, std::uint16_t code, std::string& reason) {
      on_end_closed(self, from_writer, clean, code, reason);
    },
    [self](slot_atom, std::uint64_t frames) { on_reader_credit(self, frames); },
    [self](expired_atom) {
      auto& st = self->state;
      if (fully_used(st))
        return;
      obs::global().channels_swept.fetch_add(1, std::memory_order_relaxed);
      spdlog::info("iii channel {} swept: {} connected, {} not, {} frame(s) dropped", st.id,
                   st.reader_taken ? "reader" : (st.writer_taken ? "writer" : "no end"),
                   !st.reader_taken ? "reader" : "writer", st.buffered.size());
      finish(self, 1001, "channel expired");
    },
  };
}

// -- engine::channels::create ----------------------------------------------------

namespace {

std::string channel_ref(const std::string& id, const std::string& key, const char* direction) {
  return R"({"channel_id":)" + rpc::quote(id) + R"(,"access_key":)" + rpc::quote(key)
         + R"(,"direction":")" + direction + "\"}";
}

/// Absent or null: the default; an integer >= 1, clamped to the maximum.
wire::expected<std::size_t> parse_buffer_size(const std::string& data) {
  if (data.empty() || data == "null")
    return channel_default_buffer;
  auto p = rpc::split_object(data);
  if (!p)
    return channel_default_buffer; // no object: nothing asked for (the SDK sends {} or {buffer_size})
  auto* raw = p->find("buffer_size");
  if (!raw || *raw == "null")
    return channel_default_buffer;
  long long n = 0;
  auto [end, ec] = std::from_chars(raw->data(), raw->data() + raw->size(), n);
  if (ec != std::errc{} || end != raw->data() + raw->size() || n < 1)
    return wire::unexpected{"buffer_size must be an integer of at least 1 (got " + *raw + ")"};
  return std::min<std::size_t>(static_cast<std::size_t>(n), channel_max_buffer);
}

} // namespace

call_end create_channel(caf::local_actor* parent, caf::actor owner, const std::string& data,
                        const channel_limits& limits, caf::timespan sweep_after) {
  auto parsed_buffer = parse_buffer_size(data);
  if (!parsed_buffer)
    return failed(manager_errors::iii_error(iii::code::invalid_arguments, parsed_buffer.error()));
  auto buffer = *parsed_buffer;
  if (limits.max_per_worker > 0 && owner
      && channels().owned_by(owner.address()) >= limits.max_per_worker) {
    obs::global().channels_refused.fetch_add(1, std::memory_order_relaxed);
    spdlog::warn("iii channel refused: the worker already has {} open channels "
                 "(max_channels_per_worker)",
                 limits.max_per_worker);
    return failed(manager_errors::iii_error(
      iii::code::limit_exceeded, "too many open channels for this worker "
                                 "(max_channels_per_worker is "
                                   + std::to_string(limits.max_per_worker)
                                   + "); close or finish some first"));
  }
  channel_args a;
  a.id = iii::new_uuid() + channel_id_suffix();
  a.buffer_size = buffer;
  a.max_bytes = limits.max_bytes;
  a.sweep_after = sweep_after;
  auto owner_addr = owner ? owner.address() : caf::actor_addr{};
  a.owner = std::move(owner);
  a.parent = caf::actor_cast<caf::actor>(parent);
  a.flow = std::make_shared<channel_flow>();
  a.flow->limit = static_cast<std::int64_t>(buffer);
  a.flow->byte_limit = static_cast<std::int64_t>(limits.max_bytes);
  auto flow = a.flow;
  auto id = a.id;
  auto key = iii::new_uuid();
  auto ch = parent->spawn(channel, std::move(a));
  // Registered before the refs are handed out, so a socket opened right
  // after the answer finds it; it leaves when the actor ends, however.
  channels().add(id, key, ch, std::move(flow), std::move(owner_addr));
  ch->attach_functor([id](const caf::error&) { channels().remove(id); });
  spdlog::debug("iii channel {} created (buffer {})", id, buffer);
  return succeeded(R"({"writer":)" + channel_ref(id, key, "write") + R"(,"reader":)"
                   + channel_ref(id, key, "read") + "}");
}

// -- sockets ---------------------------------------------------------------------

namespace {

/// channel_socket_handler's handler.
class channel_end : public net::frame_handler {
public:
  channel_end(caf::actor end, bool writer, channel_flow_ptr flow,
              const net::transport_ptr& transport)
    : end_(std::move(end)), writer_(writer), flow_(std::move(flow)), transport_(transport) {
  }

  void on_text(std::string frame) override {
    count(frame.size());
    caf::anon_send(end_, channel_frame_atom_v, writer_, false, std::move(frame));
  }

  bool on_binary(std::string_view data) override {
    count(data.size());
    caf::anon_send(end_, channel_frame_atom_v, writer_, true, std::string{data});
    return true;
  }

  void on_peer_close(std::uint16_t code, std::string reason) override {
    clean_ = true;
    code_ = code;
    reason_ = std::move(reason);
  }

  void on_closed(std::string reason) override {
    caf::anon_send(end_, channel_closed_atom_v, writer_, clean_, code_,
                   clean_ ? std::move(reason_) : std::move(reason));
    end_ = nullptr;
  }

private:
  // On the socket's strand: the pause takes effect before the next read.
  void count(std::size_t bytes) {
    if (!flow_)
      return;
    auto frames = ++flow_->pending;
    auto held = flow_->pending_bytes += static_cast<std::int64_t>(bytes);
    if (flow_->full(frames, held))
      if (auto t = transport_.lock())
        t->pause_reading();
  }

  caf::actor end_;
  bool writer_;
  channel_flow_ptr flow_; // null for a reader
  // Weak: the session owns this handler, a strong one would be a cycle.
  std::weak_ptr<net::transport> transport_;
  bool clean_ = false;
  std::uint16_t code_ = 0;
  std::string reason_;
};

struct end_request {
  std::string id;
  std::string key;
  std::string dir;
};

end_request parse_end(const net::upgrade_request& up) {
  end_request r;
  if (up.path.starts_with(channel_path_prefix))
    r.id = up.path.substr(channel_path_prefix.size());
  if (auto i = up.query.find("key"); i != up.query.end())
    r.key = i->second;
  if (auto i = up.query.find("dir"); i != up.query.end())
    r.dir = i->second;
  return r;
}

} // namespace

int check_channel_upgrade(const net::upgrade_request& up) {
  auto r = parse_end(up);
  if (r.dir != "read" && r.dir != "write")
    return 400;
  if (!remote_channel_node(r.id).empty())
    return 0; // another node's channel: that node checks the key
  if (r.id.empty() || !channels().find(r.id, r.key)) {
    spdlog::info("iii channel socket refused: channel {} not found or wrong key", r.id);
    return 404;
  }
  return 0;
}

net::frame_handler_ptr open_channel_end(net::transport_ptr transport) {
  auto r = parse_end(transport->upgrade());
  bool writer = r.dir == "write";
  caf::actor ch;
  channel_flow_ptr flow;
  if (r.dir == "read" || writer)
    if (auto remote = open_remote_channel_end(transport, r.id, r.key, writer))
      return remote; // its id names another node
  auto got = r.dir == "read" || writer ? channels().take(r.id, r.key, writer, ch, flow)
                                       : channel_table::take_result::not_found;
  if (got == channel_table::take_result::taken) {
    spdlog::info("iii channel {}: a second {} socket from {} refused", r.id, end_name(writer),
                 transport->peer());
    transport->close(1008, std::string{"channel "} + end_name(writer) + " already connected");
    return nullptr;
  }
  if (got != channel_table::take_result::ok) {
    // Ended between the check and the handshake.
    transport->close(1008, "channel not found");
    return nullptr;
  }
  caf::anon_send(ch, attach_atom_v, writer, transport);
  return channel_socket_handler(std::move(ch), writer, std::move(flow), transport);
}

net::frame_handler_ptr channel_socket_handler(caf::actor end, bool writer, channel_flow_ptr flow,
                                              const net::transport_ptr& transport) {
  return std::make_shared<channel_end>(std::move(end), writer, writer ? std::move(flow) : nullptr,
                                       transport);
}

} // namespace actor_host
