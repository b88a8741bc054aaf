#include "actors/tracing/trace_keeper.hpp"

#include "actors/common/span_exporter.hpp"
#include "obs/metrics.hpp"
#include "traces/otlp.hpp"
#include "traces/span_events.hpp"
#include "traces/trace_filter.hpp"

#include <spdlog/spdlog.h>

#include <chrono>

namespace actor_host {

namespace {

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
           std::chrono::system_clock::now().time_since_epoch())
    .count();
}

constexpr auto prune_interval = std::chrono::minutes(1);

constexpr std::size_t max_waiting = max_route_spans_waiting;

using self_ptr = caf::stateful_actor<trace_keeper_state>*;

// The store's retention counts since the last look, into the metrics at
// once and into the minute's log line (a store that is full drops traces
// in every batch: a line per batch would be one per 20 ms).
void count_retention(self_ptr self) {
  auto c = self->state.store->take_retention_counts();
  auto& st = self->state;
  st.dropped_by_age += c.by_age;
  st.dropped_by_size += c.by_size;
  st.resyncs += c.resyncs;
  auto& m = obs::global();
  if (c.by_age + c.by_size > 0)
    m.traces_dropped.fetch_add(c.by_age + c.by_size, std::memory_order_relaxed);
  if (c.resyncs > 0)
    m.trace_store_resyncs.fetch_add(c.resyncs, std::memory_order_relaxed);
}

// Once a minute, with the prune: what retention dropped since the last line.
void log_retention(self_ptr self) {
  count_retention(self);
  auto& st = self->state;
  if (st.dropped_by_age + st.dropped_by_size > 0)
    spdlog::info("trace store: dropped {} trace(s) over the retention limits since the last "
                 "prune ({} older than the age limit, {} the oldest over the size limit)",
                 st.dropped_by_age + st.dropped_by_size, st.dropped_by_age, st.dropped_by_size);
  if (st.resyncs > 0)
    spdlog::warn("trace store: another connection writes to the store's file; its size was "
                 "summed again {} time(s) since the last prune (at most once a second: the size "
                 "limit may be passed by a second of the other's writes)",
                 st.resyncs);
  st.dropped_by_age = st.dropped_by_size = st.resyncs = 0;
}

// What was stored goes on to the collector too (its ended spans).
void export_doc(self_ptr self, std::string_view doc) {
  if (!self->state.exporter)
    return;
  std::string otlp;
  if (traces::otlp_from_trace_data(doc, otlp).empty() && !otlp.empty())
    caf::anon_send(self->state.exporter, span_atom_v, std::move(otlp));
}

// The watchers of the trace hear of its spans as the telemetry server tells them.
void tell_watchers(self_ptr self, const std::string& trace, std::string_view doc) {
  auto i = self->state.watchers.find(trace);
  if (i == self->state.watchers.end())
    return;
  std::string merged;
  if (traces::has_running_span(doc))
    merged = self->state.store->load(trace).value_or(std::string{});
  for (auto& event : traces::span_events(doc, merged))
    for (auto& w : i->second)
      self->send(w, trace_event_atom_v, event);
}

void remember_root(self_ptr self, const trace_key& key, std::string_view root) {
  auto& st = self->state;
  if (!st.recent_roots.try_emplace(key, span_key{root}).second)
    return;
  st.recent_order.push_back(key);
  if (st.recent_order.size() > max_recent_roots) {
    st.recent_roots.erase(st.recent_order.front());
    st.recent_order.pop_front();
  }
}

// What follows a stored document: its root is remembered, it goes on to
// the collector and to its watchers, and its waiting route spans attach.
void stored(self_ptr self, std::string_view doc, traces::trace_store::saved& s);
void store_attached(self_ptr self);

// The documents exporters posted since the last commit, in one transaction;
// each poster hears its own outcome once it is committed.
void save_incoming(self_ptr self) {
  auto& st = self->state;
  auto batch = std::move(st.incoming);
  st.incoming = {};
  st.incoming_bytes = 0;
  std::vector<std::string> docs;
  docs.reserve(batch.size());
  for (auto& [doc, rp] : batch)
    docs.push_back(std::move(doc));
  auto results = st.store->save_each(docs, now_ms());
  count_retention(self);
  for (std::size_t i = 0; i < docs.size(); ++i) {
    if (results[i].error.empty())
      stored(self, docs[i], results[i]);
    batch[i].second.deliver(std::move(results[i].error));
  }
  store_attached(self);
}

