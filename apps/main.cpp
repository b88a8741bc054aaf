// actor-host: parse flags and config, wire the components, run until a
// signal (or the attached `-- <command>` ends). Nothing else lives here.
#include "actors/common/io_scheduler.hpp"
#include "actors/common/messages.hpp"
#include "actors/manager/manager.hpp"
#include "actors/runtime/runtime.hpp"
#include "apps/caf_settings.hpp"
#include "apps/cli.hpp"
#include "apps/exit_latch.hpp"
#include "apps/host_settings.hpp"
#include "net/access_policy.hpp"
#include "net/io_runtime.hpp"
#include "obs/log.hpp"
#include "actions/demo_actions.hpp"
#include "config/runtime_config.hpp"

#include <CLI/CLI.hpp>
#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>

#include <algorithm>
#include <charconv>
#include <functional>

#include <pthread.h>
#include <sys/resource.h>

namespace {

using namespace actor_host;

// No manager to dial: Reflection V1, as a Genkit runtime started with
// GENKIT_ENV=dev (what `genkit start -- <cmd>` sets) serves it.
bool reflection_v1_setup(const apps::host_settings& hs, runtime_options& ro) {
  auto env = config::process_environment();
  auto get = [&](const char* k) {
    auto i = env.find(k);
    return i == env.end() ? std::string{} : i->second;
  };
  if (get("GENKIT_ENV") != "dev") {
    spdlog::error("no manager to dial: give --manager ws://host:port or set "
                  "GENKIT_REFLECTION_V2_SERVER (Reflection V2), or set GENKIT_ENV=dev to serve "
                  "Reflection V1 over HTTP as `genkit start` expects");
    return false;
  }
  auto& v1 = ro.v1;
  v1.enabled = true;
  if (auto port = get("GENKIT_REFLECTION_PORT"); !port.empty()) {
    unsigned long p = 0;
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
    if (ec != std::errc{} || end != port.data() + port.size() || p == 0 || p > 65535) {
      spdlog::error("invalid GENKIT_REFLECTION_PORT: '{}' is not a port number (1-65535)", port);
      return false;
    }
    v1.port = static_cast<std::uint16_t>(p);
  }
  if (auto host = get("GENKIT_REFLECTION_HOST"); !host.empty())
    v1.host = host;
  v1.project_root = hs.manager.project_root;
  // The same Origin/Host/token rules as the manager's listeners.
  v1.access.allowed_origins = hs.manager.allowed_origins;
  v1.access.allowed_hosts = hs.manager.allowed_hosts;
  v1.access.token = hs.manager.auth_token;
  v1.access.json_posts = true;
  v1.access.open_paths = {"/api/__health"};
  v1.max_body_bytes = hs.manager.max_body_bytes;
  v1.max_runs = std::max<std::size_t>(hs.manager.policy.max_calls_per_caller, 1);
  return true;
}

// Builds the runtime's catalog from --demo and --config, and fills in the
// link settings the config file gives (flags and environment win).
bool runtime_setup(const apps::host_flags& f, const apps::host_settings& hs,
                   actions::action_catalog& catalog, runtime_options& ro) {
  config::runtime_config cfg;
  if (!f.config.empty()) {
    std::string err;
    if (!config::load_runtime_config(f.config, cfg, err)) {
      spdlog::error("{}", err);
      return false;
    }
  }
  try {
    if (f.demo)
      actions::add_demo_actions(catalog);
    for (auto& spec : cfg.actions)
      catalog.add(actions::make_program_action(std::move(spec)));
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return false;
  }
  if (catalog.actions().empty()) {
    spdlog::error("nothing to host: give --demo and/or --config FILE with actions");
    return false;
  }
  auto link = config::resolve_runtime_link(
    {f.manager_url, f.runtime_id, f.runtime_name, f.tls_ca_file}, config::process_environment(),
    cfg);
  ro.manager_url = std::move(link.manager_url);
  if (auto e = config::process_environment(); e.count("GENKIT_TELEMETRY_SERVER"))
    ro.telemetry_url = e.at("GENKIT_TELEMETRY_SERVER");
  ro.id = std::move(link.id);
  ro.name = std::move(link.name);
  ro.tls.ca_file = std::move(link.tls_ca_file);
  // The client certificate shares the manager's flags (and env) by name.
  ro.tls.cert_file = hs.effective.at("tls_cert_file").value;
  ro.tls.key_file = hs.effective.at("tls_key_file").value;
  if (ro.manager_url.empty())
    return reflection_v1_setup(hs, ro);
  return true;
}

// Signals are blocked in every thread and collected by one thread with
// sigwait, so no handler runs inside asio or CAF code. SIGHUP reloads.
void watch_signals(const sigset_t& set, apps::exit_latch& latch, std::function<void()> on_hup) {
  std::thread{[set, &latch, on_hup = std::move(on_hup)] {
    for (;;) {
      int sig = 0;
      if (sigwait(&set, &sig) != 0)
        continue;
      if (sig == SIGHUP)
        on_hup();
      else
        latch.signal(sig);
    }
  }}.detach();
}

// The process's accepted connections share one budget below the descriptor
// limit (raised to its hard limit first), so that a flood meets a clear 503
// before EMFILE. One budget for all listeners, not a share each: 10,000
// runtimes may use the reflection port's share of the descriptors while the
// API and worker ports hold a few. The reserve keeps descriptors for what is
// not an accepted connection: log and config files, children's pipes,
// outgoing links, CAF's and asio's own.
void fit_descriptor_limit(net::connection_budget& budget) {
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0)
    return;
  if (rl.rlim_cur < rl.rlim_max) {
    auto want = rl;
    want.rlim_cur = rl.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &want) == 0)
      rl = want;
  }
  if (rl.rlim_cur == RLIM_INFINITY)
    return;
  // 256 plus 1/32 of the limit (881 of 20,000): children and links grow
  // with the deployment, not with the connections.
  const rlim_t reserve = 256 + rl.rlim_cur / 32;
  // A limit that does not even cover the reserve leaves no budget worth
  // having: connections then meet EMFILE, which the accept path sheds with
  // a 503 too (interop test "out of file descriptors").
  if (rl.rlim_cur <= reserve + 16)
    return;
  auto fit = static_cast<std::size_t>(rl.rlim_cur - reserve);
  budget.set_limit(fit);
  spdlog::info("connections of all listeners together capped at {} to fit the file descriptor "
               "limit {}",
               fit, static_cast<unsigned long long>(rl.rlim_cur));
}

} // namespace

