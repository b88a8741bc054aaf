#include "config/host_config.hpp"

#include "config/duration.hpp"
#include "config/yaml_read.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <set>

namespace actor_host::config {

namespace {

using namespace yaml_read;

constexpr auto settings = std::to_array<setting_def>({
  {"bind", "127.0.0.1", setting_type::text, "address the servers listen on", ""},
  {"port", "0", setting_type::port, "reflection server port (runtimes dial in); 0 = first free in 3200-3400", ""},
  {"http_port", "4100", setting_type::port, "API server port (/api, /metrics, /healthz, /readyz); 0 = any free", ""},
  {"worker_port", "49134", setting_type::port, "worker endpoint port (iii workers, iii-sdk); 0 = any free", ""},
  {"worker_rbac_port", "off", setting_type::optional_port, "second worker endpoint whose workers go through RBAC (auth function, exposed functions, hooks); off = none, 0 = any free", ""},
  {"worker_auth_function", "", setting_type::text, "RBAC: function called with {headers, query_params, ip_address} when a worker connects; its AuthResult is the session", ""},
  {"worker_expose_functions", "", setting_type::text, "RBAC: comma-separated globs of functions every session may call, e.g. api::*,public::*, and metadata:key=glob filters", ""},
  {"worker_on_function_registration", "", setting_type::text, "RBAC: hook function for registerfunction", ""},
  {"worker_on_trigger_type_registration", "", setting_type::text, "RBAC: hook function for registertriggertype", ""},
  {"worker_on_trigger_registration", "", setting_type::text, "RBAC: hook function for registertrigger", ""},
  {"worker_middleware", "", setting_type::text, "RBAC listener: function that gets every call of a non-engine:: function instead, with {function_id, payload, action, context}; its answer is the call's", ""},
  {"max_channel_bytes", "8388608", setting_type::limit, "iii channels: bytes held for a reader that has not connected; the writer is paused there, the channel ends past twice as many; 0 = no cap", ""},
  {"max_channels_per_worker", "64", setting_type::limit, "iii channels: open channels one worker connection may own; engine::channels::create fails with LIMIT_EXCEEDED beyond; 0 = no cap", ""},
  {"request_timeout", "30s", setting_type::positive_duration, "timeout of listActions/listValues/cancelAction", ""},
  {"run_timeout", "5m", setting_type::duration, "default runAction timeout when a call names no timeoutMs; 0 = none", ""},
  {"max_calls_per_caller", "1024", setting_type::count, "calls in flight per caller (per /api/ws session, per peer address for plain HTTP); over it RESOURCE_EXHAUSTED (HTTP 429)", ""},
  {"max_inflight_per_runtime", "0", setting_type::limit, "services: calls in flight per runtime (replica); a call that finds every replica of its service at the cap waits in the service's queue; 0 = no cap (a service in host.yaml may set its own)", ""},
  {"max_queued_per_service", "1000", setting_type::count, "services: calls waiting for a replica with room; past it a call is refused at once with RESOURCE_EXHAUSTED (HTTP 429, Retry-After)", ""},
  {"retry_idempotent", "", setting_type::text, "services: comma-separated action keys (or prefixes ending in *) safe to run twice: a balanced run that ends UNAVAILABLE before any chunk reached its caller is run once more on another replica", ""},
  {"max_bidi_input_bytes", "16777216", setting_type::count, "bidi input held per run before the runtime reports it started (manager) or before the action reads it (runtime); over it the run fails with RESOURCE_EXHAUSTED", ""},
  {"max_unread_frames", "256", setting_type::count, "frames read from a WebSocket and not yet processed by its actor before the socket stops being read (resumed at half)", ""},
  {"first_message_timeout", "10s", setting_type::duration, "gRPC: a call whose first request message has not come by then ends DEADLINE_EXCEEDED (it holds a call slot meanwhile); 0 = no limit", ""},
  {"max_client_resets", "200", setting_type::limit, "gRPC: calls a connection's client may cancel beyond those it lets finish (less 100 a second) before the connection is closed (HTTP/2 rapid reset); 0 = no limit", ""},
  {"failover_hold", "5s", setting_type::duration, "cluster: how long a call for a runtime (or service) of a node that was lost waits for it to register at another node before it fails UNAVAILABLE; 0 = fail at once", ""},
  {"drain_timeout", "15s", setting_type::duration, "on SIGTERM, how long in-flight calls may finish before they are cancelled", ""},
  {"max_frame_bytes", "8388608", setting_type::count, "largest WebSocket message accepted (memory per connection is bounded by it)", ""},
  {"max_body_bytes", "8388608", setting_type::count, "largest HTTP request body accepted (memory per connection is bounded by it)", ""},
  {"auth_token_file", "", setting_type::text, "file whose content is the token callers (Authorization: Bearer), runtimes and workers (header or ?token=) must present; unset = loopback peers only", ""},
  {"allowed_origins", "", setting_type::text, "comma-separated browser origins admitted besides loopback ones, e.g. https://ui.example.com; * = any", ""},
  {"allowed_hosts", "", setting_type::text, "comma-separated Host names served besides loopback names and the bind address; * = any", ""},
  {"max_response_bytes_total", "268435456", setting_type::limit, "bytes all HTTP responses of one listener may hold at once, the piece being written included; a response that would pass it aborts its call (its run cancelled) and drops its client. 0 = no cap", ""},
  {"max_write_queue_bytes", "16777216", setting_type::count, "bytes that may wait to be written to one WebSocket or one HTTP response (beyond the message being written); over it the peer is dropped and its HTTP call cancelled", ""},
  {"max_connections", "4096", setting_type::count, "open connections per listener; over it a connection gets 503 and is closed. All listeners together also share one budget fitted to the file descriptor limit (the same 503 beyond it)", ""},
  {"tls_cert_file", "", setting_type::text, "PEM certificate chain: every listener then speaks only TLS (https://, wss://); reloaded on SIGHUP", ""},
  {"tls_key_file", "", setting_type::text, "PEM private key of tls_cert_file", ""},
  {"tls_client_ca_file", "", setting_type::text, "PEM CA(s): clients must present a certificate they signed (mTLS)", ""},
  {"insecure", "false", setting_type::choice, "serve peers off loopback without a token or client certificates (needed to bind a non-loopback address without them)", "true|false"},
  {"insecure_skip_client_verify", "false", setting_type::choice, "request client certificates but accept any or none (not an access control; for rolling out mTLS)", "true|false"},
  {"grpc_port", "off", setting_type::optional_port, "manager: gRPC front door (every action a gRPC method, server reflection, health); off = none, 0 = any free port (logged)", ""},
  {"grpc_auth_cert_file", "", setting_type::text, "PEM certificate chain of the gRPC listener (default: tls_cert_file); plaintext when neither is set; reread every 10 s", ""},
  {"grpc_auth_key_file", "", setting_type::text, "PEM private key of grpc_auth_cert_file (default: tls_key_file)", ""},
  {"grpc_client_ca_file", "", setting_type::text, "PEM CA(s): gRPC clients must present a certificate they signed (default: tls_client_ca_file)", ""},
  {"insecure_skip_grpc_client_verify", "false", setting_type::choice, "gRPC listener: request client certificates but accept any or none", "true|false"},
  {"log_level", "info", setting_type::choice, "log level", "trace|debug|info|warn|error"},
  {"log_format", "text", setting_type::choice, "log line format", "text|json"},
  {"scheduler_threads", "1", setting_type::threads, "CAF worker threads", ""},
  {"io_threads", "1", setting_type::threads, "socket I/O threads", ""},
  {"actors_on_io_threads", "true", setting_type::choice, "run actors on the socket I/O threads, between socket handlers (no thread hand-off between a socket and its actor); false = on scheduler_threads workers of their own", "true|false"},
  {"write_env_file", "", setting_type::text, "write GENKIT_* variables of the runtime(s) to this file as KEY=VALUE lines", ""},
  {"project_root", "", setting_type::text, "Genkit project root: where runtime files are written (runtime role, Reflection V1) and watched; unset = the nearest folder from the working directory with package.json, go.mod, pyproject.toml, ... (as the Genkit CLI finds it)", ""},
  {"trace_store", "", setting_type::text, "SQLite file for the traces runtimes export; the manager is their telemetry server (/api/traces, telemetryServerUrl, GENKIT_TELEMETRY_SERVER); unset = <project root>/.genkit/actor-host/traces.sqlite, none = no trace store", ""},
  {"ui_assets", "", setting_type::text, "manager: serve a web app from this folder at / (e.g. the Genkit Dev UI build in ~/.genkit/assets/<version>/ui/browser); the dashboard then stays at /ui/index.html", ""},
  {"otlp_endpoint", "", setting_type::text, "manager: also export every stored span to this OpenTelemetry collector (OTLP/HTTP JSON base URL, e.g. http://collector:4318; /v1/traces is appended); needs trace_store", ""},
  {"trace_max_age", "168h", setting_type::duration, "trace store: traces not updated for this long are dropped; 0 = no age limit", ""},
  {"trace_max_bytes", "268435456", setting_type::limit, "trace store: span bytes kept, the least recently updated traces dropped first; 0 = no limit", ""},
  // Cluster (host.yaml: under `cluster:`, without the cluster_ prefix; docs/CLUSTER.md).
  {"cluster_port", "off", setting_type::optional_port, "where this node listens for the other managers of its cluster; off = no cluster, 0 = any free port (logged)", ""},
  {"cluster_bind", "", setting_type::text, "address of the cluster endpoint (default: bind)", ""},
  {"cluster_advertise", "", setting_type::text, "host the other nodes dial to reach this one (default: cluster_bind, or the host name when that is 0.0.0.0)", ""},
  {"cluster_seeds", "", setting_type::text, "comma-separated host:port of nodes to join through; names are resolved again every 10 s (a headless Service works)", ""},
  {"node_name", "", setting_type::text, "this node's name in the cluster (default: the host name); two live nodes cannot share one", ""},
  {"cluster_tls_cert_file", "", setting_type::text, "PEM certificate this node presents to the other nodes (mTLS, with cluster_tls_key_file and cluster_tls_ca_file)", ""},
  {"cluster_tls_key_file", "", setting_type::text, "PEM private key of cluster_tls_cert_file", ""},
  {"cluster_tls_ca_file", "", setting_type::text, "PEM CA(s): other nodes must present a certificate they signed", ""},
  {"cluster_insecure", "false", setting_type::choice, "allow a plaintext cluster endpoint on a non-loopback address (anyone who reaches it joins)", "true|false"},
  {"cluster_heartbeat_interval", "1s", setting_type::positive_duration, "how often nodes send each other a heartbeat", ""},
  {"cluster_heartbeat_timeout", "5s", setting_type::positive_duration, "a node silent this long is unreachable: its link is closed, its calls fail with UNAVAILABLE and its runtimes are unlisted", ""},
});

bool parse_uint(const std::string& s, std::uint64_t& n) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  return !s.empty() && ec == std::errc{} && p == s.data() + s.size();
}

bool valid_env_name(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])))
    return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

