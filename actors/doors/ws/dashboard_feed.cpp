#include "actors/doors/ws/dashboard_feed.hpp"

#include "actors/call/errors.hpp"
#include "actors/common/live_counts.hpp"
#include "actors/dispatch/call_path.hpp"
#include "wire/jsonrpc.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>

namespace actor_host {

namespace {

using self_ptr = caf::stateful_actor<dashboard_feed_state>*;

constexpr std::pair<const char*, feed_topic> topic_table[] = {
  {"runtimes", feed_topic::runtimes}, {"workers", feed_topic::workers},
  {"services", feed_topic::services}, {"cluster", feed_topic::cluster},
  {"health", feed_topic::health},
};

unsigned bit(feed_topic t) {
  return static_cast<unsigned>(t);
}

std::string update(std::string_view topic, const std::string& data) {
  std::string out = R"({"jsonrpc":"2.0","method":"update","params":{"topic":")";
  out.append(topic);
  out += R"(","data":)";
  out += data;
  out += "}}";
  return out;
}

bool watched(const dashboard_feed_state& st, feed_topic t) {
  return std::any_of(st.watchers.begin(), st.watchers.end(),
                     [&](auto& w) { return (w.topics & bit(t)) != 0; });
}

void push(self_ptr self, feed_topic t, std::string_view name, const std::string& data) {
  std::string text;
  for (auto& w : self->state.watchers)
    if ((w.topics & bit(t)) && !w.waiting) {
      if (text.empty())
        text = update(name, data);
      self->send(w.session, feed_atom_v, text);
    }
}

std::string services_json(const dashboard_feed_state& st) {
  std::string out = "[";
  for (auto& [name, json] : st.services)
    out += (out.size() > 1 ? "," : "") + json;
  return out + "]";
}

// The whole health history, or the newest sample: the page appends.
std::string health_json(const dashboard_feed_state& st, bool all) {
  std::string out = R"({"intervalMs":)"
                    + std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                       st.cfg.sample_interval)
                                       .count())
                    + R"(,"reset":)" + (all ? "true" : "false") + R"(,"samples":[)";
  if (all) {
    bool first = true;
    for (auto& s : st.samples) {
      out += (first ? "" : ",") + s;
      first = false;
    }
  } else if (!st.samples.empty()) {
    out += st.samples.back();
  }
  return out + "]}";
}

const char* empty_listing(feed_topic t) {
  return t == feed_topic::workers ? R"({"workers":[]})" : "[]";
}

void send_watched(self_ptr self, const api_session_actor& session, unsigned topics);

// Watchers waiting for their first listings get them once every topic they
// watch has been fetched (or its fetch failed).
void settle_waiting(self_ptr self) {
  auto& st = self->state;
  auto busy = [&](unsigned topics) {
    return ((topics & bit(feed_topic::runtimes)) && st.runtimes.stale && st.runtimes.fetching)
           || ((topics & bit(feed_topic::workers)) && st.workers.stale && st.workers.fetching);
  };
  for (auto& w : st.watchers)
    if (w.waiting && !busy(w.topics)) {
      w.waiting = false;
      send_watched(self, w.session, w.topics);
    }
}

// A listing fetched from its owner: one request in flight per topic, and
// one more if the topic changed meanwhile; watchers get it only if it
// differs. Nobody watching: not fetched, and what was kept is dropped.
template <class Owner, class Atom>
void fetch(self_ptr self, dashboard_feed_state::fetched dashboard_feed_state::*slot,
           Owner dashboard_feed_state::*owner, Atom atom, feed_topic topic, const char* name) {
  auto& st = self->state;
  auto& t = st.*slot;
  if (!(st.*owner))
    return;
  if (t.fetching) {
    t.again = true;
    return;
  }
  if (!watched(st, topic)) {
    if (!t.stale) {
      t.stale = true;
      std::string{empty_listing(topic)}.swap(t.json);
    }
    return;
  }
  t.fetching = true;
  t.again = false;
  self->request(st.*owner, internal_reply_timeout, atom)
    .then(
      [=](std::string& json) {
        auto& t = self->state.*slot;
        t.fetching = false;
        t.stale = false;
        if (json != t.json) {
          t.json = std::move(json);
          push(self, topic, name, t.json);
        }
        if (t.again)
          fetch(self, slot, owner, atom, topic, name);
        settle_waiting(self);
      },
      [=](caf::error& err) {
        (self->state.*slot).fetching = false;
        (self->state.*slot).stale = false; // the empty listing until the next change
        spdlog::warn("dashboard feed: listing {} failed: {}", name, caf::to_string(err));
        settle_waiting(self);
      });
}

