#include "actors/dispatch/stream_splices.hpp"

#include "obs/metrics.hpp"
#include "registry/runtime_info.hpp"
#include "wire/jsonrpc.hpp"

namespace actor_host {

namespace rpc = wire::jsonrpc;

bool read_trace_id(const std::string& params, std::string_view state, std::string& out) {
  std::string_view t[1];
  return !state.empty() && rpc::find_members(params, state, {"traceId"}, t) && !t[0].empty()
         && rpc::string_value(t[0], out) && !out.empty();
}

std::string chunk_for_caller(std::string_view raw) {
  std::string out;
  out.reserve(raw.size() + 1);
  out.assign(raw);
  return out;
}

void stream_splices::add(std::string wire_id, stream_sink_ptr sink) {
  std::lock_guard<std::mutex> g{mtx_};
  by_id_.insert_or_assign(std::move(wire_id), std::move(sink));
  count_.store(by_id_.size(), std::memory_order_relaxed);
}

void stream_splices::remove(std::string_view wire_id) {
  std::lock_guard<std::mutex> g{mtx_};
  if (auto i = by_id_.find(wire_id); i != by_id_.end()) {
    by_id_.erase(i);
    count_.store(by_id_.size(), std::memory_order_relaxed);
  }
}

void stream_splices::clear() {
  std::lock_guard<std::mutex> g{mtx_};
  by_id_.clear();
  count_.store(0, std::memory_order_relaxed);
}

stream_sink_ptr stream_splices::find(std::string_view wire_id) {
  std::lock_guard<std::mutex> g{mtx_};
  auto i = by_id_.find(wire_id);
  return i == by_id_.end() ? nullptr : i->second;
}

bool stream_splices::take(std::string& frame) {
  // Nothing spliced (every call that is not streaming), or a frame that
  // cannot be a run's event: the connection decodes it, once.
  if (count_.load(std::memory_order_relaxed) == 0)
    return false;
  const std::string_view text{frame};
  const bool chunk = text.find("\"streamChunk\"") != std::string_view::npos;
  if (!chunk && text.find("\"runActionState\"") == std::string_view::npos)
    return false;
  rpc::message m;
  rpc::decode_error err;
  if (!rpc::decode(frame, m, err) || m.kind != rpc::kind::notification
      || (m.method != "streamChunk" && m.method != "runActionState"))
    return false;
  std::string_view f[3]; // requestId, chunk, state
  if (!rpc::find_members(m.params, {"requestId", "chunk", "state"}, f) || f[0].empty())
    return false;
  auto sink = find(f[0]);
  if (!sink)
    return false;
  if (m.method == "streamChunk") {
    if (f[1].empty())
      return true; // as the connection does: a chunk member is required
    obs::global().stream_chunks.fetch_add(1, std::memory_order_relaxed);
    sink->chunk(chunk_for_caller(f[1]));
    return true;
  }
  // runActionState: the trace id goes ahead of the chunks that follow it;
  // the connection still gets the frame (the pending request keeps the id
  // for cancels and bidi input; the caller for its own state).
  std::string trace;
  if (read_trace_id(m.params, f[2], trace) && registry::valid_trace_id(trace))
    sink->trace(trace);
  return false;
}

} // namespace actor_host