restart_mode parse_restart(const entry& e) {
  auto s = scalar(e);
  if (s == "never")
    return restart_mode::never;
  if (s == "on-failure")
    return restart_mode::on_failure;
  if (s == "always")
    return restart_mode::always;
  fail(e.mark(), "bad restart '" + s + "': expected never, on-failure or always");
}

/// `inherit_env: true|false` or a list of names, "PREFIX_*" for a prefix.
void parse_inherit_env(const entry& e, service_spec& svc) {
  auto word = e.value.IsScalar() ? e.value.Scalar() : std::string{};
  if (word == "true" || word == "false") {
    svc.inherit_env_all = boolean(e);
    return;
  }
  if (!e.value.IsSequence())
    fail(e.mark(), "'inherit_env' must be true, false or a list of variable names");
  svc.inherit_env = string_list(e);
  for (auto& name : svc.inherit_env) {
    auto bare = name.ends_with('*') ? name.substr(0, name.size() - 1) : name;
    if (!valid_env_name(bare))
      fail(e.mark(), "bad variable name '" + name + "' in inherit_env (a name, or a prefix and '*')");
  }
}

// At most this many replicas per host.yaml entry: each is a child process.
constexpr std::uint64_t max_replicas = 256;

service_spec parse_service(const YAML::Node& node, const std::string& base_dir,
                           std::uint64_t& replicas) {
  service_spec svc;
  replicas = 1;
  const entry* command = nullptr;
  const YAML::Mark at = node.Mark();
  for (auto& e : entries(node, "service",
                         {"name", "command", "runtime_id", "env", "cwd", "restart", "backoff",
                          "max_backoff", "max_restarts", "ready_timeout", "stop_grace",
                          "register", "inherit_env", "replicas",
                          "max_inflight_per_runtime"})) {
    if (e.key == "name") {
      svc.name = non_empty_scalar(e);
      if (svc.name.find_first_of(" \t\n/") != std::string::npos)
        fail(e.mark(), "service name '" + svc.name + "' must not contain spaces or '/'");
    } else if (e.key == "command") {
      command = &e;
      if (e.value.IsScalar())
        fail(e.mark(), "'command' must be a list (argv, no shell): e.g. [node, app.js]");
      svc.command = string_list(e);
      if (svc.command.empty() || svc.command.front().empty())
        fail(e.mark(), "'command' must name a program");
    } else if (e.key == "runtime_id") {
      svc.runtime_id = non_empty_scalar(e);
    } else if (e.key == "env") {
      parse_env(e, svc.env);
      for (auto& [k, v] : svc.env)
        if (!valid_env_name(k))
          fail(e.mark(), "bad environment variable name '" + k + "'");
    } else if (e.key == "cwd") {
      svc.cwd = resolve(base_dir, non_empty_scalar(e));
    } else if (e.key == "restart") {
      svc.restart = parse_restart(e);
    } else if (e.key == "backoff") {
      svc.backoff = duration(e);
    } else if (e.key == "max_backoff") {
      svc.max_backoff = duration(e);
    } else if (e.key == "max_restarts") {
      svc.max_restarts = unsigned_number(e);
    } else if (e.key == "ready_timeout") {
      svc.ready_timeout = duration(e);
    } else if (e.key == "stop_grace") {
      svc.stop_grace = duration(e);
    } else if (e.key == "register") {
      svc.registers = boolean(e);
    } else if (e.key == "inherit_env") {
      parse_inherit_env(e, svc);
    } else if (e.key == "replicas") {
      replicas = unsigned_number(e);
      if (replicas < 1 || replicas > max_replicas)
        fail(e.mark(), "'replicas' must be from 1 to " + std::to_string(max_replicas));
    } else if (e.key == "max_inflight_per_runtime") {
      svc.max_inflight_per_runtime = unsigned_number(e);
    }
  }
  if (svc.name.empty())
    fail(at, "service has no 'name'");
  if (command == nullptr)
    fail(at, "service '" + svc.name + "' has no 'command'");
  if (svc.runtime_id.empty())
    svc.runtime_id = svc.name;
  if (svc.backoff.count() == 0)
    svc.backoff = std::chrono::milliseconds{1};
  if (svc.max_backoff < svc.backoff)
    svc.max_backoff = svc.backoff;
  return svc;
}