// Route spans that waited long enough (or were pushed out), as roots, in one
// transaction: under load this is most of the keeper's writes.
void store_spans(self_ptr self, std::vector<held_route_span> spans) {
  if (spans.empty())
    return;
  auto& st = self->state;
  auto fill = [&](std::size_t i, traces::run_span& out) { spans[i].fill(out); };
  auto err = st.store->save_spans(spans.size(), fill, now_ms());
  count_retention(self);
  if (!err.empty()) {
    spdlog::warn("trace store: {} route span(s) were not stored: {}", spans.size(), err);
    return;
  }
  for (auto& s : spans) {
    if (s.is_root())
      remember_root(self, s.trace(), s.span_id());
    if (!st.exporter && st.watchers.empty())
      continue;
    s.fill(st.scratch);
    auto doc = traces::trace_data_json(st.scratch);
    export_doc(self, doc);
    if (!st.watchers.empty())
      tell_watchers(self, st.scratch.trace_id, doc);
  }
}

// The oldest waiting spans, `n` at most, or those due by `due`.
std::vector<held_route_span> take_waiting(self_ptr self, std::size_t n,
                                          caf::actor_clock::time_point due) {
  std::vector<held_route_span> out;
  auto& w = self->state.waiting;
  auto& counts = self->state.waiting_traces;
  while (!w.empty() && (out.size() < n || w.front().first <= due)) {
    auto& key = w.front().second.trace();
    if (auto* c = counts.find(key); c && --*c == 0)
      counts.erase(key);
    out.push_back(std::move(w.front().second));
    w.pop_front();
  }
  return out;
}

// Spans pushed out of a full wait list go in batches of this many: one
// transaction each. A commit (its WAL frames, and the checkpoints they
// bring) was most of what the keeper spent per span; 1024 a commit instead
// of 256 took a fifth off its CPU per span (bench/runs/2026-12-07-trace-cost.md).
constexpr std::size_t evict_batch = 1024;

// Spans attached to their roots by the message at hand, in one transaction.
void store_attached(self_ptr self) {
  if (!self->state.attached.empty())
    store_spans(self, std::exchange(self->state.attached, {}));
}

// Under the run's root span if it is in (stored by store_attached); false if not yet.
bool try_attach(self_ptr self, held_route_span& span) {
  auto& roots = self->state.recent_roots;
  auto* root = roots.find(span.trace());
  if (!root || *root == span_key{span.span_id()})
    return false;
  span.set_parent(*root);
  self->state.attached.push_back(std::move(span));
  return true;
}

// After a save of `trace`: its waiting spans, if its root is now in.
void attach_waiting(self_ptr self, const std::string& trace) {
  auto& counts = self->state.waiting_traces;
  trace_key key{trace};
  auto* c = counts.find(key);
  if (!c)
    return; // the common case: no scan of the wait list
  auto taken = std::erase_if(self->state.waiting, [&](auto& e) {
    return e.second.trace() == key && try_attach(self, e.second);
  });
  if ((*c -= std::min(*c, taken)) == 0)
    counts.erase(key);
}

void stored(self_ptr self, std::string_view doc, traces::trace_store::saved& s) {
  if (!s.root_span.empty())
    remember_root(self, trace_key{s.trace_id}, s.root_span);
  export_doc(self, doc);
  if (!self->state.watchers.empty())
    tell_watchers(self, s.trace_id, doc);
  if (!self->state.waiting.empty())
    attach_waiting(self, s.trace_id);
}

// Under its root if that is in, else onto the wait list.
void take_route_span(self_ptr self, held_route_span span) {
  if (try_attach(self, span))
    return;
  auto& w = self->state.waiting;
  if (w.empty())
    self->delayed_send(self, route_span_wait, route_flush_atom_v);
  if (w.size() == max_waiting)
    store_spans(self, take_waiting(self, evict_batch, caf::actor_clock::time_point{}));
  // Never full: the wait list holds at most max_waiting spans.
  if (auto* n = self->state.waiting_traces.try_emplace(span.trace(), 0).first)
    ++*n;
  w.emplace_back(self->clock().now(), std::move(span));
}

// (trace_get_atom) and (trace_list_atom), answered by the keeper or its reader.
caf::result<bool, std::string> load_trace(traces::trace_store& store, const std::string& id) {
  auto t = store.load(id);
  return {t.has_value(), t ? std::move(*t) : std::string{}};
}

std::string list_traces(traces::trace_store& store, std::uint64_t limit, std::uint64_t offset,
                        const std::string& filter_json) {
  traces::trace_filter filter;
  if (!filter_json.empty() && !traces::trace_filter::parse(filter_json, filter).empty())
    return R"({"traces":[]})"; // checked by the route already
  return store.list(limit, offset, filter);
}

} // namespace

caf::behavior route_span_batcher(caf::stateful_actor<route_span_batcher_state>* self,
                                 route_span_queue_ptr queue) {
  self->state.queue = std::move(queue);
  return {
    [self](route_batch_atom) { self->state.queue->flush(); },
  };
}