void fetch_runtimes(self_ptr self) {
  fetch(self, &dashboard_feed_state::runtimes, &dashboard_feed_state::directory, list_atom_v,
        feed_topic::runtimes, "runtimes");
}

void fetch_workers(self_ptr self) {
  fetch(self, &dashboard_feed_state::workers, &dashboard_feed_state::functions, snapshot_atom_v,
        feed_topic::workers, "workers");
}

void sample(self_ptr self) {
  auto& st = self->state;
  auto& m = obs::global();
  std::uint64_t calls = 0;
  std::uint64_t errors = 0;
  auto run = static_cast<int>(obs::rpc_method::run_action);
  for (int code = 0; code < obs::outcome_count; ++code) {
    auto n = m.requests[run][code].load(std::memory_order_relaxed);
    calls += n;
    if (code != 0)
      errors += n;
  }
  for (int o = 0; o < static_cast<int>(obs::invocation_outcome::count_); ++o) {
    auto n = m.invocations[o].load(std::memory_order_relaxed);
    calls += n;
    if (o != static_cast<int>(obs::invocation_outcome::ok))
      errors += n;
  }
  obs::latency_histogram::counts latency{};
  m.latency[run].add_counts(latency);
  m.invocation_latency.add_counts(latency);
  auto window = latency;
  for (std::size_t i = 0; i < window.size(); ++i)
    window[i] -= st.latency_total[i];
  auto d_calls = calls - st.calls_total;
  auto d_errors = errors - st.errors_total;
  st.calls_total = calls;
  st.errors_total = errors;
  st.latency_total = latency;
  if (!st.sampled_once) {
    // The totals before the feed started are no window of ours.
    st.sampled_once = true;
    return;
  }
  auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
               .count();
  st.samples.push_back(health_sample_json(now, d_calls, d_errors, window, live_actor_snapshot()));
  while (st.samples.size() > st.cfg.history)
    st.samples.pop_front();
  push(self, feed_topic::health, "health", health_json(st, false));
  if (st.cfg.cluster_json) {
    auto c = st.cfg.cluster_json();
    if (c != st.cluster) {
      st.cluster = std::move(c);
      push(self, feed_topic::cluster, "cluster", st.cluster);
    }
  }
}

// Everything `topics` names, as it is now, to `session`.
void send_watched(self_ptr self, const api_session_actor& session, unsigned topics) {
  auto& st = self->state;
  auto send = [&](feed_topic t, std::string_view name, const std::string& data) {
    if (topics & bit(t))
      self->send(session, feed_atom_v, update(name, data));
  };
  send(feed_topic::runtimes, "runtimes", st.runtimes.json);
  send(feed_topic::workers, "workers", st.workers.json);
  send(feed_topic::services, "services", services_json(st));
  send(feed_topic::cluster, "cluster",
       st.cluster.empty() ? std::string{R"({"self":null,"nodes":[]})"} : st.cluster);
  send(feed_topic::health, "health", health_json(st, true));
}

void set_watchers_gauge(const dashboard_feed_state& st, std::int64_t before) {
  obs::global().dashboard_watchers.fetch_add(static_cast<std::int64_t>(st.watchers.size()) - before,
                                             std::memory_order_relaxed);
}

} // namespace

unsigned feed_topic_bit(std::string_view name) {
  for (auto& [n, t] : topic_table)
    if (name == n)
      return bit(t);
  return 0;
}

std::string feed_topic_names() {
  std::string out;
  for (auto& [n, t] : topic_table)
    out += (out.empty() ? "" : ", ") + std::string{n};
  return out;
}

std::string feed_topics_json(unsigned bits) {
  std::string out;
  for (auto& [n, t] : topic_table)
    if (bits & bit(t))
      out += (out.empty() ? "\"" : ",\"") + std::string{n} + "\"";
  return out;
}

