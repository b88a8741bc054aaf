#pragma once

#include "actions/action.hpp"

#include "actors/common/component.hpp"
#include "net/tls.hpp"

#include <caf/fwd.hpp>

#include <memory>
#include <string>

namespace actor_host {

namespace net {
class io_runtime;
}

struct runtime_options {
  std::string manager_url; // ws://host:port or wss://host:port
  /// For a wss:// manager: trust and an optional client certificate.
  net::tls_client_files tls;
  std::string id;
  std::string name;
  std::size_t max_unread_frames = 256;          // read window of the manager link
  std::size_t max_bidi_input_bytes = 16u << 20; // input queued per bidi run
};

/// The runtime role as one component: a runtime_supervisor whose
/// manager_link dials the manager and serves the catalog's actions. If the
/// supervisor gives up on a link that keeps failing, the process is sent
/// SIGTERM, so it ends through main's ordinary shutdown instead of lingering.
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
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace actor_host
