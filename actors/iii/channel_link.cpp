#include "actors/iii/channel_link.hpp"

#include "actors/cluster/cluster_types.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <mutex>

namespace actor_host {

namespace {

struct cluster_route {
  std::mutex mtx;
  std::string node;
  caf::actor gateway;
};

cluster_route& route() {
  static cluster_route r;
  return r;
}

struct link_end_state {
  net::transport_ptr socket;
  channel_flow_ptr flow;
  std::deque<std::int64_t> in_flight; // sizes of writer frames not credited yet
  caf::actor gateway;
  std::string channel_id;
  bool writer = false;
  static inline const char* name = "channel_link_end";
};

using end_ptr = caf::stateful_actor<link_end_state>*;

void close_socket(end_ptr self, std::uint16_t code, const std::string& reason) {
  if (self->state.socket)
    self->state.socket->close(code, reason);
  self->state.socket = nullptr;
  self->quit();
}

/// `n` frames were given to the reader (or dropped): the writer may go on
/// when that takes its flow below the limits.
void credit(end_ptr self, std::uint64_t n) {
  auto& st = self->state;
  std::int64_t frames = 0;
  std::int64_t bytes = 0;
  // A peer's count is no more than what is in flight.
  for (; frames < static_cast<std::int64_t>(n) && !st.in_flight.empty(); ++frames) {
    bytes += st.in_flight.front();
    st.in_flight.pop_front();
  }
  if (frames == 0)
    return;
  auto before = st.flow->pending.fetch_sub(frames);
  auto before_bytes = st.flow->pending_bytes.fetch_sub(bytes);
  if (st.flow->full(before, before_bytes) && !st.flow->full(before - frames, before_bytes - bytes)
      && st.socket)
    st.socket->resume_reading();
}

caf::behavior link_end(end_ptr self, net::transport_ptr socket, channel_flow_ptr flow,
                       caf::actor gateway, const std::string& node, std::string id,
                       std::string key, bool writer) {
  auto& st = self->state;
  st.socket = std::move(socket);
  st.flow = std::move(flow);
  st.gateway = gateway;
  st.channel_id = id;
  st.writer = writer;
  self->monitor(gateway);
  self->set_down_handler([self](caf::down_msg&) {
    close_socket(self, 1011, "channel link lost: this node's cluster gateway ended");
  });
  // Before any frame of the socket: the link exists when they reach the gateway.
  self->send(gateway, attach_atom_v, node, std::move(id), std::move(key), writer);
  return {
    // From the socket.
    [self](channel_frame_atom, bool from_writer, bool binary, std::string& data) {
      auto& st = self->state;
      if (!from_writer)
        return; // the reader has nothing to say
      st.in_flight.push_back(static_cast<std::int64_t>(data.size()));
      self->send(st.gateway, channel_frame_atom_v, self->id(), binary, std::move(data));
    },
    [self](channel_closed_atom, bool, bool clean, std::uint16_t code, std::string& reason) {
      self->send(self->state.gateway, channel_closed_atom_v, self->id(), clean, code,
                 std::move(reason));
      self->state.socket = nullptr;
      self->quit();
    },
    // From the channel's node.
    [self](attach_atom, std::uint64_t buffer, std::uint64_t max_bytes) {
      auto& st = self->state;
      auto frames = st.flow->pending.load();
      auto bytes = st.flow->pending_bytes.load();
      bool was_full = st.flow->full(frames, bytes);
      st.flow->limit = static_cast<std::int64_t>(
        std::clamp<std::uint64_t>(buffer, 1, channel_max_buffer));
      st.flow->byte_limit = static_cast<std::int64_t>(
        std::min<std::uint64_t>(max_bytes, std::uint64_t{1} << 40));
      if (was_full && !st.flow->full(frames, bytes) && st.socket)
        st.socket->resume_reading();
    },
    [self](channel_frame_atom, bool binary, std::string& data) {
      auto& st = self->state;
      if (!st.socket)
        return;
      if (binary)
        st.socket->send_binary(std::move(data));
      else
        st.socket->send_text(std::move(data));
      // In the socket's (byte-bounded) queue: the channel may take the next.
      self->send(st.gateway, slot_atom_v, self->id(), std::uint64_t{1});
    },
    [self](slot_atom, std::uint64_t frames) { credit(self, frames); },
    [self](channel_closed_atom, bool clean, std::uint16_t code, std::string& reason) {
      bool sendable = code >= 1000 && code < 5000 && code != 1005 && code != 1006 && code != 1015;
      close_socket(self, clean && sendable ? code : 1001, reason);
    },
  };
}

/// The transport of an end whose socket is at another node, as the channel
/// sees it: what the channel does with it goes to the gateway, by link.
class remote_end_link : public remote_channel_end {
public:
  remote_end_link(caf::actor gateway, std::uint64_t tag, std::string peer)
    : gateway_(std::move(gateway)), tag_(tag), peer_(std::move(peer)) {
  }

