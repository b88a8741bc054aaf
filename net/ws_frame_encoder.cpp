#include "net/detail/ws_frame_encoder.hpp"

#include <cstring>
#include <random>

namespace actor_host::net {

namespace {

// A write takes queued frames until it holds this many bytes (at least one
// frame), so one sendmsg carries many small frames without the batch buffer
// growing without bound.
constexpr std::size_t max_batch_bytes = 256u << 10;
// Payloads at least this large are not copied into the batch buffer (server
// side, unmasked): they go out as their own buffer in the same gather write.
constexpr std::size_t gather_min_bytes = 16u << 10;
// ... pointing into the payload's heap storage, which a move of the frame
// (the session's queue growing during the write) leaves in place; a payload
// in the string's own small buffer would move with it.
static_assert(gather_min_bytes > sizeof(std::string));
// What the batch buffer keeps while nothing waits: small frames written one
// batch at a time reuse it, a backlog's or a large frame's is given back.
constexpr std::size_t idle_batch_bytes = 4u << 10;
// asio hands at most 64 buffers to one sendmsg.
constexpr std::size_t max_batch_buffers = 60;

} // namespace

std::size_t put_frame_header(std::uint8_t* p, std::uint8_t opcode, std::uint64_t n,
                             const std::uint8_t* mask) {
  p[0] = static_cast<std::uint8_t>(0x80 | opcode);
  const std::uint8_t m = mask ? 0x80 : 0;
  std::size_t i;
  if (n < 126) {
    p[1] = static_cast<std::uint8_t>(m | n);
    i = 2;
  } else if (n <= 0xffff) {
    p[1] = static_cast<std::uint8_t>(m | 126);
    p[2] = static_cast<std::uint8_t>(n >> 8);
    p[3] = static_cast<std::uint8_t>(n);
    i = 4;
  } else {
    p[1] = static_cast<std::uint8_t>(m | 127);
    for (int k = 0; k < 8; ++k)
      p[2 + k] = static_cast<std::uint8_t>(n >> (56 - 8 * k));
    i = 10;
  }
  if (mask) {
    std::memcpy(p + i, mask, 4);
    i += 4;
  }
  return i;
}

void ws_frame_encoder::use_masks() {
  // The key only has to be unpredictable to scripts in a browser, not
  // cryptographically strong.
  mask_state_ = (static_cast<std::uint64_t>(std::random_device{}()) << 32)
                | std::random_device{}() | 1u;
}

void ws_frame_encoder::begin_batch() {
  wbuf_.clear();
  segs_.clear();
  frames_ = 0;
  payload_ = 0;
  bytes_ = 0;
}

bool ws_frame_encoder::add(const out_frame& f) {
  const bool masked = mask_state_ != 0;
  const std::size_t n = f.payload.size();
  if (frames_ > 0 && (bytes_ + n > max_batch_bytes || segs_.size() + 2 > max_batch_buffers))
    return false;
  std::uint8_t mask[4];
  if (masked)
    next_mask(mask);
  const std::size_t off = wbuf_.size();
  wbuf_.resize(off + 14);
  const auto opcode = f.control != 0 ? f.control : static_cast<std::uint8_t>(f.binary ? 0x2 : 0x1);
  auto h = put_frame_header(reinterpret_cast<std::uint8_t*>(wbuf_.data() + off), opcode, n,
                            masked ? mask : nullptr);
  wbuf_.resize(off + h);
  if (!masked && n >= gather_min_bytes) {
    append_local(off, h);
    segs_.push_back({f.payload.data(), 0, n});
  } else {
    wbuf_.resize(off + h + n);
    auto* dst = wbuf_.data() + off + h;
    if (masked)
      for (std::size_t i = 0; i < n; ++i)
        dst[i] = static_cast<char>(f.payload[i] ^ static_cast<char>(mask[i & 3]));
    else
      std::memcpy(dst, f.payload.data(), n);
    append_local(off, h + n);
  }
  bytes_ += h + n;
  ++frames_;
  payload_ += n;
  return true;
}

void ws_frame_encoder::end_batch() {
  // wbuf_ is complete: only now are pointers into it stable.
  bufs_.clear();
  for (auto& sg : segs_)
    bufs_.emplace_back(sg.ext ? sg.ext : wbuf_.data() + sg.off, sg.len);
}

void ws_frame_encoder::trim(bool idle) {
  if (wbuf_.capacity() > (idle ? idle_batch_bytes : 4 * max_batch_bytes))
    std::string{}.swap(wbuf_); // after one huge masked frame, or a backlog
}

// Neighbouring pieces of wbuf_ go out as one buffer.
void ws_frame_encoder::append_local(std::size_t off, std::size_t len) {
  if (!segs_.empty() && segs_.back().ext == nullptr && segs_.back().off + segs_.back().len == off)
    segs_.back().len += len;
  else
    segs_.push_back({nullptr, off, len});
}

void ws_frame_encoder::next_mask(std::uint8_t* out) {
  // xorshift64
  auto& x = mask_state_;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  std::memcpy(out, &x, 4);
}

} // namespace actor_host::net