void parse(const YAML::Node& root, const std::string& file_name, const std::string& base_dir,
           host_config& out) {
  if (root.IsNull())
    fail(root.Mark(), "the config is empty");
  for (auto& e : entries(root, "host config", {"manager", "cluster", "services"})) {
    if (e.key == "cluster") {
      if (e.value.IsNull())
        continue;
      if (!e.value.IsMap())
        fail(e.mark(), "'cluster' must be a mapping");
      for (auto it = e.value.begin(); it != e.value.end(); ++it) {
        auto key = it->first.IsScalar() ? it->first.Scalar() : std::string{};
        auto setting = key == "node_name" ? key : "cluster_" + key;
        auto* def = find_setting(setting);
        if (def == nullptr || !is_cluster_setting(setting))
          fail(it->first.Mark(), "unknown key '" + key
                                   + "' in cluster (expected one of: port bind advertise seeds "
                                     "node_name tls_cert_file tls_key_file tls_ca_file insecure "
                                     "heartbeat_interval heartbeat_timeout)");
        if (out.manager.count(setting))
          fail(it->first.Mark(), "duplicate key '" + key + "'");
        entry item{key, it->first, it->second};
        std::string value;
        if (key == "seeds" && item.value.IsSequence()) {
          // A list of host:port, or one comma-separated string.
          for (const auto& s : item.value) {
            if (!s.IsScalar())
              fail(s.Mark(), "each seed must be host:port");
            value += (value.empty() ? "" : ",") + s.Scalar();
          }
        } else {
          value = item.value.IsNull() ? std::string{} : scalar(item);
        }
        if (auto why = check_setting(*def, value); !why.empty())
          fail(item.mark(), why);
        out.manager[setting] = {value, file_name + ":" + std::to_string(item.mark().line + 1)};
      }
    } else if (e.key == "manager") {
      if (e.value.IsNull())
        continue;
      std::vector<std::string_view> keys;
      for (auto& def : settings)
        if (!is_cluster_setting(def.key))
          keys.push_back(def.key);
      // entries() wants an initializer_list; check keys here instead.
      if (!e.value.IsMap())
        fail(e.mark(), "'manager' must be a mapping");
      for (auto it = e.value.begin(); it != e.value.end(); ++it) {
        auto key = it->first.IsScalar() ? it->first.Scalar() : std::string{};
        auto* def = find_setting(key);
        if (def == nullptr || is_cluster_setting(key)) {
          std::string known;
          for (auto k : keys)
            known += " " + std::string{k};
          fail(it->first.Mark(), "unknown key '" + key + "' in manager (expected one of:" + known
                                   + ")");
        }
        if (out.manager.count(key))
          fail(it->first.Mark(), "duplicate key '" + key + "'");
        entry item{key, it->first, it->second};
        auto value = item.value.IsNull() ? std::string{} : scalar(item);
        if (auto why = check_setting(*def, value); !why.empty())
          fail(item.mark(), why);
        out.manager[key] = {value, file_name + ":" + std::to_string(item.mark().line + 1)};
      }
    } else if (e.key == "services") {
      if (e.value.IsNull())
        continue;
      if (!e.value.IsSequence())
        fail(e.mark(), "'services' must be a list");
      std::set<std::string> names, ids;
      for (const auto& node : e.value) {
        std::uint64_t replicas = 1;
        auto svc = parse_service(node, base_dir, replicas);
        if (!names.insert(svc.name).second)
          fail(node.Mark(), "duplicate service name '" + svc.name + "'");
        if (replicas > 1 && !svc.registers)
          fail(node.Mark(), "service '" + svc.name
                              + "': 'replicas' needs runtimes that register (register: true)");
        svc.service = replicas > 1 ? svc.name : std::string{};
        for (std::uint64_t k = 1; k <= replicas; ++k) {
          auto one = svc;
          if (replicas > 1) {
            one.name += "-" + std::to_string(k);
            one.runtime_id += "-" + std::to_string(k);
          }
          if (!ids.insert(one.runtime_id).second)
            fail(node.Mark(), "duplicate runtime_id '" + one.runtime_id + "'");
          out.services.push_back(std::move(one));
        }
      }
    }
  }
}

} // namespace