int main(int argc, char** argv) {
  if (argc > 1 && apps::is_cli_command(argv[1]))
    return apps::run_cli(argc, argv);
  if (argc > 1 && std::string_view{argv[1]} == "config")
    return apps::run_config_command(argc, argv);

  apps::host_flags f;
  CLI::App app{"actor-host: hosts services and lets tools and services discover and call them "
               "(Genkit Reflection V2)."};
  apps::add_host_options(app, f);
  CLI11_PARSE(app, argc, argv);
  if (auto err = apps::stray_words_problem(argc, argv, f.command); !err.empty()) {
    std::fprintf(stderr, "error: %s\n", err.c_str());
    return 2;
  }

  apps::host_settings hs;
  if (auto err = apps::resolve_host_settings(f, hs); !err.empty()) {
    std::fprintf(stderr, "error: %s\n", err.c_str());
    return 2;
  }
  if (auto err = apps::load_auth_token(hs.manager); !err.empty()) {
    std::fprintf(stderr, "error: %s\n", err.c_str());
    return 2;
  }
  if (auto err = obs::setup_logging(hs.log_format, hs.log_level); !err.empty()) {
    std::fprintf(stderr, "error: %s\n", err.c_str());
    return 2;
  }

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  apps::exit_latch latch;

  caf::actor_system_config cfg;
  if (auto err = apps::apply_caf_settings(cfg, hs.scheduler_threads,
                                           hs.actors_on_io_threads); !err.empty()) {
    std::fprintf(stderr, "error: %s\n", err.c_str());
    return 2;
  }
  cfg.add_message_types<caf::id_block::actor_host>();
  if (f.role == "manager" && hs.manager.cluster)
    apps::apply_cluster_settings(cfg, *hs.manager.cluster);
  caf::actor_system sys{cfg};

  net::io_runtime io{hs.io_threads};
  // Actors run on the I/O threads while they run (io_scheduler.hpp); on
  // CAF's worker before and after, so nothing waits on a stopped context.
  attach_io_scheduler(sys, io.context());
  struct io_scheduler_binding {
    caf::actor_system& sys;
    ~io_scheduler_binding() {
      detach_io_scheduler(sys); // before `io` goes, on every return path
    }
  } binding{sys};
  auto stop_io = [&] {
    detach_io_scheduler(sys);
    io.stop();
  };
  std::unique_ptr<manager> mgr;
  std::unique_ptr<component> main_component;
  if (f.role == "runtime") {
    auto catalog = std::make_shared<actions::action_catalog>();
    runtime_options ro;
    if (!runtime_setup(f, hs, *catalog, ro))
      return 1;
    ro.max_unread_frames = hs.manager.policy.max_unread_frames;
    ro.max_bidi_input_bytes = hs.manager.policy.max_bidi_input_bytes;
    // auth_token_file also serves the runtime role: the token rides in the
    // query, as for the children the manager starts.
    if (!hs.manager.auth_token.empty()) {
      // Each manager of the list gets it (cluster nodes share one token).
      std::string with_token;
      for (auto& url : net::split_list(ro.manager_url)) {
        if (url.find("token=") == std::string::npos)
          url = net::url_with_token(url, hs.manager.auth_token);
        with_token += (with_token.empty() ? "" : ",") + url;
      }
      ro.manager_url = std::move(with_token);
    }
    main_component = std::make_unique<runtime>(sys, io, ro, std::move(catalog));
  } else {
    auto opts = hs.manager;
    fit_descriptor_limit(*io.budget());
    opts.on_service_exit = [&latch, attached = !f.command.empty()](int code, std::string why) {
      // Only the attached `-- <command>` ends the manager; configured
      // services are restarted or left stopped per their policy.
      if (attached)
        latch.finish(code, std::move(why));
    };
    opts.on_drain_request = [&latch] { latch.finish(0, "drain requested (actor-host drain)"); };
    mgr = std::make_unique<manager>(sys, io, std::move(opts));
  }
  component& comp = mgr ? static_cast<component&>(*mgr) : *main_component;
  io.start();
  watch_signals(signals, latch, [&mgr, &f] {
    if (mgr) {
      mgr->reload_tls(); // logs and counts its outcome
      // host.yaml (and the flags and environment, as at start) read again:
      // services whose spec changed restart one replica at a time.
      apps::host_settings next;
      if (auto err = apps::resolve_host_settings(f, next); !err.empty())
        spdlog::error("SIGHUP: the configuration does not load, services unchanged: {}", err);
      else
        mgr->reload_services(std::move(next.manager.services));
    } else
      spdlog::info("SIGHUP ignored (the runtime role reads its TLS files at each connect)");
  });
  if (auto err = comp.start(); !err.empty()) {
    spdlog::error("cannot start: {}", err);
    comp.stop();
    stop_io();
    return 1;
  }
  auto why = latch.wait();
  int sig = why.signal != 0 ? why.signal : SIGTERM;
  if (why.signal != 0)
    spdlog::info("{} received, shutting down", why.signal == SIGINT ? "SIGINT" : "SIGTERM");
  else
    spdlog::info("shutting down: {}", why.reason);
  if (mgr)
    mgr->stop(sig);
  else
    comp.stop();
  stop_io();
  spdlog::info("stopped");
  return why.signal != 0 ? 0 : why.exit_code;
}