std::string health_sample_json(std::int64_t unix_ms, std::uint64_t calls, std::uint64_t errors,
                               const obs::latency_histogram::counts& window,
                               const obs::actor_snapshot& live) {
  auto ms = [&](double q) -> std::string {
    auto s = obs::histogram_quantile(window, q);
    if (s < 0)
      return "null";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", s * 1000);
    return buf;
  };
  std::string out = R"({"t":)" + std::to_string(unix_ms) + R"(,"calls":)" + std::to_string(calls)
                    + R"(,"errors":)" + std::to_string(errors) + R"(,"p50":)" + ms(0.5)
                    + R"(,"p99":)" + ms(0.99) + R"(,"actors":{)";
  bool first = true;
  for (auto& [kind, n] : live.live_by_kind) {
    out += (first ? "\"" : ",\"") + kind + "\":" + std::to_string(n);
    first = false;
  }
  return out + R"(},"runtimes":)" + std::to_string(live.runtimes_registered) + "}";
}

caf::behavior dashboard_feed(self_ptr self, dashboard_feed_config cfg, directory_actor directory,
                             iii_catalog_actor functions) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.directory = std::move(directory);
  st.functions = std::move(functions);
  if (st.cfg.cluster_json)
    st.cluster = st.cfg.cluster_json();
  auto me = caf::actor_cast<caf::actor>(self);
  if (st.directory)
    self->send(st.directory, subscribe_atom_v, me);
  if (st.functions)
    self->send(st.functions, subscribe_atom_v, me);
  fetch_runtimes(self);
  fetch_workers(self);
  sample(self); // the baseline
  self->delayed_send(self, st.cfg.sample_interval, sample_atom_v);
  self->set_down_handler([self](caf::down_msg& dm) {
    auto& ws = self->state.watchers;
    auto before = static_cast<std::int64_t>(ws.size());
    std::erase_if(ws, [&](auto& w) { return w.session.address() == dm.source; });
    set_watchers_gauge(self->state, before);
  });
  self->attach_functor([self] {
    obs::global().dashboard_watchers.fetch_sub(
      static_cast<std::int64_t>(self->state.watchers.size()), std::memory_order_relaxed);
  });
  return {
    [self](subscribe_atom, caf::actor& who, std::uint32_t topics) -> caf::result<caf::ok_atom> {
      auto& st = self->state;
      auto session = caf::actor_cast<api_session_actor>(who);
      auto i = std::find_if(st.watchers.begin(), st.watchers.end(),
                            [&](auto& w) { return w.session == session; });
      if (i == st.watchers.end()) {
        if (st.watchers.size() >= st.cfg.max_watchers) {
          obs::global().dashboard_watches_refused.fetch_add(1, std::memory_order_relaxed);
          spdlog::warn("dashboard feed: {} sessions watch already (the maximum); refusing "
                       "another",
                       st.watchers.size());
          return caf::make_error(caf::sec::runtime_error,
                                 "the dashboard feed has its maximum of "
                                   + std::to_string(st.cfg.max_watchers) + " watchers");
        }
        self->monitor(session);
        st.watchers.push_back({session, 0});
        obs::global().dashboard_watchers.fetch_add(1, std::memory_order_relaxed);
        i = std::prev(st.watchers.end());
      }
      i->topics = topics;
      // The answer first (messages between two actors keep their order),
      // then everything watched (once the listings nobody watched so far
      // are fetched); changes follow.
      auto rp = self->make_response_promise<caf::ok_atom>();
      rp.deliver(caf::ok_atom_v);
      bool runtimes = (topics & bit(feed_topic::runtimes)) && st.runtimes.stale;
      bool workers = (topics & bit(feed_topic::workers)) && st.workers.stale;
      if (runtimes || workers) {
        i->waiting = true;
        if (runtimes)
          fetch_runtimes(self);
        if (workers)
          fetch_workers(self);
        settle_waiting(self); // an owner that is not there: nothing to wait for
      } else if (!i->waiting) {
        send_watched(self, session, topics);
      }
      return rp;
    },
    [self](changed_atom, const std::string& topic) {
      if (topic == "runtimes")
        fetch_runtimes(self);
      else if (topic == "workers")
        fetch_workers(self);
    },
    [self](service_atom, const std::string& name, std::string& json) {
      auto& st = self->state;
      auto& slot = st.services[name];
      if (slot == json)
        return;
      slot = std::move(json);
      push(self, feed_topic::services, "services", services_json(st));
    },
    [self](sample_atom) {
      sample(self);
      self->delayed_send(self, self->state.cfg.sample_interval, sample_atom_v);
    },
  };
}

} // namespace actor_host
