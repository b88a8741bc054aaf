#include "actors/tracing/held_route_span.hpp"

#include "wire/secure_random.hpp"

#include <algorithm>
#include <cstdint>

namespace actor_host {

held_route_span::held_route_span(const route_batch& batch, std::size_t i) : rec_(batch.records[i]) {
  std::size_t length = std::size_t{rec_.trace_len} + rec_.runtime_len + rec_.node_len
                       + rec_.action_len + (rec_.ok ? 0 : rec_.error_len);
  auto at = std::min<std::size_t>(rec_.at, batch.text.size());
  text_.assign(std::string_view{batch.text}.substr(at, length));
  rec_.at = 0;
  trace_ = trace_key{trace_id()};
  // Drawn here, on the keeper's thread, rather than on the call's; the same
  // digits as wire::secure_random_hex(8), without its two strings.
  std::uint8_t bytes[8];
  wire::secure_random_bytes(bytes, sizeof bytes);
  static constexpr char digits[] = "0123456789abcdef";
  for (std::size_t j = 0; j < sizeof bytes; ++j) {
    span_id_[2 * j] = digits[bytes[j] >> 4];
    span_id_[2 * j + 1] = digits[bytes[j] & 0xf];
  }
}

held_route_span::held_route_span(traces::run_span span)
  : whole_(std::make_unique<traces::run_span>(std::move(span))) {
  trace_ = trace_key{whole_->trace_id};
}

std::string_view held_route_span::trace_id() const noexcept {
  if (whole_)
    return whole_->trace_id;
  return std::string_view{text_}.substr(0, rec_.trace_len);
}

std::string_view held_route_span::span_id() const noexcept {
  if (whole_)
    return whole_->span_id;
  return {span_id_.data(), span_id_.size()};
}

void held_route_span::set_parent(const span_key& root) {
  parent_ = root;
  has_parent_ = true;
}

bool held_route_span::is_root() const noexcept {
  if (has_parent_)
    return parent_.empty();
  return !whole_ || whole_->parent_span_id.empty();
}

void held_route_span::fill(traces::run_span& out) const {
  if (whole_) {
    out = *whole_;
  } else {
    route_span_fields(text_, rec_, out);
    out.span_id.assign(span_id());
    out.parent_span_id.clear();
  }
  if (has_parent_)
    parent_.assign_to(out.parent_span_id);
}

} // namespace actor_host
