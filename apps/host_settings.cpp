#include "apps/host_settings.hpp"

#include "net/access_policy.hpp"
#include "net/tls.hpp"
#include "config/duration.hpp"
#include "config/project_root.hpp"
#include "traces/trace_store.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <set>

#include <unistd.h>

namespace actor_host::apps {

namespace {

std::int64_t ms(const std::map<std::string, config::setting_value>& s, const char* key) {
  return config::parse_duration_ms(s.at(key).value).value_or(0);
}

std::uint64_t num(const std::map<std::string, config::setting_value>& s, const char* key) {
  return std::strtoull(s.at(key).value.c_str(), nullptr, 10);
}

caf::timespan span(std::int64_t milliseconds) {
  return std::chrono::duration_cast<caf::timespan>(std::chrono::milliseconds(milliseconds));
}

bool valid_node_name(const std::string& n) {
  return !n.empty() && n.size() <= 63 && std::all_of(n.begin(), n.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0)
    return {};
  return buf;
}

// The cluster settings, checked: a node name fit for `node/id`, seeds as
// host:port, all three TLS files or none (each loadable: caf-openssl would
// abort on a bad one), and no plaintext endpoint off loopback unless asked.
/// The gRPC listener: its own TLS files, else the other listeners'.
std::string resolve_grpc(const std::map<std::string, config::setting_value>& eff,
                         manager_options& m) {
  grpc_listener_options g;
  g.port = static_cast<std::uint16_t>(num(eff, "grpc_port"));
  auto pick = [&](const char* own, const char* shared) {
    auto& v = eff.at(own).value;
    return v.empty() ? eff.at(shared).value : v;
  };
  g.tls.cert_file = pick("grpc_auth_cert_file", "tls_cert_file");
  g.tls.key_file = pick("grpc_auth_key_file", "tls_key_file");
  g.tls.client_ca_file = pick("grpc_client_ca_file", "tls_client_ca_file");
  g.tls.skip_client_verify = eff.at("insecure_skip_grpc_client_verify").value == "true"
                             || eff.at("insecure_skip_client_verify").value == "true";
  if (g.tls.cert_file.empty() != g.tls.key_file.empty())
    return "the gRPC listener's TLS needs both grpc_auth_cert_file and grpc_auth_key_file";
  if (g.tls.cert_file.empty() && !g.tls.client_ca_file.empty())
    return "grpc_client_ca_file needs grpc_auth_cert_file and grpc_auth_key_file";
  m.grpc = std::move(g);
  return {};
}

std::string resolve_cluster(const std::map<std::string, config::setting_value>& eff,
                            manager_options& m) {
  manager_cluster_options c;
  c.port = static_cast<std::uint16_t>(num(eff, "cluster_port"));
  c.bind = eff.at("cluster_bind").value.empty() ? m.bind : eff.at("cluster_bind").value;
  c.advertise = eff.at("cluster_advertise").value;
  c.node_name = eff.at("node_name").value.empty() ? host_name() : eff.at("node_name").value;
  if (!valid_node_name(c.node_name))
    return "node_name '" + c.node_name
           + "' is not a valid node name: 1 to 63 of A-Z a-z 0-9 . _ - (it prefixes runtime ids "
             "as node/id)";
  for (auto& s : net::split_list(eff.at("cluster_seeds").value)) {
    auto colon = s.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == s.size()
        || s.find_first_not_of("0123456789", colon + 1) != std::string::npos
        || std::strtoul(s.c_str() + colon + 1, nullptr, 10) - 1 > 65534)
      return "cluster_seeds: '" + s + "' is not host:port";
    c.seeds.push_back(s);
  }
  c.tls_cert_file = eff.at("cluster_tls_cert_file").value;
  c.tls_key_file = eff.at("cluster_tls_key_file").value;
  c.tls_ca_file = eff.at("cluster_tls_ca_file").value;
  int tls_files = !c.tls_cert_file.empty() + !c.tls_key_file.empty() + !c.tls_ca_file.empty();
  if (tls_files != 0 && tls_files != 3)
    return "cluster mTLS needs all of cluster_tls_cert_file, cluster_tls_key_file and "
           "cluster_tls_ca_file";
  if (tls_files == 3) {
    std::string why;
    if (!net::tls_server_context::load({c.tls_cert_file, c.tls_key_file, c.tls_ca_file, false},
                                       why))
      return "cluster TLS: " + why;
  }
  if (tls_files == 0 && !net::is_loopback_address(c.bind)
      && eff.at("cluster_insecure").value != "true")
    return "refusing to start a plaintext cluster endpoint on " + c.bind
           + ", which is not a loopback address: set cluster_tls_cert_file, cluster_tls_key_file "
             "and cluster_tls_ca_file (mTLS between nodes), or pass --cluster-insecure to let "
             "anyone who reaches the port join (docs/CLUSTER.md)";
  c.heartbeat_interval = std::chrono::milliseconds{ms(eff, "cluster_heartbeat_interval")};
  c.heartbeat_timeout = std::chrono::milliseconds{ms(eff, "cluster_heartbeat_timeout")};
  if (c.heartbeat_timeout <= c.heartbeat_interval)
    return "cluster_heartbeat_timeout must be longer than cluster_heartbeat_interval";
  m.cluster = std::move(c);
  return {};
}

std::string quote_arg(const std::string& a) {
  if (!a.empty() && a.find_first_of(" \t\"',[]{}#:") == std::string::npos)
    return a;
  std::string out = "\"";
  for (char c : a) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + '"';
}

void print_effective(const host_settings& hs, const std::string& config_path) {
  std::printf("# effective configuration: defaults < %s < environment (ACTOR_HOST_*) < flags\n",
              config_path.empty() ? "(no config file)" : config_path.c_str());
  for (bool cluster : {false, true}) {
    std::printf("%s:\n", cluster ? "cluster" : "manager");
    for (auto& def : config::manager_settings()) {
      if (config::is_cluster_setting(def.key) != cluster)
        continue;
      auto& v = hs.effective.at(std::string{def.key});
      // Under cluster: the keys host.yaml uses there.
      auto key = std::string{def.key};
      if (cluster && key.starts_with("cluster_"))
        key = key.substr(8);
      auto line = "  " + key + ": " + quote_arg(v.value);
      std::printf("%-44s # %s\n", line.c_str(), v.source.c_str());
    }
  }
  std::printf("services:%s\n", hs.manager.services.empty() ? " []" : "");
  for (auto& s : hs.manager.services) {
    std::printf("  - name: %s\n", quote_arg(s.name).c_str());
    std::string cmd;
    for (auto& a : s.command)
      cmd += (cmd.empty() ? "" : ", ") + quote_arg(a);
    std::printf("    command: [%s]\n", cmd.c_str());
    std::printf("    runtime_id: %s\n", quote_arg(s.runtime_id).c_str());
    if (!s.cwd.empty())
      std::printf("    cwd: %s\n", quote_arg(s.cwd).c_str());
    if (!s.env.empty()) {
      std::printf("    env:\n");
      for (auto& [k, v] : s.env)
        std::printf("      %s: %s\n", k.c_str(), quote_arg(v).c_str());
    }
    if (s.inherit_env_all) {
      std::printf("    inherit_env: true\n");
    } else if (!s.inherit_env.empty()) {
      std::string names;
      for (auto& n : s.inherit_env)
        names += (names.empty() ? "" : ", ") + quote_arg(n);
      std::printf("    inherit_env: [%s]\n", names.c_str());
    }
    std::printf("    restart: %s\n", config::restart_mode_name(s.restart));
    std::printf("    backoff: %lldms\n", static_cast<long long>(s.backoff.count()));
    std::printf("    max_backoff: %lldms\n", static_cast<long long>(s.max_backoff.count()));
    std::printf("    max_restarts: %llu\n", static_cast<unsigned long long>(s.max_restarts));
    std::printf("    ready_timeout: %lldms\n", static_cast<long long>(s.ready_timeout.count()));
    std::printf("    stop_grace: %lldms\n", static_cast<long long>(s.stop_grace.count()));
    std::printf("    register: %s\n", s.registers ? "true" : "false");
  }
}

} // namespace