  void send_text(std::string frame) override {
    if (!closed_)
      caf::anon_send(gateway_, channel_frame_atom_v, tag_, false, std::move(frame));
  }

  void send_binary(std::string frame) override {
    if (!closed_)
      caf::anon_send(gateway_, channel_frame_atom_v, tag_, true, std::move(frame));
  }

  void close(std::uint16_t code, std::string reason) override {
    if (!closed_.exchange(true))
      caf::anon_send(gateway_, channel_closed_atom_v, tag_, true, code, std::move(reason));
  }

  void released(std::int64_t frames) override {
    if (!closed_ && frames > 0)
      caf::anon_send(gateway_, slot_atom_v, tag_, static_cast<std::uint64_t>(frames));
  }

  const std::string& peer() const override {
    return peer_;
  }

private:
  caf::actor gateway_;
  std::uint64_t tag_;
  std::string peer_;
  std::atomic<bool> closed_{false};
};

} // namespace

void set_channel_cluster(std::string node, caf::actor gateway) {
  auto& r = route();
  std::lock_guard<std::mutex> guard{r.mtx};
  r.node = std::move(node);
  r.gateway = std::move(gateway);
}

std::string channel_id_suffix() {
  auto& r = route();
  std::lock_guard<std::mutex> guard{r.mtx};
  return r.gateway && !r.node.empty() ? "~" + r.node : std::string{};
}

std::string remote_channel_node(std::string_view id) {
  auto p = id.rfind('~');
  if (p == std::string_view::npos)
    return {};
  std::string node{id.substr(p + 1)};
  auto& r = route();
  std::lock_guard<std::mutex> guard{r.mtx};
  if (!r.gateway || node == r.node || !valid_node_name(node))
    return {};
  return node;
}

net::frame_handler_ptr open_remote_channel_end(const net::transport_ptr& transport,
                                               const std::string& id, const std::string& key,
                                               bool writer) {
  auto node = remote_channel_node(id);
  if (node.empty())
    return nullptr;
  caf::actor gateway;
  {
    auto& r = route();
    std::lock_guard<std::mutex> guard{r.mtx};
    gateway = r.gateway;
  }
  // The channel's limits come from its node once it took the socket: until
  // then one frame may go.
  auto flow = std::make_shared<channel_flow>();
  flow->limit = 1;
  auto end = gateway.home_system().spawn(link_end, transport, flow, gateway, node, id, key, writer);
  spdlog::debug("iii channel {}: {} socket from {} linked to node {}", id,
                writer ? "writer" : "reader", transport->peer(), node);
  return channel_socket_handler(std::move(end), writer, std::move(flow), transport);
}

bool accept_remote_end(const caf::actor& gateway, std::uint64_t tag, const std::string& id,
                       const std::string& key, bool writer, const std::string& node,
                       caf::actor& channel, std::uint64_t& buffer, std::uint64_t& max_bytes) {
  channel_flow_ptr flow;
  if (channels().take(id, key, writer, channel, flow) != channel_table::take_result::ok) {
    spdlog::info("iii channel socket at node {} refused: channel {} not found, wrong key or {} "
                 "taken",
                 node, id, writer ? "writer" : "reader");
    return false;
  }
  buffer = static_cast<std::uint64_t>(flow->limit.load());
  max_bytes = static_cast<std::uint64_t>(flow->byte_limit.load());
  net::transport_ptr end = std::make_shared<remote_end_link>(gateway, tag, "node " + node);
  caf::anon_send(channel, attach_atom_v, writer, std::move(end));
  return true;
}

} // namespace actor_host
