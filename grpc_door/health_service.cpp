// grpc.health.v1.Health: "" is the listener (SERVING until shutdown), every
// catalog and well-known service is SERVING while it exists; an unknown
// service is NOT_FOUND for Check and SERVICE_UNKNOWN for Watch (which keeps
// watching: a runtime may bring it).

#include "grpc_door/detail/builtin_files.hpp"
#include "grpc_door/detail/door_state.hpp"

#include "grpc/health/v1/health.pb.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <optional>

namespace actor_host::grpc_door::detail {

namespace {

namespace health = grpc::health::v1;
using serving_status = health::HealthCheckResponse::ServingStatus;

constexpr std::size_t max_service_name = 1024;

/// nullopt: unknown service.
std::optional<serving_status> status_of(const door_state& door, const std::string& service) {
  auto up = door.serving.load() ? health::HealthCheckResponse::SERVING
                                : health::HealthCheckResponse::NOT_SERVING;
  if (service.empty() || is_builtin_service(service))
    return up;
  if (auto cat = door.current()) {
    auto names = cat->service_names();
    if (std::binary_search(names.begin(), names.end(), service))
      return up;
  }
  return std::nullopt;
}

class health_check final : public counted_reactor {
public:
  health_check(door_ptr door, std::unique_ptr<cq_call> call)
    : counted_reactor(std::move(door), std::move(call)) {
    StartRead(&in_);
  }
  void OnReadDone(bool ok) override {
    health::HealthCheckRequest req;
    if (!ok || !from_buffer(in_, req) || req.service().size() > max_service_name)
      return Finish({grpc::StatusCode::INVALID_ARGUMENT, "expected one HealthCheckRequest"});
    auto s = status_of(*door_, req.service());
    if (!s)
      return Finish({grpc::StatusCode::NOT_FOUND, "unknown service: " + req.service()});
    health::HealthCheckResponse res;
    res.set_status(*s);
    to_buffer(res, out_);
    StartWriteAndFinish(&out_, {}, grpc::Status::OK);
  }
  void OnDone() override {
    delete this;
  }

private:
  grpc::ByteBuffer in_;
  grpc::ByteBuffer out_;
};

} // namespace

/// One Health.Watch stream: its last status sent, and the next to send
/// when the catalog or the listener's state changes (one write in flight).
class health_watch : public std::enable_shared_from_this<health_watch> {
public:
  class reactor;
  std::mutex mtx;
  reactor* r = nullptr; // null once the stream is over
};

class health_watch::reactor final : public counted_reactor {
public:
  reactor(door_ptr door, std::unique_ptr<cq_call> call)
    : counted_reactor(std::move(door), std::move(call)),
      watch_(std::make_shared<health_watch>()) {
    watch_->r = this;
    StartRead(&in_);
  }

  void OnReadDone(bool ok) override {
    health::HealthCheckRequest req;
    if (!ok || !from_buffer(in_, req) || req.service().size() > max_service_name)
      return Finish({grpc::StatusCode::INVALID_ARGUMENT, "expected one HealthCheckRequest"});
    {
      std::lock_guard<std::mutex> guard{watch_->mtx};
      service_ = req.service();
      watching_ = true;
    }
    door_->add_watch(watch_);
    changed();
  }

  /// Sends the current status if it differs from the last one sent.
  void changed_locked(bool& write) {
    if (!watching_ || writing_ || finished_)
      return;
    auto s = status_of(*door_, service_).value_or(health::HealthCheckResponse::SERVICE_UNKNOWN);
    if (sent_ && *sent_ == s)
      return;
    sent_ = s;
    health::HealthCheckResponse res;
    res.set_status(s);
    to_buffer(res, out_);
    writing_ = write = true;
  }

  void changed() {
    bool write = false;
    {
      std::lock_guard<std::mutex> guard{watch_->mtx};
      changed_locked(write);
    }
    if (write)
      StartWrite(&out_);
  }

  void start_write() {
    StartWrite(&out_);
  }

  void OnWriteDone(bool ok) override {
    bool finish = false;
    {
      std::lock_guard<std::mutex> guard{watch_->mtx};
      writing_ = false;
      if (cancelled_ || !ok) {
        cancelled_ = true;
        if (finished_)
          return;
        finished_ = finish = true;
      }
    }
    if (finish)
      return Finish({grpc::StatusCode::CANCELLED, "the watch was cancelled"});
    changed(); // a change may have come while writing
  }

  // Finish waits for a write in flight (OnWriteDone finishes then).
  void OnCancel() override {
    {
      std::lock_guard<std::mutex> guard{watch_->mtx};
      cancelled_ = true;
      if (writing_ || finished_)
        return;
      finished_ = true;
    }
    Finish({grpc::StatusCode::CANCELLED, "the watch was cancelled"});
  }

  void OnDone() override {
    door_->remove_watch(watch_);
    {
      std::lock_guard<std::mutex> guard{watch_->mtx};
      watch_->r = nullptr;
    }
    delete this;
  }

private:
  std::shared_ptr<health_watch> watch_;
  grpc::ByteBuffer in_;
  grpc::ByteBuffer out_;
  std::string service_;
  bool watching_ = false;
  bool writing_ = false;
  bool finished_ = false;
  bool cancelled_ = false;
  std::optional<serving_status> sent_;
};

void notify_health_watches(const door_ptr& door) {
  for (auto& w : door->watches()) {
    health_watch::reactor* r = nullptr;
    bool write = false;
    {
      std::lock_guard<std::mutex> guard{w->mtx};
      if (!w->r)
        continue;
      r = w->r;
      r->changed_locked(write);
    }
    // A write decided under the lock keeps the reactor alive until it completes.
    if (write)
      r->start_write();
  }
}

void health_check_reactor(door_ptr door, std::unique_ptr<cq_call> call) {
  new health_check(std::move(door), std::move(call));
}

void health_watch_reactor(door_ptr door, std::unique_ptr<cq_call> call) {
  new health_watch::reactor(std::move(door), std::move(call));
}

} // namespace actor_host::grpc_door::detail