void add_host_options(CLI::App& app, host_flags& f) {
  app.set_version_flag("--version", std::string{"actor-host " ACTOR_HOST_VERSION});
  app.footer("Client commands: actor-host runtimes | actions | run | cancel | cluster  (--help on "
             "each)\n"
             "Configuration: actor-host config [flags]  prints the effective settings and "
             "their sources\n"
             "Attached runtime: actor-host [flags] -- <command...>  runs the command as a "
             "runtime of this manager");
  app.add_option("--role", f.role,
                 "manager (the hub runtimes dial into) or runtime (hosts actions, dials a manager)")
    ->check(CLI::IsMember({"manager", "runtime"}))
    ->capture_default_str();
  app.add_option("--config", f.config,
                 "manager: host config (YAML, docs/HOST_CONFIG.md); runtime: runtime config with "
                 "program-backed actions (docs/PROGRAM_ACTIONS.md)");
  app.add_flag("--demo", f.demo,
               "manager: also run the built-in demo runtime as a service; runtime: host the "
               "demo/conformance actions");
  for (auto& def : config::manager_settings()) {
    auto key = std::string{def.key};
    std::string help{def.help};
    if (!def.default_value.empty())
      help += " (default " + std::string{def.default_value} + ")";
    help += "; env " + config::setting_env_name(key);
    // A yes/no setting given alone on the command line means yes (`--insecure`).
    const bool yes_no = def.choices == "true|false";
    auto* opt = app.add_option_function<std::string>(
      config::setting_flag_name(key),
      [&f, key, yes_no](const std::string& v) { f.settings[key] = yes_no && v.empty() ? "true" : v; },
      help);
    if (yes_no)
      opt->expected(0, 1);
  }
  auto* rt = app.add_option_group("runtime role");
  rt->add_option("--manager", f.manager_url,
                 "manager URL (default $GENKIT_REFLECTION_V2_SERVER), e.g. ws://localhost:3200; "
                 "cluster nodes as a comma-separated list, tried in order, the next at once when "
                 "one fails or drops");
  rt->add_option("--id", f.runtime_id,
                 "runtime id (default $GENKIT_RUNTIME_ID, else the pid); with -- <command>, the "
                 "attached runtime's id");
  rt->add_option("--name", f.runtime_name, "display name (default: the id)");
  rt->add_option("--tls-ca-file", f.tls_ca_file,
                 "wss:// manager: PEM CA(s) its certificate must chain to (default: the system "
                 "store; env ACTOR_HOST_TLS_CA_FILE). The runtime's client certificate, if the "
                 "manager wants one: --tls-cert-file and --tls-key-file");
  app.add_option("command", f.command, "after --: a command to run as this manager's runtime");
}

