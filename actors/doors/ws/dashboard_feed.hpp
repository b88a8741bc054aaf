#pragma once

#include "actors/call/interfaces.hpp"
#include "actors/common/messages.hpp"
#include "obs/metrics.hpp"
#include "obs/metrics_page.hpp"

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace actor_host {

/// What a dashboard can watch on /api/ws (`watch` with `topics`).
enum class feed_topic : unsigned {
  runtimes = 1,  // the directory's listing (every node's in a cluster)
  workers = 2,   // iii workers with their functions and triggers
  services = 4,  // the host config's supervised services and their state
  cluster = 8,   // membership as this node sees it
  health = 16,   // calls, errors, latency and live actors, sampled
};

/// The topic named `name`, or 0.
unsigned feed_topic_bit(std::string_view name);
/// Every topic's name, for error messages: "runtimes, workers, ...".
std::string feed_topic_names();
/// The topics of `bits` as JSON strings in their fixed order: `"runtimes","health"`.
std::string feed_topics_json(unsigned bits);
/// Every topic (a `watch` without `topics`).
inline constexpr unsigned all_feed_topics = 31;

struct dashboard_feed_config {
  /// How often the metrics are sampled for the health charts.
  caf::timespan sample_interval{std::chrono::seconds(2)};
  /// Samples kept for a new watcher's charts (5 minutes at 2 s).
  std::size_t history = 150;
  /// Sessions that may watch at once; more get RESOURCE_EXHAUSTED.
  std::size_t max_watchers = 64;
  /// Membership JSON (cluster_json); empty outside a cluster.
  std::function<std::string()> cluster_json;
};

struct dashboard_feed_state {
  struct watcher {
    api_session_actor session;
    unsigned topics = 0;
    // Its first listing of every watched topic waits for a fetch (a topic
    // nobody watched is not kept): nothing is pushed to it until then.
    bool waiting = false;
  };
  /// A topic fetched from its owner: one fetch at a time, and one more if
  /// it changed meanwhile (a burst of registrations is one or two fetches).
  /// Fetched and kept only while a watcher watches it: with nobody
  /// watching, a change only marks it stale (every registration of a
  /// connect burst rebuilt the whole runtimes listing, and the feed kept a
  /// copy of ~0.2 KB per runtime).
  struct fetched {
    std::string json;
    bool fetching = false;
    bool again = false;
    bool stale = false; // `json` is the empty listing, not the owner's
  };

  dashboard_feed_config cfg;
  directory_actor directory;
  iii_catalog_actor functions;
  std::vector<watcher> watchers;
  fetched runtimes{"[]"};
  fetched workers{R"({"workers":[]})"};
  std::string cluster;
  std::map<std::string, std::string> services; // by name: state JSON
  // Health: the last totals and the samples of the last minutes.
  std::uint64_t calls_total = 0;
  std::uint64_t errors_total = 0;
  obs::latency_histogram::counts latency_total{};
  std::deque<std::string> samples;
  bool sampled_once = false;
  static inline const char* name = "dashboard_feed";
};

/// The manager's live view for dashboards: holds the current listings of
/// every topic and pushes each change to the sessions watching it, as
/// `{"jsonrpc":"2.0","method":"update","params":{"topic":..,"data":..}}`
/// written to their sockets (the session's write queue bounds what a slow
/// page can make the manager hold). The directory and the function registry
/// tell it of changes; services report their state; membership and the
/// metrics are sampled every cfg.sample_interval.
///
/// - (subscribe_atom, session, topics) -> ok: the session gets every
///   watched topic at once, then each change; an error over max_watchers.
///   Watching again replaces the topics; a session that ends is dropped.
/// - (changed_atom, topic): "runtimes" or "workers" changed at their owner
/// - (service_atom, name, state_json): a service's state
/// - (sample_atom): sample the metrics (its own, every cfg.sample_interval)
caf::behavior dashboard_feed(caf::stateful_actor<dashboard_feed_state>* self,
                             dashboard_feed_config cfg, directory_actor directory,
                             iii_catalog_actor functions);

/// One health sample: what happened since the last one (calls and errors of
/// runs and iii invocations, their p50/p99 in ms, null when none), and the
/// live actors by kind now.
std::string health_sample_json(std::int64_t unix_ms, std::uint64_t calls, std::uint64_t errors,
                               const obs::latency_histogram::counts& window,
                               const obs::actor_snapshot& live);

} // namespace actor_host
