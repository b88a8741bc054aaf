#include "actors/cluster/cluster_port_guard.hpp"

#include "actors/cluster/basp_header_check.hpp"

#include "obs/metrics.hpp"

#include <caf/actor_system_config.hpp>
#include <caf/io/middleman.hpp>
#include <caf/io/network/default_multiplexer.hpp>
#include <caf/io/network/scribe_impl.hpp>
#include <spdlog/spdlog.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace actor_host {

namespace {

namespace net = caf::io::network;

void report(const std::string& addr, std::uint16_t port, const char* what) {
  obs::global().cluster_non_caf_peers.fetch_add(1, std::memory_order_relaxed);
  spdlog::warn("cluster: {}:{} {}; dropped (not a cluster node: only CAF nodes of this "
               "application pass the cluster port)",
               addr, port, what);
}

class guarded_scribe;

/// The accepted connections that have not sent their first header yet.
struct waiting_list {
  std::mutex mtx;
  std::unordered_map<guarded_scribe*, std::chrono::steady_clock::time_point> since;
};

/// A connection on the cluster port, accepted or dialed. BASP's broker reads
/// it a header, then that header's payload, at a time; this reads each header
/// before it does, and closes the connection when the payload announced is
/// over the cap (before CAF sizes a buffer for it). On an accepted connection
/// it also judges the first header: CAF 0.17's broker closes a connection
/// only on its own errors, so one that sends an invalid header, or never a
/// whole one, would stay open (a file descriptor per peer, for ever). This
/// closes both.
class guarded_scribe final : public net::scribe_impl {
public:
  /// `waiting` is null for the connections this node dials.
  guarded_scribe(net::default_multiplexer& mx, net::native_socket fd,
                 std::shared_ptr<waiting_list> waiting)
    : net::scribe_impl(mx, fd), mx_(mx), waiting_(std::move(waiting)) {
    peer_addr_ = addr();
    peer_port_ = port();
    if (!waiting_) {
      judged_ = true;
      return;
    }
    std::lock_guard guard{waiting_->mtx};
    waiting_->since.emplace(this, std::chrono::steady_clock::now());
  }

  ~guarded_scribe() override {
    if (!judged_)
      report(peer_addr_, peer_port_, "closed before sending a CAF handshake");
    judged();
  }

  bool consume(caf::execution_unit* ctx, const void* buf, size_t size) override {
    if (payload_due_) {
      // The payload of the header before (the broker asked for exactly it).
      payload_due_ = false;
      return net::scribe_impl::consume(ctx, buf, size);
    }
    auto v = judge_basp_header(buf, size, !judged_);
    using kind = basp_header_verdict::kind;
    if (!judged_) {
      judged();
      if (v.what == kind::not_caf) {
        drop("sent something other than a CAF handshake");
        return false; // read no more; the drop runs next in the event loop
      }
    }
    if (v.what == kind::oversized) {
      obs::global().cluster_oversized_messages.fetch_add(1, std::memory_order_relaxed);
      spdlog::warn("cluster: {}:{} announced a {}-byte {} (at most {} bytes); connection closed",
                   peer_addr_, peer_port_, v.payload_len,
                   v.handshake ? "handshake" : "BASP message", v.cap);
      close_now();
      return false;
    }
    if (v.what == kind::ok)
      payload_due_ = v.payload_len > 0;
    return net::scribe_impl::consume(ctx, buf, size);
  }

  /// On the multiplexer's thread.
  void drop(const char* why) {
    judged();
    report(peer_addr_, peer_port_, why);
    close_now();
  }

private:
  void judged() {
    judged_ = true;
    if (!waiting_)
      return;
    std::lock_guard guard{waiting_->mtx};
    waiting_->since.erase(this);
  }

  void close_now() {
    caf::intrusive_ptr<guarded_scribe> self{this};
    mx_.post([self] {
      // Detached from BASP's broker (which forgets the connection), and
      // closed both ways: a peer that keeps its side open (or never sends
      // another byte) cannot keep the socket.
      net::shutdown_both(self->stream_.fd());
      self->io_failure(&self->mx_, net::operation::read);
    });
  }

  net::default_multiplexer& mx_;
  std::shared_ptr<waiting_list> waiting_;
  bool judged_ = false;
  bool payload_due_ = false;
  std::string peer_addr_;
  std::uint16_t peer_port_ = 0;
};

// Dials of this node also make scribes, from new_tcp_scribe on the
// multiplexer's thread; only the others come from an acceptor.
thread_local bool dialing = false;

class guarded_multiplexer : public net::default_multiplexer {
public:
  using net::default_multiplexer::default_multiplexer;

  caf::io::scribe_ptr new_scribe(net::native_socket fd) override {
    if (dialing)
      return caf::make_counted<guarded_scribe>(*this, fd, nullptr);
    return caf::make_counted<guarded_scribe>(*this, fd, waiting_);
  }

  caf::expected<caf::io::scribe_ptr> new_tcp_scribe(const std::string& host,
                                                    uint16_t port) override {
    struct mark {
      mark() { dialing = true; }
      ~mark() { dialing = false; }
    } dial;
    return net::default_multiplexer::new_tcp_scribe(host, port);
  }

  /// On the multiplexer's thread, where scribes are made and dropped.
  void drop_silent(caf::timespan max_wait) {
    auto now = std::chrono::steady_clock::now();
    std::vector<caf::intrusive_ptr<guarded_scribe>> late;
    {
      std::lock_guard guard{waiting_->mtx};
      for (auto& [s, since] : waiting_->since)
        if (now - since > max_wait)
          late.emplace_back(s);
    }
    for (auto& s : late)
      s->drop("sent no CAF handshake in time");
  }

private:
  std::shared_ptr<waiting_list> waiting_ = std::make_shared<waiting_list>();
};

} // namespace

void load_guarded_middleman(caf::actor_system_config& cfg) {
  cfg.load<caf::io::middleman, guarded_multiplexer>();
}

void drop_silent_cluster_peers(caf::actor_system& sys, caf::timespan max_wait) {
  if (!sys.has_middleman())
    return;
  auto* mx = dynamic_cast<guarded_multiplexer*>(&sys.middleman().backend());
  if (mx == nullptr)
    return;
  mx->dispatch([mx, max_wait] { mx->drop_silent(max_wait); });
}

} // namespace actor_host
