#pragma once

// Private to grpc_door/: the responses an action call has yet to write
// (action_reactor.cpp).

#include <boost/container/deque.hpp>
#include <grpcpp/support/byte_buffer.h>

#include <cstddef>
#include <optional>

namespace actor_host::grpc_door::detail {

/// The responses waiting to be written, in order. The first lives in place
/// and the rest in a deque that allocates only once a second one waits: a
/// std::deque allocates its map and a block (~600 bytes) as it is made, and
/// a unary call, which has one response, paid that on every call. The
/// front stays where it is while it is written (it moves only once popped).
class response_queue {
public:
  bool empty() const {
    return !head_;
  }
  std::size_t size() const {
    return head_ ? 1 + tail_.size() : 0;
  }
  grpc::ByteBuffer& front() {
    return *head_;
  }
  grpc::ByteBuffer& back() {
    return tail_.empty() ? *head_ : tail_.back();
  }
  /// Takes `buf`'s bytes (a Swap: grpc 1.51's ByteBuffer has no move, and
  /// its copy allocates a new buffer).
  void push_back(grpc::ByteBuffer& buf) {
    if (!head_)
      head_.emplace().Swap(&buf);
    else
      tail_.emplace_back().Swap(&buf);
  }
  void pop_front() {
    if (tail_.empty()) {
      head_.reset();
      return;
    }
    head_->Swap(&tail_.front());
    tail_.pop_front();
  }
  void pop_back() {
    if (tail_.empty())
      head_.reset();
    else
      tail_.pop_back();
  }

private:
  std::optional<grpc::ByteBuffer> head_;
  boost::container::deque<grpc::ByteBuffer> tail_; // empty while head_ is
};

} // namespace actor_host::grpc_door::detail
