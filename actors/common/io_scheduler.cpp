#include "actors/common/io_scheduler.hpp"

#include "actors/common/quiet_coordinator.hpp"
#include "net/handler_tail.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/execution_unit.hpp>
#include <caf/policy/work_sharing.hpp>
#include <caf/resumable.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <atomic>
#include <thread>
#include <utility>
#include <vector>

namespace actor_host {

namespace {

// Messages an actor may handle in one turn on an I/O thread before it is
// posted again behind the socket handlers already waiting.
constexpr std::size_t turn_messages = 64;

// Actors one posted handler may run: those the first made runnable, and
// theirs, in order (a call's hops from its caller's actor to the runtime's
// connection and its pending request cost one post, not one each). The
// rest are posted again.
constexpr std::size_t turns_per_post = 64;

class io_coordinator;

/// What an actor resumed on an I/O thread sees as its worker: the actors it
/// makes runnable are posted as well (from the I/O thread itself, that is
/// asio's thread-private queue: no lock, no wake-up).
class io_unit final : public caf::execution_unit {
public:
  explicit io_unit(io_coordinator* owner);
  void exec_later(caf::resumable* job) override;

private:
  io_coordinator* owner_;
};

class io_coordinator final : public quiet_coordinator<caf::policy::work_sharing> {
public:
  using super = quiet_coordinator<caf::policy::work_sharing>;

  explicit io_coordinator(caf::actor_system& sys) : super(sys), unit_(this) {}

  void enqueue(caf::resumable* job) override {
    // Made runnable by an actor that runs on this thread now: it runs next
    // in the same handler.
    if (running_ != nullptr && running_owner_ == this) {
      running_->push_back(job);
      return;
    }
    // Made runnable by a socket's handler (or by what a burst's end runs):
    // it runs at that handler's end, with no post and no poll between.
    if (net::tail_open() && ioc_.load() != nullptr) {
      defer(job);
      return;
    }
    post(job);
  }

  void attach(boost::asio::io_context& ioc) {
    ioc_.store(&ioc);
  }

  void detach() {
    ioc_.store(nullptr);
    while (posting_.load() != 0)
      std::this_thread::yield();
  }

  bool post_behind_ready_reads(std::function<void()>& fn) {
    auto* ioc = ioc_.load();
    if (ioc == nullptr || !net::tail_open() || net::tail_writes_inline()
        || !ioc->get_executor().running_in_this_thread())
      return false;
    boost::asio::post(*ioc, once{std::move(fn)});
    return true;
  }

  std::uint64_t turns() const {
    return turns_.load(std::memory_order_relaxed);
  }

  /// An actor dropped unrun (its io_context stopped): CAF's worker takes it.
  void fall_back(caf::resumable* job) {
    super::enqueue(job);
  }

private:
  /// One actor's turn, posted to the io_context. Move-only: if asio
  /// destroys it unrun (the context stopped or went away) the actor is
  /// handed to CAF's worker, never lost.
  struct turn {
    io_coordinator* owner;
    caf::resumable* job;

    turn(io_coordinator* o, caf::resumable* j) : owner(o), job(j) {}
    turn(turn&& other) noexcept : owner(other.owner), job(std::exchange(other.job, nullptr)) {}
    turn(const turn&) = delete;
    turn& operator=(const turn&) = delete;
    turn& operator=(turn&&) = delete;
    ~turn() {
      if (job != nullptr)
        owner->fall_back(job);
    }
    void operator()() {
      // The writes the burst's actors queue go when it is over
      // (handler_tail.hpp): one per socket, no post each.
      net::tail_scope tail{net::tail_scope::bursting};
      owner->run(std::exchange(job, nullptr));
    }
  };

  /// A function posted by post_behind_ready_reads: run as a burst, or as it
  /// is destroyed if asio drops it unrun.
  struct once {
    std::function<void()> fn;

    explicit once(std::function<void()> f) : fn(std::move(f)) {}
    once(once&& other) noexcept : fn(std::exchange(other.fn, nullptr)) {}
    once(const once&) = delete;
    once& operator=(const once&) = delete;
    once& operator=(once&&) = delete;
    ~once() {
      if (fn)
        fn();
    }
    void operator()() {
      net::tail_scope tail{net::tail_scope::bursting};
      std::exchange(fn, nullptr)();
    }
  };

