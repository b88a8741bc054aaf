#include "apps/caf_settings.hpp"

#include "actors/cluster/cluster_port_guard.hpp"
#include "actors/cluster/cluster_types.hpp"
#include "actors/common/io_scheduler.hpp"
#include "actors/common/quiet_clock.hpp"

#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>

#include <caf/atom.hpp>
#include <caf/config_value.hpp>
#include <caf/settings.hpp>

#include <cstdlib>
#include <string_view>

namespace actor_host::apps {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

// One `key=value` of ACTOR_HOST_CAF. CAF's own setter only prints to stderr
// when it refuses a value, so the stored value is read back to tell.
std::string apply_one(caf::actor_system_config& cfg, std::string_view item, bool& quiet_clock,
                      bool& io_scheduler) {
  auto eq = item.find('=');
  if (eq == std::string_view::npos)
    return "ACTOR_HOST_CAF: '" + std::string{item} + "' is not key=value";
  auto key = std::string{trim(item.substr(0, eq))};
  auto text = std::string{trim(item.substr(eq + 1))};
  // Ours, not CAF's: which clock the scheduler gets (quiet_clock.hpp).
  if (key == "actor-host.quiet-clock") {
    if (text != "true" && text != "false")
      return "ACTOR_HOST_CAF: actor-host.quiet-clock is true or false, not '" + text + "'";
    quiet_clock = text == "true";
    return {};
  }
  // Ours too: actors on the I/O threads (io_scheduler.hpp), over the
  // setting actors_on_io_threads, for a side-by-side run.
  if (key == "actor-host.io-scheduler") {
    if (text != "true" && text != "false")
      return "ACTOR_HOST_CAF: actor-host.io-scheduler is true or false, not '" + text + "'";
    io_scheduler = text == "true";
    return {};
  }
  caf::config_value value;
  if (key == "scheduler.policy") {
    // An atom in CAF 0.17; accept it without the quotes its syntax wants.
    if (text.size() > 2 && text.front() == '\'' && text.back() == '\'')
      text = text.substr(1, text.size() - 2);
    value = caf::atom_from_string(text);
  } else if (auto parsed = caf::config_value::parse(text)) {
    value = std::move(*parsed);
  } else {
    return "ACTOR_HOST_CAF: cannot parse the value of " + key + ": '" + text + "'";
  }
  cfg.set(key, value);
  auto* stored = caf::get_if(&cfg.content, key);
  if (stored == nullptr || *stored != value)
    return "ACTOR_HOST_CAF: CAF refused " + key + "=" + text;
  return {};
}

} // namespace

std::string apply_caf_settings(caf::actor_system_config& cfg, unsigned scheduler_threads,
                               bool actors_on_io_threads) {
  // One shared queue with a condition variable: measured to halve the
  // latency of request/response traffic against work stealing on 2 cores
  // (again on 2026-12-04: p50 at echo 1x1 1.5-1.6x with stealing, whose
  // idle workers sleep between polls; stealing streams 1.2-1.6x faster).
  cfg.set("scheduler.policy", caf::atom("sharing"));
  cfg.set("scheduler.max-threads", static_cast<std::size_t>(scheduler_threads));
  // BASP messages between cluster nodes are deserialized on the middleman's
  // own thread rather than handed to a worker thread first: measured on 2
  // cores (bench `cluster`, 2026-12-04) 1.5x the rate of one call in flight
  // (p50 355 vs 536 µs) and 14 % less CPU per call at 64 in flight; the
  // gateways batch, so there are few messages to deserialize in parallel.
  cfg.set("middleman.workers", std::size_t{0});
  // No clock-thread wake-up per terminating actor (quiet_clock.hpp);
  // `actor-host.quiet-clock=false` keeps CAF's own, for a side-by-side run.
  bool quiet_clock = true;
  bool io_scheduler = actors_on_io_threads;
  const char* env = std::getenv("ACTOR_HOST_CAF");
  std::string_view rest{env != nullptr ? env : ""};
  while (!rest.empty()) {
    auto comma = rest.find(',');
    auto item = trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    if (item.empty())
      continue;
    if (auto err = apply_one(cfg, item, quiet_clock, io_scheduler); !err.empty())
      return err;
  }
  // The I/O threads' scheduler falls back to the sharing worker (startup,
  // shutdown); another policy asked for means actors on workers of their own.
  auto policy = caf::get_or(cfg, "scheduler.policy", caf::atom("sharing"));
  if (io_scheduler && policy == caf::atom("sharing")
      && !caf::get_or(cfg, "scheduler.enable-profiling", false))
    use_io_scheduler(cfg);
  else if (quiet_clock)
    use_quiet_clock(cfg);
  return {};
}

void apply_cluster_settings(caf::actor_system_config& cfg, const manager_cluster_options& c) {
  load_guarded_middleman(cfg);
  // Only actor-host nodes get past CAF's handshake.
  cfg.set("middleman.app-identifiers", std::vector<std::string>{"actor-host"});
  cfg.set("middleman.heartbeat-interval",
          std::chrono::duration_cast<caf::timespan>(c.heartbeat_interval));
  cfg.set("middleman.connection-timeout",
          std::chrono::duration_cast<caf::timespan>(c.heartbeat_timeout));
  if (!c.tls_cert_file.empty()) {
    cfg.load<caf::openssl::manager>();
    cfg.openssl_certificate = c.tls_cert_file;
    cfg.openssl_key = c.tls_key_file;
    cfg.openssl_cafile = c.tls_ca_file;
  }
  add_cluster_types(cfg);
}

} // namespace actor_host::apps
