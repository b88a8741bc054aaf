#pragma once

#include <caf/abstract_actor.hpp>
#include <caf/actor_config.hpp>
#include <caf/actor_system.hpp>
#include <caf/default_attachable.hpp>
#include <caf/execution_unit.hpp>
#include <caf/exit_reason.hpp>
#include <caf/intrusive/lifo_inbox.hpp>
#include <caf/mailbox_element.hpp>
#include <caf/make_actor.hpp>
#include <caf/monitorable_actor.hpp>
#include <caf/resumable.hpp>
#include <caf/policy/normal_messages.hpp>
#include <caf/scheduler/abstract_coordinator.hpp>

#include <cstddef>
#include <utility>

namespace actor_host {

/// An actor for kinds with very many short-lived instances (a pending
/// request per call in flight): CAF's monitorable_actor (address, monitors,
/// links, the running count) with a mailbox of its own, instead of CAF's
/// scheduled_actor, which is ~960 bytes (four mailbox queues, five handler
/// functions, response and stream tables) that such an actor never uses.
///
/// It runs on the system's coordinator like any actor (io_scheduler's I/O
/// thread, CAF's worker, the deterministic one in tests): a message to an
/// idle one schedules it, a turn handles at most the coordinator's
/// throughput. `Derived` has `void handle(caf::mailbox_element&)` for each
/// message and `void on_end(const caf::error&)`, called once as it ends,
/// before its monitors hear of it. It ends by `quit(reason)` from a handler,
/// by an exit message that is not `normal` (a kill, a shutdown), or when no
/// one can reach it any more. Messages after its end are dropped; it takes
/// no requests (the asker gets CAF's bounce, an error), sets no timeouts and
/// has no behavior stack. Its mailbox has no cap of its own, like CAF's:
/// what reaches a pending request is bounded where it comes from (the read
/// windows of its runtime's socket and of its caller's).
template <class Derived>
class lean_actor : public caf::monitorable_actor, public caf::resumable {
public:
  explicit lean_actor(caf::actor_config& cfg) : caf::monitorable_actor(cfg) {
    // Idle until its first message, which schedules it.
    inbox_.try_block();
  }

  ~lean_actor() override {
    drop_queued();
  }

  // -- the actor's own API (from its handlers) -----------------------------------

  /// Ends the actor after the message being handled.
  void quit(caf::error reason = caf::exit_reason::normal) {
    if (!ending_) {
      ending_ = true;
      end_reason_ = std::move(reason);
    }
  }

  template <class Handle>
  void monitor(const Handle& whom) {
    if (auto* other = caf::actor_cast<caf::abstract_actor*>(whom))
      other->attach(caf::default_attachable::make_monitor(other->address(), address()));
  }

  void demonitor(const caf::actor_addr& whom) {
    if (auto other = caf::actor_cast<caf::strong_actor_ptr>(whom)) {
      caf::default_attachable::observe_token tk{address(), caf::default_attachable::monitor};
      other->get()->detach(tk);
    }
  }

  // -- abstract_actor --------------------------------------------------------------

  void enqueue(caf::mailbox_element_ptr what, caf::execution_unit* host) override {
    // A request after the end is answered with an error, as CAF does (one
    // that races the end is dropped like any message after it).
    if (what->mid.is_request() && inbox_.closed()) {
      bounce(what, caf::sec::request_receiver_down);
      return;
    }
    if (inbox_.push_front(what.release()) == caf::intrusive::inbox_result::unblocked_reader) {
      caf::intrusive_ptr_add_ref(ctrl());
      if (host != nullptr)
        host->exec_later(this);
      else
        home_system().scheduler().enqueue(this);
    }
  }

  const char* name() const override {
    return Derived::kind_name;
  }

  // -- resumable -------------------------------------------------------------------

  subtype_t subtype() const override {
    return resumable::unspecified;
  }

  void intrusive_ptr_add_ref_impl() override {
    caf::intrusive_ptr_add_ref(ctrl());
  }

  void intrusive_ptr_release_impl() override {
    caf::intrusive_ptr_release(ctrl());
  }

  resume_result resume(caf::execution_unit* ctx, std::size_t max_throughput) override {
    for (std::size_t handled = 0; handled < max_throughput; ++handled) {
      auto* next = take_next();
      if (next == nullptr) {
        if (inbox_.try_block())
          return resumable::awaiting_message;
        continue; // a message came in between
      }
      caf::mailbox_element_ptr element{next};
      // It takes no requests: the asker gets an error rather than silence.
      if (element->mid.is_request())
        bounce(element, caf::sec::unexpected_message);
      else
        dispatch(*element);
      if (ending_) {
        end_now(ctx);
        return resumable::done;
      }
    }
    return resumable::resume_later;
  }

protected:
  // Destroyed unreachable, never having ended (nobody holds it, no message
  // will come): it still ends, so that its monitors and the running count
  // hear of it.
  void on_destroy() override {
    if (!cleaned_up_) {
      ending_ = true;
      end_reason_ = caf::exit_reason::unreachable;
      end_now(nullptr);
    }
    caf::monitorable_actor::on_destroy();
  }

private:
  using inbox_type = caf::intrusive::lifo_inbox<caf::policy::normal_messages>;

  void dispatch(caf::mailbox_element& element) {
    auto& content = element.content();
    if (content.match_elements<caf::exit_msg>()) {
      auto& em = content.get_mutable_as<caf::exit_msg>(0);
      if (em.reason != caf::exit_reason::normal)
        quit(std::move(em.reason));
      return;
    }
    static_cast<Derived*>(this)->handle(element);
  }

  // The oldest message not yet handled: the inbox holds the newest first, so
  // what it holds is taken whole and reversed.
  caf::mailbox_element* take_next() {
    if (ready_ == nullptr) {
      auto* node = inbox_.take_head();
      while (node != nullptr) {
        auto* later = static_cast<caf::mailbox_element*>(node->next);
        node->next = ready_;
        ready_ = node;
        node = later;
      }
    }
    auto* out = ready_;
    if (out != nullptr)
      ready_ = static_cast<caf::mailbox_element*>(out->next);
    return out;
  }

  void drop_queued() {
    while (ready_ != nullptr) {
      auto* later = static_cast<caf::mailbox_element*>(ready_->next);
      delete ready_;
      ready_ = later;
    }
    if (!inbox_.closed())
      inbox_.close();
  }

  void end_now(caf::execution_unit* ctx) {
    cleaned_up_ = true;
    drop_queued();
    static_cast<Derived*>(this)->on_end(end_reason_);
    cleanup(std::move(end_reason_), ctx);
    unregister_from_system();
  }

  inbox_type inbox_;
  caf::mailbox_element* ready_ = nullptr; // taken from the inbox, oldest first
  caf::error end_reason_;
  bool ending_ = false;
  bool cleaned_up_ = false;
};

/// Makes a lean_actor `T` (constructed from `(caf::actor_config&, xs...)`)
/// and counts it among the system's running actors (what
/// await_all_actors_done waits for), as spawning does; it is idle until its
/// first message.
template <class T, class Handle, class... Ts>
Handle spawn_lean(caf::actor_system& sys, Ts&&... xs) {
  caf::actor_config cfg;
  auto ptr = caf::make_actor<T, caf::strong_actor_ptr>(sys.next_actor_id(), sys.node(), &sys, cfg,
                                                       std::forward<Ts>(xs)...);
  static_cast<T*>(caf::actor_cast<caf::abstract_actor*>(ptr))->register_at_system();
  return caf::actor_cast<Handle>(std::move(ptr));
}

} // namespace actor_host
