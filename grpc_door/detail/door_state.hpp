#pragma once

// Private to grpc_door/*.cpp: includes gRPC's headers.

#include "grpc_door/catalog.hpp"
#include "grpc_door/detail/cq_reactor.hpp"
#include "grpc_door/detail/cq_wakeups.hpp"
#include "grpc_door/server.hpp"

#include <boost/intrusive/list.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>

namespace actor_host::grpc_door::detail {

using generic_reactor = cq_reactor;

class health_watch;

/// An open call of a catalog method, as the shutdown sees it.
class open_action {
public:
  virtual ~open_action() = default;
  /// Ends the call with `status` and cancels its run (any thread; a no-op
  /// once the call is over).
  virtual void abort(grpc::Status status) = 0;
};

/// A call waiting for its first request message (door_state's list). It
/// joins when it starts and leaves when the message comes or it ends, all
/// on the door's thread, so the list holds only calls that still wait.
class first_message_waiter
  : public boost::intrusive::list_base_hook<boost::intrusive::link_mode<boost::intrusive::safe_link>> {
public:
  std::chrono::steady_clock::time_point due;
  /// Ends the call DEADLINE_EXCEEDED (the door's thread).
  virtual void first_message_overdue() = 0;

protected:
  ~first_message_waiter() = default;
};

/// What the listener's reactors share: the options, the current catalog and
/// the Health.Watch streams to tell when it changes.
struct door_state {
  server_options opts;
  std::atomic<std::size_t> open_calls{0};
  std::atomic<bool> serving{true};
  /// Reactors with operations to start on the door's thread.
  cq_wakeups wakeups;

  /// Calls of catalog methods open now: shutdown() lets them finish within
  /// its grace (reflection and health streams are cancelled at once).
  void action_started(const std::shared_ptr<open_action>& a) {
    std::lock_guard<std::mutex> guard{calls_mtx_};
    actions_.insert(a);
  }
  void action_ended(const std::shared_ptr<open_action>& a) {
    std::lock_guard<std::mutex> guard{calls_mtx_};
    actions_.erase(a);
    if (actions_.empty())
      calls_cv_.notify_all();
  }
  /// Ends every open call with `status` (their Finish follows on the
  /// door's thread).
  void abort_actions(const grpc::Status& status) {
    std::set<std::shared_ptr<open_action>> open;
    {
      std::lock_guard<std::mutex> guard{calls_mtx_};
      open = actions_;
    }
    for (auto& a : open)
      a->abort(status);
  }
  /// False when calls were still open at `deadline`.
  bool wait_for_actions(std::chrono::steady_clock::time_point deadline) {
    std::unique_lock<std::mutex> lock{calls_mtx_};
    return calls_cv_.wait_until(lock, deadline, [this] { return actions_.empty(); });
  }

  /// Calls open from one peer address (counted_reactor).
  std::size_t peer_calls(const std::string& ip) const {
    std::lock_guard<std::mutex> guard{peers_mtx_};
    auto i = open_by_peer_.find(ip);
    return i == open_by_peer_.end() ? 0 : i->second;
  }
  void peer_opened(const std::string& ip) {
    std::lock_guard<std::mutex> guard{peers_mtx_};
    ++open_by_peer_[ip];
  }
  void peer_closed(const std::string& ip) {
    std::lock_guard<std::mutex> guard{peers_mtx_};
    if (auto i = open_by_peer_.find(ip); i != open_by_peer_.end() && --i->second == 0)
      open_by_peer_.erase(i);
  }

  /// A call waits for its first request message until now + the timeout
  /// (the door's thread; one timeout for all, so the list is in order). It
  /// leaves the list (stop_waiting) when the message comes or it ends.
  void await_first_message(first_message_waiter& w) {
    if (opts.first_message_timeout.count() <= 0)
      return;
    w.due = std::chrono::steady_clock::now() + opts.first_message_timeout;
    awaiting_first_.push_back(w);
  }
  /// The message came, or the call ends (the door's thread).
  void stop_waiting(first_message_waiter& w) {
    if (w.is_linked())
      awaiting_first_.erase(awaiting_first_.iterator_to(w));
  }
  /// Ends the calls whose first message is overdue (the door's thread).
  void expire_first_messages(std::chrono::steady_clock::time_point now) {
    while (!awaiting_first_.empty() && awaiting_first_.front().due <= now) {
      auto& w = awaiting_first_.front();
      awaiting_first_.pop_front();
      w.first_message_overdue();
    }
  }