caf::behavior trace_reader(caf::stateful_actor<trace_reader_state>* self,
                           std::shared_ptr<traces::trace_store> store) {
  self->state.store = std::move(store);
  return {
    [self](trace_get_atom, const std::string& id) -> caf::result<bool, std::string> {
      return load_trace(*self->state.store, id);
    },
    [self](trace_list_atom, std::uint64_t limit, std::uint64_t offset,
           const std::string& filter_json) -> std::string {
      return list_traces(*self->state.store, limit, offset, filter_json);
    },
  };
}

caf::behavior trace_keeper(caf::stateful_actor<trace_keeper_state>* self,
                           std::shared_ptr<traces::trace_store> store, caf::actor exporter) {
  self->state.store = std::move(store);
  self->state.exporter = std::move(exporter);
  self->set_down_handler([self](caf::down_msg& dm) {
    auto& st = self->state;
    for (auto i = st.watchers.begin(); i != st.watchers.end();) {
      st.watcher_count -= std::erase_if(i->second, [&](auto& w) { return w.address() == dm.source; });
      i = i->second.empty() ? st.watchers.erase(i) : std::next(i);
    }
  });
  self->send(self, trace_prune_atom_v);
  return {
    [self](trace_save_atom, std::string& body) -> caf::result<std::string> {
      auto& st = self->state;
      auto rp = self->make_response_promise<std::string>();
      st.incoming_bytes += body.size();
      st.incoming.emplace_back(std::move(body), rp);
      if (st.incoming.size() >= max_incoming_docs || st.incoming_bytes >= max_incoming_bytes)
        save_incoming(self);
      else if (!std::exchange(st.incoming_window_open, true))
        self->delayed_send(self, incoming_window, trace_commit_atom_v);
      return rp;
    },
    [self](trace_commit_atom) {
      self->state.incoming_window_open = false;
      if (!self->state.incoming.empty())
        save_incoming(self);
    },
    [self](otlp_save_atom, const std::string& body) -> std::string {
      // Converted here, off the scheduler's threads, like every store write.
      std::vector<std::string> docs;
      if (auto err = traces::trace_data_from_otlp(body, docs); !err.empty())
        return err;
      auto results = self->state.store->save_each(docs, now_ms());
      count_retention(self);
      std::string first_error;
      for (std::size_t i = 0; i < docs.size(); ++i) {
        if (results[i].error.empty())
          stored(self, docs[i], results[i]);
        else if (first_error.empty())
          first_error = std::move(results[i].error);
      }
      store_attached(self);
      return first_error;
    },
    [self](route_span_atom, traces::run_span& span) {
      obs::global().route_spans_queued.fetch_sub(1, std::memory_order_relaxed);
      take_route_span(self, held_route_span{std::move(span)});
      store_attached(self);
    },
    [self](route_spans_atom, const route_batch& batch) {
      obs::global().route_spans_queued.fetch_sub(static_cast<std::int64_t>(batch.size()),
                                                 std::memory_order_relaxed);
      for (std::size_t i = 0; i < batch.size(); ++i)
        take_route_span(self, held_route_span{batch, i});
      store_attached(self);
    },
    [self](route_flush_atom) {
      // No root came: the manager's span is the trace's root.
      auto& w = self->state.waiting;
      // The actor's clock: the deterministic tests move it.
      auto now = self->clock().now();
      store_spans(self, take_waiting(self, 0, now - route_span_wait));
      if (!w.empty())
        self->delayed_send(self, w.front().first + route_span_wait - now, route_flush_atom_v);
    },
    [self](trace_watch_atom, const std::string& id,
           caf::actor& watcher) -> caf::result<bool, std::string> {
      auto& st = self->state;
      if (st.watcher_count >= max_trace_watchers)
        return {false, std::string{}};
      self->monitor(watcher);
      st.watchers[id].push_back(std::move(watcher));
      ++st.watcher_count;
      return {true, st.store->load(id).value_or(std::string{})};
    },
    [self](trace_get_atom, const std::string& id) -> caf::result<bool, std::string> {
      if (auto& reader = self->state.reader) {
        auto rp = self->make_response_promise();
        rp.delegate(reader, trace_get_atom_v, id);
        return rp;
      }
      return load_trace(*self->state.store, id);
    },
    [self](trace_list_atom, std::uint64_t limit, std::uint64_t offset,
           const std::string& filter_json) -> caf::result<std::string> {
      if (auto& reader = self->state.reader) {
        auto rp = self->make_response_promise();
        rp.delegate(reader, trace_list_atom_v, limit, offset, filter_json);
        return rp;
      }
      return list_traces(*self->state.store, limit, offset, filter_json);
    },
    [self](trace_reader_atom, caf::actor& reader) {
      self->state.reader = std::move(reader);
    },
    [self](trace_prune_atom) {
      self->state.store->prune(now_ms());
      log_retention(self);
      self->delayed_send(self, prune_interval, trace_prune_atom_v);
    },
  };
}

} // namespace actor_host
