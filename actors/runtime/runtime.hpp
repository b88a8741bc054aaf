#pragma once

#include "actions/action.hpp"

#include "actors/common/component.hpp"
#include "net/access_policy.hpp"
#include "net/tls.hpp"

#include <caf/fwd.hpp>

#include <memory>
#include <string>

namespace actor_host {

namespace net {
class io_runtime;
}

/// Reflection V1: the runtime serves Genkit's HTTP reflection API and
/// announces itself with a runtime file, as a JS runtime started with
/// GENKIT_ENV=dev does, instead of dialling a manager.
struct reflection_v1_options {
  bool enabled = false;
  std::string host = "127.0.0.1"; // GENKIT_REFLECTION_HOST
  std::uint16_t port = 0;          // GENKIT_REFLECTION_PORT; 0: the first free in 3100-3199
  std::string project_root;        // the runtime file goes under <root>/.genkit/runtimes
  net::access_policy access;       // loopback callers, JSON posts
  std::size_t max_body_bytes = 8u << 20;
  std::size_t max_runs = 1024; // runs in flight; more get 429 RESOURCE_EXHAUSTED
};

struct runtime_options {
  /// ws://host:port or wss://host:port; several (cluster nodes) joined by
  /// commas are tried in order, the next at once when one fails or drops.
  std::string manager_url;
  /// For a wss:// manager: trust and an optional client certificate.
  net::tls_client_files tls;
  std::string id;
  std::string name;
  std::size_t max_unread_frames = 256;          // read window of the manager link
  std::size_t max_bidi_input_bytes = 16u << 20; // input queued per bidi run
  reflection_v1_options v1;                     // enabled: no manager_url
  /// GENKIT_TELEMETRY_SERVER: where the runs' spans go, whatever the manager
  /// (V2 register reply) or the CLI (V1 /api/notify) says; "" = from them.
  std::string telemetry_url;
};

/// The runtime role as one component: a runtime_supervisor whose
/// manager_link dials the manager and serves the catalog's actions. If the
/// supervisor gives up on a link that keeps failing, the process is sent
/// SIGTERM, so it ends through main's ordinary shutdown instead of lingering.
/// With `v1.enabled` it serves Reflection V1 instead: an HTTP listener whose
/// runs go to a v1_reflection actor (the root of that tree; its unexpected
/// end ends the process the same way), and a runtime file.
class runtime : public component {
public:
  runtime(caf::actor_system& sys, net::io_runtime& io, runtime_options opts,
          actions::catalog_ptr catalog);
  ~runtime() override;
  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;

  std::string start() override;

  /// Through the supervisor: cancels the runs in flight, waits for them
  /// (bounded: 10 s, then everything is killed), closes the link.
  void stop() override;

private:
  std::string start_v1();

  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace actor_host