const char* restart_mode_name(restart_mode m) {
  switch (m) {
    case restart_mode::never: return "never";
    case restart_mode::on_failure: return "on-failure";
    default: return "always";
  }
}

bool parse_host_config(const std::string& text, const std::string& file_name,
                       const std::string& base_dir, host_config& out, std::string& error) {
  host_config result;
  if (!parse_document(text, file_name, error,
                      [&](const YAML::Node& root) { parse(root, file_name, base_dir, result); }))
    return false;
  out = std::move(result);
  return true;
}

bool load_host_config(const std::string& path, host_config& out, std::string& error) {
  std::string text;
  if (!read_file(path, text, error))
    return false;
  error.clear();
  auto dir = directory_of(path, error);
  if (!error.empty())
    return false;
  return parse_host_config(text, path, dir, out, error);
}

std::span<const setting_def> manager_settings() {
  return settings;
}

const setting_def* find_setting(std::string_view key) {
  for (auto& def : settings)
    if (def.key == key)
      return &def;
  return nullptr;
}

bool is_cluster_setting(std::string_view key) {
  return key.starts_with("cluster_") || key == "node_name";
}

std::string setting_env_name(std::string_view key) {
  std::string out = "ACTOR_HOST_";
  for (char c : key)
    out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string setting_flag_name(std::string_view key) {
  std::string out = "--";
  for (char c : key)
    out += c == '_' ? '-' : c;
  return out;
}

std::string check_setting(const setting_def& def, const std::string& value) {
  std::uint64_t n = 0;
  auto name = std::string{def.key};
  switch (def.type) {
    case setting_type::text:
      return {};
    case setting_type::port:
      if (!parse_uint(value, n) || n > 65535)
        return "bad " + name + " '" + value + "': expected a port number 0-65535";
      return {};
    case setting_type::optional_port:
      if (value != "off" && (!parse_uint(value, n) || n > 65535))
        return "bad " + name + " '" + value + "': expected off or a port number 0-65535";
      return {};
    case setting_type::duration:
    case setting_type::positive_duration: {
      auto ms = parse_duration_ms(value);
      if (!ms)
        return "bad " + name + " '" + value
               + "': expected e.g. 250ms, 30s, 2m, 1h or a number of milliseconds";
      if (def.type == setting_type::positive_duration && *ms == 0)
        return "bad " + name + " '" + value + "': must be more than 0";
      return {};
    }
    case setting_type::count:
      if (!parse_uint(value, n) || n == 0)
        return "bad " + name + " '" + value + "': expected a positive integer";
      return {};
    case setting_type::limit:
      if (!parse_uint(value, n))
        return "bad " + name + " '" + value + "': expected a number (0 = no limit)";
      return {};
    case setting_type::threads:
      if (!parse_uint(value, n) || n == 0 || n > 64)
        return "bad " + name + " '" + value + "': expected 1-64";
      return {};
    case setting_type::choice: {
      std::string_view choices = def.choices;
      for (;;) {
        auto bar = choices.find('|');
        if (choices.substr(0, bar) == value)
          return {};
        if (bar == std::string_view::npos)
          break;
        choices.remove_prefix(bar + 1);
      }
      std::string expected{def.choices};
      std::replace(expected.begin(), expected.end(), '|', ',');
      return "bad " + name + " '" + value + "': expected one of " + expected;
    }
  }
  return {};
}

bool resolve_settings(const host_config& file, const std::map<std::string, std::string>& env,
                      const std::map<std::string, std::string>& flags,
                      std::map<std::string, setting_value>& out, std::string& error) {
  std::map<std::string, setting_value> result;
  for (auto& def : settings) {
    auto key = std::string{def.key};
    layer_value in_file, in_flags;
    if (auto i = file.manager.find(key); i != file.manager.end())
      in_file = i->second;
    if (auto i = flags.find(key); i != flags.end())
      in_flags = setting_value{i->second, "flag " + setting_flag_name(key)};
    auto v = effective_value({std::string{def.default_value}, "default"}, in_file,
                             env_value(env, setting_env_name(key), false), in_flags);
    if (auto why = check_setting(def, v.value); !why.empty()) {
      error = v.source + ": " + why;
      return false;
    }
    result[key] = std::move(v);
  }
  out = std::move(result);
  return true;
}

} // namespace actor_host::config
