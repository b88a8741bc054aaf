#include "net/detail/frame_queue.hpp"

#include <iterator>

namespace actor_host::net::detail {

namespace {

void release_if_large(std::vector<out_frame>& v) {
  if (v.empty() && v.capacity() > frame_queue::kept_slots)
    std::vector<out_frame>{}.swap(v);
}

} // namespace

frame_queue::~frame_queue() {
  gauge_.fetch_sub(static_cast<std::int64_t>(bytes_), std::memory_order_relaxed);
}

frame_queue::pushed frame_queue::push(out_frame f, std::size_t& held) {
  std::vector<out_frame> dropped; // freed outside the lock
  std::lock_guard<std::mutex> g{in_mtx_};
  if (in_closed_)
    return pushed::closed;
  const bool first = in_.empty();
  if (!first && in_bytes_ + f.payload.size() > max_bytes_) {
    in_closed_ = true;
    held = in_bytes_ + f.payload.size();
    in_bytes_ = 0;
    dropped.swap(in_);
    return pushed::overflow;
  }
  in_bytes_ += f.payload.size();
  in_.push_back(std::move(f));
  return first ? pushed::first : pushed::joined;
}

void frame_queue::close_inbox() {
  std::lock_guard<std::mutex> g{in_mtx_};
  in_closed_ = true;
}

std::size_t frame_queue::inbox_bytes() {
  std::lock_guard<std::mutex> g{in_mtx_};
  return in_bytes_;
}

void frame_queue::push_now(out_frame f) {
  add_bytes(static_cast<std::int64_t>(f.payload.size()));
  outq_.push_back(std::move(f));
}

void frame_queue::take_inbox(bool discard) {
  // Nothing queued (the usual case): the inbox becomes the queue and the
  // queue's empty storage the inbox. Otherwise the batch comes through the
  // spare vector. Either way no allocation per batch.
  const bool direct = outq_.empty();
  auto& batch = direct ? outq_ : spare_;
  {
    std::lock_guard<std::mutex> g{in_mtx_};
    in_.swap(batch);
    in_bytes_ = 0;
  }
  if (discard) {
    batch.clear();
    return;
  }
  std::size_t n = 0;
  for (auto& f : batch)
    n += f.payload.size();
  add_bytes(static_cast<std::int64_t>(n));
  if (!direct) {
    outq_.insert(outq_.end(), std::make_move_iterator(spare_.begin()),
                 std::make_move_iterator(spare_.end()));
    spare_.clear();
    release_if_large(spare_);
  }
}

// The written payloads go now; the slots are cleared when the queue drains
// (a backlog's storage given back) and compacted once the written ones are
// half of them (each slot moves O(1) times).
void frame_queue::pop_written(std::size_t frames, std::size_t payload_bytes) {
  for (std::size_t i = head_; i < head_ + frames; ++i)
    std::string{}.swap(outq_[i].payload);
  head_ += frames;
  add_bytes(-static_cast<std::int64_t>(payload_bytes));
  if (head_ == outq_.size()) {
    outq_.clear();
    release_if_large(outq_);
    head_ = 0;
  } else if (2 * head_ >= outq_.size()) {
    outq_.erase(outq_.begin(), outq_.begin() + static_cast<std::ptrdiff_t>(head_));
    head_ = 0;
  }
}

void frame_queue::drop() {
  outq_.clear();
  release_if_large(outq_);
  head_ = 0;
  add_bytes(-static_cast<std::int64_t>(bytes_));
}

void frame_queue::drop_behind(std::size_t in_flight_frames, std::size_t in_flight_bytes) {
  outq_.erase(begin() + static_cast<std::ptrdiff_t>(in_flight_frames), outq_.end());
  add_bytes(-static_cast<std::int64_t>(bytes_ - in_flight_bytes));
}

// bytes_ and the listener-wide gauge move together.
void frame_queue::add_bytes(std::int64_t delta) {
  bytes_ = static_cast<std::size_t>(static_cast<std::int64_t>(bytes_) + delta);
  gauge_.fetch_add(delta, std::memory_order_relaxed);
}

} // namespace actor_host::net::detail