  /// Runs at the end of the handler this thread is in, with the others
  /// deferred there, as one burst.
  void defer(caf::resumable* job) {
    if (tail_jobs_.empty()) {
      tail_owner_ = this;
      net::defer_to_tail([this] {
        std::vector<caf::resumable*> jobs;
        jobs.swap(tail_jobs_);
        run(jobs.data(), jobs.size());
        jobs.clear();
        if (tail_jobs_.empty())
          tail_jobs_.swap(jobs); // keeps the storage
      });
    } else if (tail_owner_ != this) {
      return post(job); // another actor system's burst (tests run several)
    }
    tail_jobs_.push_back(job);
  }

  void run(caf::resumable* first) {
    run(&first, 1);
  }

  void run(caf::resumable* const* jobs, std::size_t n) {
    // Not reentrant: an actor's turn runs no asio handler, and what a
    // handler's end runs (handler_tail.hpp) runs after the burst.
    static thread_local std::vector<caf::resumable*> runnable;
    runnable.assign(jobs, jobs + n);
    running_ = &runnable;
    running_owner_ = this;
    std::size_t next = 0;
    for (; next < runnable.size() && next < turns_per_post; ++next)
      resume(runnable[next]);
    running_ = nullptr;
    running_owner_ = nullptr;
    for (; next < runnable.size(); ++next)
      post(runnable[next]);
  }

  void post(caf::resumable* job) {
    // Counted while posting so that detach() can wait for posts that read
    // the context before it was cleared (both sides sequentially
    // consistent: a post either sees null or is waited for).
    posting_.fetch_add(1);
    if (auto* ioc = ioc_.load()) {
      boost::asio::post(*ioc, turn{this, job});
      posting_.fetch_sub(1);
      return;
    }
    posting_.fetch_sub(1);
    super::enqueue(job);
  }

  void resume(caf::resumable* job) {
    turns_.fetch_add(1, std::memory_order_relaxed);
    switch (job->resume(&unit_, turn_messages)) {
      case caf::resumable::resume_later:
        // Keeps its reference; behind the socket handlers waiting, so one
        // busy actor does not hold them up.
        post(job);
        break;
      case caf::resumable::done:
      case caf::resumable::awaiting_message:
        // Enqueued again by its next message, if any (as CAF's worker does).
        caf::intrusive_ptr_release(job);
        break;
      case caf::resumable::shutdown_execution_unit:
        break; // only CAF's own shutdown job says so, and it goes to its workers
    }
  }

  io_unit unit_;
  // The actors to run in the handler this thread is in, if it is one of
  // ours (thread-local: with several I/O threads each has its own).
  static thread_local std::vector<caf::resumable*>* running_;
  static thread_local io_coordinator* running_owner_;
  // Made runnable while a handler of this thread was open (defer).
  static thread_local std::vector<caf::resumable*> tail_jobs_;
  static thread_local io_coordinator* tail_owner_;
  std::atomic<boost::asio::io_context*> ioc_{nullptr};
  std::atomic<int> posting_{0};
  std::atomic<std::uint64_t> turns_{0};
};

thread_local std::vector<caf::resumable*>* io_coordinator::running_ = nullptr;
thread_local io_coordinator* io_coordinator::running_owner_ = nullptr;
thread_local std::vector<caf::resumable*> io_coordinator::tail_jobs_;
thread_local io_coordinator* io_coordinator::tail_owner_ = nullptr;

io_unit::io_unit(io_coordinator* owner) : caf::execution_unit(&owner->system()), owner_(owner) {}

void io_unit::exec_later(caf::resumable* job) {
  owner_->enqueue(job);
}

io_coordinator* io_coordinator_of(caf::actor_system& sys) {
  return dynamic_cast<io_coordinator*>(&sys.scheduler());
}

} // namespace

void use_io_scheduler(caf::actor_system_config& cfg) {
  cfg.module_factories.push_back(
      [](caf::actor_system& sys) -> caf::actor_system::module* { return new io_coordinator(sys); });
}

void attach_io_scheduler(caf::actor_system& sys, boost::asio::io_context& ioc) {
  if (auto* c = io_coordinator_of(sys))
    c->attach(ioc);
}

void detach_io_scheduler(caf::actor_system& sys) {
  if (auto* c = io_coordinator_of(sys))
    c->detach();
}

bool post_behind_ready_reads(caf::actor_system& sys, std::function<void()> fn) {
  auto* c = io_coordinator_of(sys);
  return c != nullptr && c->post_behind_ready_reads(fn);
}

std::uint64_t io_scheduler_turns(caf::actor_system& sys) {
  auto* c = io_coordinator_of(sys);
  return c != nullptr ? c->turns() : 0;
}

} // namespace actor_host
