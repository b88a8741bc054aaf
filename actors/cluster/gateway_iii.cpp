#include "actors/cluster/gateway_state.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>

// The iii engine's traffic between two nodes, beside the calls: trigger
// bindings (handed to the function registry, which judges them) and the
// ends of channels whose socket and channel are at different nodes. The
// gateway knows neither bindings nor channels: it carries iii_wire records,
// batched per peer gateway as the calls are, and keeps one entry per
// channel end (iii_link) so that the loss of a node closes them.
//
// Local messages (the registry and the channel ends, actors/iii):
// - (subscribe_atom, registry): where bindings and channel opens go
// - (bind_atom, node, iii_wire): a binding message for `node`'s registry
// - (attach_atom, node, channel_id, key, writer) from an end actor: open
//   its link to the channel at `node`; the end gets (attach_atom, buffer,
//   byte cap) when the channel took it, (channel_frame_atom, binary, data),
//   (slot_atom, frames) credits and (channel_closed_atom, clean, code,
//   reason), after which the link is gone
// - (channel_frame_atom, link, binary, data), (channel_closed_atom, link,
//   clean, code, reason), (slot_atom, link, frames): from an end actor or a
//   channel's remote end, for the other side
// The channel's node asks the registry (attach_atom, tag, channel_id, key,
// writer, node) -> (channel, buffer, byte cap) and then sends the channel
// (channel_frame_atom, from_writer, binary, data) and (channel_closed_atom,
// from_writer, clean, code, reason), as a socket of its own would.
namespace actor_host::gateway_detail {

namespace {

constexpr std::size_t max_iii_batch_bytes = 256 * 1024;
// Held for a channel while the registry looks it up: the opener sends one
// frame before the channel's buffer size reaches it (and its close).
constexpr std::size_t max_held_per_link = 4;
// A channel id and key are UUIDs (and a node name): more is not ours.
constexpr std::size_t max_channel_ref_bytes = 256;

std::string node_of(self_ptr self, const caf::actor_addr& gateway) {
  for (auto& [name, peer] : self->state.peers)
    if (peer.address() == gateway)
      return name;
  return {};
}

void post_iii(self_ptr self, const gateway_actor& to, iii_wire w) {
  auto& st = self->state.iii;
  auto bytes = w.text.size() + w.id.size() + w.type.size() + w.function_id.size()
               + w.config.size() + w.metadata.size() + 48;
  std::size_t i = 0;
  while (i < st.outboxes.size() && st.outboxes[i].first != to)
    ++i;
  if (i == st.outboxes.size()) {
    st.outboxes.emplace_back(to, std::vector<iii_wire>{});
    st.outbox_bytes.push_back(0);
  }
  if (st.outbox_bytes[i] + bytes > max_iii_batch_bytes && !st.outboxes[i].second.empty()) {
    self->send(to, gw_requests_atom_v, std::move(st.outboxes[i].second));
    st.outboxes[i].second.clear();
    st.outbox_bytes[i] = 0;
  }
  st.outboxes[i].second.push_back(std::move(w));
  st.outbox_bytes[i] += bytes;
  schedule_flush(self);
}

iii_wire link_wire(std::uint8_t kind, const iii_link& l) {
  iii_wire w;
  w.kind = kind;
  w.link = l.id;
  w.to_opener = !l.opener;
  return w;
}

std::string end_name(bool writer) {
  return writer ? "writer" : "reader";
}

/// Tells the local side of `l` that it is closed, as its socket's close would.
void close_local(self_ptr self, const iii_link& l, bool clean, std::uint16_t code,
                 std::string reason) {
  if (!l.local)
    return;
  if (l.opener)
    caf::anon_send(l.local, channel_closed_atom_v, clean, code, std::move(reason));
  else
    caf::anon_send(l.local, channel_closed_atom_v, l.writer, clean, code, std::move(reason));
}

void forget_link(self_ptr self, std::unordered_map<std::uint64_t, iii_link>::iterator i) {
  auto& st = self->state.iii;
  if (!i->second.opener)
    st.by_origin.erase({i->second.peer.address(), i->second.id});
  st.links.erase(i);
}

/// The link a peer's record names, or end().
std::unordered_map<std::uint64_t, iii_link>::iterator
find_link(self_ptr self, const caf::actor_addr& from, const iii_wire& w) {
  auto& st = self->state.iii;
  if (w.to_opener) {
    auto i = st.links.find(w.link);
    return i != st.links.end() && i->second.opener && i->second.peer.address() == from
             ? i
             : st.links.end();
  }
  auto k = st.by_origin.find({from, w.link});
  return k == st.by_origin.end() ? st.links.end() : st.links.find(k->second);
}

/// A record for a link whose local actor is known.
void deliver(self_ptr self, std::unordered_map<std::uint64_t, iii_link>::iterator i,
             iii_wire& w) {
  auto& l = i->second;
  switch (w.kind) {
    case iii_wire::ch_ready:
      if (l.opener)
        caf::anon_send(l.local, attach_atom_v, w.count, w.bytes);
      break;
    case iii_wire::ch_frame:
      if (l.opener)
        caf::anon_send(l.local, channel_frame_atom_v, w.flag, std::move(w.text));
      else
        caf::anon_send(l.local, channel_frame_atom_v, l.writer, w.flag, std::move(w.text));
      break;
    case iii_wire::ch_credit:
      // For a writer's end: the channel passed frames on; for the channel:
      // a reader's node handed frames to its socket.
      caf::anon_send(l.local, slot_atom_v, w.count);
      break;
    case iii_wire::ch_close:
      close_local(self, l, w.flag, w.code, std::move(w.text));
      forget_link(self, i);
      break;
    default:
      break;
  }
}

void refuse_open(self_ptr self, const gateway_actor& origin, std::uint64_t link, std::string why) {
  iii_wire w;
  w.kind = iii_wire::ch_close;
  w.link = link;
  w.to_opener = true;
  w.flag = true;
  w.code = 1008;
  w.text = std::move(why);
  post_iii(self, origin, std::move(w));
}

/// Another node's socket for one end of a channel here.
void on_open(self_ptr self, const gateway_actor& origin, iii_wire& w) {
  auto& st = self->state.iii;
  auto key = std::make_pair(origin.address(), w.link);
  if (st.by_origin.count(key))
    return;
  auto from_origin = static_cast<std::size_t>(std::count_if(
    st.links.begin(), st.links.end(),
    [&](auto& kv) { return !kv.second.opener && kv.second.peer == origin; }));
  auto node = node_of(self, origin.address());
  if (!st.sink || node.empty() || w.id.size() > max_channel_ref_bytes
      || w.text.size() > max_channel_ref_bytes)
    return refuse_open(self, origin, w.link, "channel not found");
  if (from_origin >= max_iii_links_per_node) {
    spdlog::warn("cluster: a node opened {} channel ends here; one more refused", from_origin);
    return refuse_open(self, origin, w.link, "too many channel ends from this node");
  }
  auto tag = st.next_tag++;
  bool writer = w.flag;
  st.links.emplace(tag, iii_link{origin, w.link, false, writer, {}, {}});
  st.by_origin[key] = tag;
  self
    ->request(st.sink, caf::infinite, attach_atom_v, tag, std::move(w.id), std::move(w.text),
              writer, std::move(node))
    .then(
      [self, tag, writer](caf::actor& channel, std::uint64_t buffer, std::uint64_t max_bytes) {
        auto i = self->state.iii.links.find(tag);
        if (i == self->state.iii.links.end()) {
          // Closed meanwhile (by the channel or the peer): the channel is told.
          caf::anon_send(channel, channel_closed_atom_v, writer, false, std::uint16_t{1001},
                     std::string{"channel end gone"});
          return;
        }
        i->second.local = std::move(channel);
        auto ready = link_wire(iii_wire::ch_ready, i->second);
        ready.count = buffer;
        ready.bytes = max_bytes;
        post_iii(self, i->second.peer, std::move(ready));
        auto held = std::move(i->second.held);
        for (auto& h : held) {
          i = self->state.iii.links.find(tag);
          if (i == self->state.iii.links.end())
            break;
          deliver(self, i, h);
        }
      },
      [self, tag](caf::error&) {
        auto i = self->state.iii.links.find(tag);
        if (i == self->state.iii.links.end())
          return;
        refuse_open(self, i->second.peer, i->second.id, "channel not found");
        forget_link(self, i);
      });
}

/// What another gateway sent.
void on_wire(self_ptr self, const gateway_actor& origin, std::vector<iii_wire>& batch) {
  auto& st = self->state.iii;
  auto from = origin.address();
  for (auto& w : batch) {
    switch (w.kind) {
      case iii_wire::bind:
      case iii_wire::unbind:
      case iii_wire::bind_result: {
        // The registry judges what a peer asks (wire_problem and its caps).
        auto node = node_of(self, from);
        if (st.sink && !node.empty())
          caf::anon_send(st.sink, bind_atom_v, std::move(node), std::move(w));
        break;
      }
      case iii_wire::ch_open:
        if (!w.to_opener)
          on_open(self, origin, w);
        break;
      default: {
        auto i = find_link(self, from, w);
        if (i == st.links.end())
          break;
        if (i->second.local) {
          deliver(self, i, w);
          break;
        }
        if (i->second.held.size() >= max_held_per_link) {
          // More than an opener sends before the channel's buffer size
          // reaches it: not one of ours.
          refuse_open(self, origin, i->second.id, "channel protocol violated");
          forget_link(self, i);
          break;
        }
        i->second.held.push_back(std::move(w));
      }
    }
  }
}

/// A local end's record for the other side of its link.
void from_local(self_ptr self, std::uint64_t link, iii_wire w) {
  auto& st = self->state.iii;
  auto i = st.links.find(link);
  if (i == st.links.end())
    return;
  w.link = i->second.id;
  w.to_opener = !i->second.opener;
  auto peer = i->second.peer;
  if (w.kind == iii_wire::ch_close)
    forget_link(self, i);
  post_iii(self, peer, std::move(w));
}

} // namespace

void flush_iii(self_ptr self) {
  auto& st = self->state.iii;
  for (std::size_t i = 0; i < st.outboxes.size(); ++i) {
    if (st.outboxes[i].second.empty())
      continue;
    self->send(st.outboxes[i].first, gw_requests_atom_v, std::move(st.outboxes[i].second));
    st.outboxes[i].second.clear();
    st.outbox_bytes[i] = 0;
  }
}

void iii_peer_down(self_ptr self, const caf::actor_addr& gone, bool node_lost) {
  auto& st = self->state.iii;
  auto node = node_of(self, gone);
  for (std::size_t i = 0; i < st.outboxes.size();) {
    if (st.outboxes[i].first.address() == gone) {
      st.outboxes.erase(st.outboxes.begin() + static_cast<std::ptrdiff_t>(i));
      st.outbox_bytes.erase(st.outbox_bytes.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
  std::size_t closed = 0;
  for (auto i = st.links.begin(); i != st.links.end();) {
    auto next = std::next(i);
    if (i->second.peer.address() == gone) {
      auto& l = i->second;
      // The socket's node tells its socket whose channel is gone; the
      // channel's node tells the channel which of its ends is gone.
      auto whose = l.opener ? std::string{"channel"} : "channel " + end_name(l.writer);
      auto why = whose + "'s node " + (node.empty() ? std::string{"(unknown)"} : node)
                 + (node_lost ? " is unreachable" : " shut down");
      close_local(self, l, true, 1011, std::move(why));
      forget_link(self, i);
      ++closed;
    }
    i = next;
  }
  if (closed > 0)
    spdlog::warn("cluster: node {} gone: {} channel end(s) through it closed", node, closed);
}

void iii_subscribe(self_ptr self, caf::actor& sink) {
  self->state.iii.sink = std::move(sink);
}

void iii_bind(self_ptr self, const std::string& node, iii_wire& w) {
  if (auto p = self->state.peers.find(node); p != self->state.peers.end())
    post_iii(self, p->second, std::move(w));
}

void iii_open(self_ptr self, const std::string& node, std::string& channel_id, std::string& key,
              bool writer) {
  auto end = caf::actor_cast<caf::actor>(self->current_sender());
  if (!end)
    return;
  auto p = self->state.peers.find(node);
  if (p == self->state.peers.end()) {
    caf::anon_send(end, channel_closed_atom_v, true, std::uint16_t{1011},
               "channel's node " + node + " is unreachable");
    return;
  }
  auto id = end.id();
  self->state.iii.links[id] = iii_link{p->second, id, true, writer, end, {}};
  iii_wire w;
  w.kind = iii_wire::ch_open;
  w.link = id;
  w.flag = writer;
  w.id = std::move(channel_id);
  w.text = std::move(key);
  post_iii(self, p->second, std::move(w));
}

void iii_frame(self_ptr self, std::uint64_t link, bool binary, std::string& data) {
  iii_wire w;
  w.kind = iii_wire::ch_frame;
  w.flag = binary;
  w.text = std::move(data);
  from_local(self, link, std::move(w));
}

void iii_closed(self_ptr self, std::uint64_t link, bool clean, std::uint16_t code,
                std::string& reason) {
  iii_wire w;
  w.kind = iii_wire::ch_close;
  w.flag = clean;
  w.code = code;
  w.text = std::move(reason);
  from_local(self, link, std::move(w));
}

void iii_credit(self_ptr self, std::uint64_t link, std::uint64_t frames) {
  iii_wire w;
  w.kind = iii_wire::ch_credit;
  w.count = frames;
  from_local(self, link, std::move(w));
}

void iii_batch(self_ptr self, std::vector<iii_wire>& batch) {
  auto origin = caf::actor_cast<gateway_actor>(self->current_sender());
  if (origin)
    on_wire(self, origin, batch);
}

} // namespace actor_host::gateway_detail