std::string stray_words_problem(int argc, char** argv, const std::vector<std::string>& command) {
  std::size_t after_dashes = 0;
  for (int i = 1; i < argc; ++i)
    if (std::string_view{argv[i]} == "--") {
      after_dashes = static_cast<std::size_t>(argc - i - 1);
      break;
    }
  if (command.size() <= after_dashes)
    return {};
  return "unknown command '" + command.front()
         + "'; commands: runtimes, actions, run, cancel, cluster, config; a program to run as "
           "this manager's runtime goes after --: actor-host [flags] -- <command...>";
}

std::string resolve_host_settings(const host_flags& f, host_settings& out) {
  config::host_config file;
  if (f.role == "manager" && !f.config.empty()) {
    std::string err;
    if (!config::load_host_config(f.config, file, err))
      return err;
  }
  if (f.role == "runtime" && !f.command.empty())
    return "-- <command> is for the manager role";
  std::map<std::string, config::setting_value> eff;
  std::string err;
  if (!config::resolve_settings(file, config::process_environment("ACTOR_HOST_"), f.settings, eff, err))
    return err;
  host_settings hs;
  hs.effective = eff;
  hs.log_level = eff.at("log_level").value;
  hs.log_format = eff.at("log_format").value;
  hs.scheduler_threads = static_cast<unsigned>(num(eff, "scheduler_threads"));
  hs.io_threads = static_cast<unsigned>(num(eff, "io_threads"));
  hs.actors_on_io_threads = eff.at("actors_on_io_threads").value == "true";
  auto& m = hs.manager;
  m.bind = eff.at("bind").value;
  m.port = static_cast<std::uint16_t>(num(eff, "port"));
  m.http_port = static_cast<std::uint16_t>(num(eff, "http_port"));
  m.worker_port = static_cast<std::uint16_t>(num(eff, "worker_port"));
  if (eff.at("worker_rbac_port").value != "off")
    m.worker_rbac_port = static_cast<std::uint16_t>(num(eff, "worker_rbac_port"));
  m.rbac.auth_function = eff.at("worker_auth_function").value;
  m.rbac.expose_functions
    = registry::worker_rbac_config::parse_list(eff.at("worker_expose_functions").value);
  m.rbac.on_function_registration = eff.at("worker_on_function_registration").value;
  m.rbac.on_trigger_type_registration = eff.at("worker_on_trigger_type_registration").value;
  m.rbac.on_trigger_registration = eff.at("worker_on_trigger_registration").value;
  m.rbac.middleware = eff.at("worker_middleware").value;
  m.channels.max_bytes = num(eff, "max_channel_bytes");
  m.channels.max_per_worker = num(eff, "max_channels_per_worker");
  m.max_frame_bytes = num(eff, "max_frame_bytes");
  m.max_body_bytes = num(eff, "max_body_bytes");
  // Read when the role starts (load_auth_token), so that `actor-host config`
  // works without the secret at hand.
  m.auth_token_file = eff.at("auth_token_file").value;
  m.allowed_origins = net::split_list(eff.at("allowed_origins").value);
  m.allowed_hosts = net::split_list(eff.at("allowed_hosts").value);
  m.max_write_queue_bytes = num(eff, "max_write_queue_bytes");
  m.max_response_bytes_total = num(eff, "max_response_bytes_total");
  m.max_connections = num(eff, "max_connections");
  if (!eff.at("tls_cert_file").value.empty() || !eff.at("tls_key_file").value.empty()) {
    net::tls_server_files tls{eff.at("tls_cert_file").value, eff.at("tls_key_file").value,
                              eff.at("tls_client_ca_file").value,
                              eff.at("insecure_skip_client_verify").value == "true"};
    if (f.role == "manager" && (tls.cert_file.empty() || tls.key_file.empty()))
      return "TLS needs both tls_cert_file and tls_key_file";
    if (f.role == "manager")
      m.tls = std::move(tls);
  } else if (f.role == "manager" && !eff.at("tls_client_ca_file").value.empty()) {
    return "tls_client_ca_file needs tls_cert_file and tls_key_file (the listeners speak TLS)";
  }
  m.insecure = eff.at("insecure").value == "true";
  // Peers off loopback are authenticated by a token or by client
  // certificates; TLS alone encrypts but says nothing of who is calling.
  const bool mtls = m.tls && !m.tls->client_ca_file.empty() && !m.tls->skip_client_verify;
  m.remote_without_token = m.insecure || mtls;
  if (f.role == "manager" && !net::is_loopback_address(m.bind) && m.auth_token_file.empty()
      && !m.remote_without_token)
    return "refusing to listen on " + m.bind
           + ", which is not a loopback address, without authentication: set auth_token_file "
             "(callers, runtimes and workers then need the token) or tls_client_ca_file (mTLS; "
             "with tls_cert_file and tls_key_file), or pass --insecure to serve anyone who can "
             "reach the port (docs/SECURITY.md)";
  if (f.role == "manager" && eff.at("grpc_port").value != "off")
    if (auto err = resolve_grpc(eff, m); !err.empty())
      return err;
  m.policy.request_timeout = span(ms(eff, "request_timeout"));
  m.policy.run_timeout = span(ms(eff, "run_timeout"));
  m.policy.max_calls_per_caller = num(eff, "max_calls_per_caller");
  m.policy.max_bidi_input_bytes = num(eff, "max_bidi_input_bytes");
  m.policy.max_unread_frames = num(eff, "max_unread_frames");
  m.admission.max_in_flight_per_runtime = static_cast<std::int32_t>(
    std::min<std::uint64_t>(num(eff, "max_inflight_per_runtime"), 1u << 30));
  m.admission.max_queued_per_service = num(eff, "max_queued_per_service");
  m.policy.idempotent_actions = net::split_list(eff.at("retry_idempotent").value);
  m.drain_timeout = std::chrono::milliseconds{ms(eff, "drain_timeout")};
  m.first_message_timeout = std::chrono::milliseconds{ms(eff, "first_message_timeout")};
  m.max_client_resets = num(eff, "max_client_resets");
  m.failover_hold = std::chrono::milliseconds{ms(eff, "failover_hold")};
  m.write_env_file = eff.at("write_env_file").value;
  m.ui_assets = eff.at("ui_assets").value;
  m.otlp_endpoint = eff.at("otlp_endpoint").value;
  auto& root = eff.at("project_root").value;
  m.project_root = root.empty() ? config::find_project_root(config::current_directory()) : root;
  // Traces are on unless turned off: a manager is its runtimes' telemetry
  // server, as `genkit start` is, with the store under the project root.
  if (auto& t = eff.at("trace_store").value; t.empty()) {
    m.trace_store = traces::default_store_path(m.project_root);
    m.trace_store_default = true;
  } else if (t != "none") {
    m.trace_store = t;
  }
  m.trace_retention.max_age = std::chrono::milliseconds{ms(eff, "trace_max_age")};
  m.trace_retention.max_bytes = num(eff, "trace_max_bytes");
  if (f.role == "manager" && eff.at("cluster_port").value != "off")
    if (auto err = resolve_cluster(eff, m); !err.empty())
      return err;
  if (f.role == "manager") {
    m.services = file.services;
    if (f.demo) {
      config::service_spec demo;
      demo.name = "demo";
      demo.runtime_id = "demo";
      demo.command = {"actor-host", "--role", "runtime", "--demo"};
      m.services.push_back(std::move(demo));
    }
    if (!f.command.empty()) {
      config::service_spec attached;
      attached.name = std::filesystem::path{f.command.front()}.filename().string();
      attached.runtime_id = !f.runtime_id.empty() ? f.runtime_id : attached.name;
      attached.command = f.command;
      attached.restart = config::restart_mode::never;
      // Typed in the user's shell, like `genkit start -- <command>`: it keeps
      // that shell's variables (API keys), all but the manager's secrets.
      attached.inherit_env_all = true;
      m.services.push_back(std::move(attached));
    }
    std::set<std::string> names, ids;
    for (auto& s : m.services) {
      if (!names.insert(s.name).second)
        return "two services are named '" + s.name + "'";
      if (!ids.insert(s.runtime_id).second)
        return "two services have the runtime id '" + s.runtime_id + "' (use --id)";
      // Replicas of a host.yaml service belong to it whatever name they
      // register with; a service may set its own cap.
      auto service = s.service.empty() ? s.runtime_id : s.service;
      if (!s.service.empty())
        m.admission.service_of_id[s.runtime_id] = s.service;
      if (s.max_inflight_per_runtime)
        m.admission.per_service[service] = static_cast<std::int32_t>(
          std::min<std::uint64_t>(*s.max_inflight_per_runtime, 1u << 30));
    }
  }
  out = std::move(hs);
  return {};
}

std::string load_auth_token(manager_options& m) {
  if (m.auth_token_file.empty())
    return {};
  return net::read_token_file(m.auth_token_file, m.auth_token);
}

int run_config_command(int argc, char** argv) {
  host_flags f;
  CLI::App app{"actor-host config: prints the effective configuration (every manager setting "
               "with its source, and the services) after defaults < config file < environment "
               "< flags. Exit 0, or 2 on a bad config.",
               "actor-host config"};
  add_host_options(app, f);
  try {
    app.parse(argc - 1, argv + 1);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  host_settings hs;
  if (auto err = resolve_host_settings(f, hs); !err.empty()) {
    std::fprintf(stderr, "error: %s\n", err.c_str());
    return 2;
  }
  print_effective(hs, f.config);
  return 0;
}

} // namespace actor_host::apps
