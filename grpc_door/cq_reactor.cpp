#include "grpc_door/detail/cq_reactor.hpp"

#include <spdlog/spdlog.h>

namespace actor_host::grpc_door::detail {

namespace {

// A status message travels in the trailers (grpc-message, percent-encoded):
// one much larger than the client's header list limit (8-16 KiB) is dropped
// with the whole response, and the client waits for its deadline.
constexpr std::size_t max_status_message_bytes = 4096;

grpc::Status deliverable(grpc::Status status) {
  const auto& msg = status.error_message();
  if (msg.size() <= max_status_message_bytes)
    return status;
  spdlog::info("gRPC status message of {} bytes truncated to {} for the client; in full: {}",
               msg.size(), max_status_message_bytes, msg);
  auto cut = max_status_message_bytes - 32;
  // Not inside a UTF-8 sequence.
  while (cut > 0 && (static_cast<unsigned char>(msg[cut]) & 0xc0) == 0x80)
    --cut;
  return grpc::Status{status.error_code(),
                      msg.substr(0, cut) + " ... (" + std::to_string(msg.size()) + " bytes)",
                      status.error_details()};
}

} // namespace

void cq_call::on_event(event ev, bool ok) {
  if (ev == event::request)
    return on_request(server, this, ok);
  if (reactor == nullptr) {
    // Only the done notification can overtake the request's completion
    // (the call was over before it was served); the server drops it then.
    if (ev == event::done)
      done_early = true;
    return;
  }
  if (ev == event::done)
    on_done(server, *this);
  reactor->completed(ev, ok);
}

cq_reactor::cq_reactor(std::unique_ptr<cq_call> call) : call_(std::move(call)) {
  call_->reactor = this;
  call_->live->add();
}

cq_reactor::~cq_reactor() {
  auto* live = call_->live;
  call_.reset();
  live->remove();
}

void cq_reactor::StartRead(grpc::ByteBuffer* buf) {
  holds_.fetch_add(1, std::memory_order_relaxed);
  call_->stream.Read(buf, &call_->read_tag);
}

void cq_reactor::StartWrite(const grpc::ByteBuffer* buf, grpc::WriteOptions opts) {
  holds_.fetch_add(1, std::memory_order_relaxed);
  call_->stream.Write(*buf, opts, &call_->write_tag);
}

void cq_reactor::StartWriteAndFinish(const grpc::ByteBuffer* buf, grpc::WriteOptions opts,
                                     grpc::Status status) {
  call_->stream.WriteAndFinish(*buf, opts, deliverable(std::move(status)), &call_->finish_tag);
}

void cq_reactor::Finish(grpc::Status status) {
  call_->stream.Finish(deliverable(std::move(status)), &call_->finish_tag);
}

void cq_reactor::completed(cq_call::event ev, bool ok) {
  switch (ev) {
    case cq_call::event::read:
      OnReadDone(ok);
      break;
    case cq_call::event::write:
      OnWriteDone(ok);
      break;
    case cq_call::event::done:
      // Valid once the done notification came: the call ended without its
      // status being sent.
      if (call_->ctx.IsCancelled())
        OnCancel();
      break;
    case cq_call::event::finish:
    case cq_call::event::request:
      break;
  }
  release();
}

void cq_reactor::release() {
  if (holds_.fetch_sub(1, std::memory_order_acq_rel) == 1)
    OnDone();
}

} // namespace actor_host::grpc_door::detail