  std::shared_ptr<const catalog> current() const {
    std::lock_guard<std::mutex> guard{mtx_};
    return catalog_;
  }
  /// Swaps the catalog; returns the watches to notify (outside the lock).
  std::set<std::shared_ptr<health_watch>> publish(std::shared_ptr<const catalog> c) {
    std::lock_guard<std::mutex> guard{mtx_};
    catalog_ = std::move(c);
    return watches_;
  }
  void add_watch(std::shared_ptr<health_watch> w) {
    std::lock_guard<std::mutex> guard{mtx_};
    watches_.insert(std::move(w));
  }
  void remove_watch(const std::shared_ptr<health_watch>& w) {
    std::lock_guard<std::mutex> guard{mtx_};
    watches_.erase(w);
  }
  std::set<std::shared_ptr<health_watch>> watches() const {
    std::lock_guard<std::mutex> guard{mtx_};
    return watches_;
  }

private:
  mutable std::mutex peers_mtx_;
  std::unordered_map<std::string, std::size_t> open_by_peer_;
  boost::intrusive::list<first_message_waiter, boost::intrusive::constant_time_size<false>>
    awaiting_first_; // the door's thread only
  std::mutex calls_mtx_;
  std::condition_variable calls_cv_;
  std::set<std::shared_ptr<open_action>> actions_;
  mutable std::mutex mtx_;
  std::shared_ptr<const catalog> catalog_;
  std::set<std::shared_ptr<health_watch>> watches_;
};

using door_ptr = std::shared_ptr<door_state>;

/// Every reactor of the listener counts as an open call while it lives, on
/// the listener and for its peer's address (server_options::max_calls,
/// max_calls_per_peer).
class counted_reactor : public generic_reactor {
public:
  counted_reactor(door_ptr door, std::unique_ptr<cq_call> call)
    : generic_reactor(std::move(call)), door_(std::move(door)) {
    ++door_->open_calls;
    door_->peer_opened(peer_ip());
  }
  ~counted_reactor() override {
    // The call (and its IP) goes with the base, after this.
    door_->peer_closed(peer_ip());
    --door_->open_calls;
  }

protected:
  door_ptr door_;
};

/// The reactors of the generic service, by method (server.cpp picks). Each
/// serves `call` and deletes itself when it is over.
void action_reactor(door_ptr door, std::shared_ptr<const catalog> cat, const catalog_method* m,
                    std::unique_ptr<cq_call> call);
void reflection_reactor(door_ptr door, std::unique_ptr<cq_call> call);
void health_check_reactor(door_ptr door, std::unique_ptr<cq_call> call);
void health_watch_reactor(door_ptr door, std::unique_ptr<cq_call> call);
/// Every health watch hears the new state (catalog or serving changed).
void notify_health_watches(const door_ptr& door);

/// A reactor that only finishes with `status` (unknown method, refusals).
void refusal(std::unique_ptr<cq_call> call, grpc::Status status);

/// Whether the well-known services (reflection, health) name `service`.
bool is_builtin_service(std::string_view service);

/// Serializes `msg` into a ByteBuffer / parses one; false when it does not
/// parse (or is larger than max bytes).
/// One message's wire bytes as a gRPC buffer.
grpc::ByteBuffer wire_buffer(std::string_view bytes);
bool to_buffer(const google::protobuf::Message& msg, grpc::ByteBuffer& out);
bool from_buffer(const grpc::ByteBuffer& in, google::protobuf::Message& msg);

/// A client metadata value of the call, copied; none when absent
/// (reactor_support.cpp).
std::optional<std::string> metadata(grpc::GenericServerContext* ctx, std::string_view key);

} // namespace actor_host::grpc_door::detail
