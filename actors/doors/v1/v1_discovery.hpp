#pragma once

#include "actors/common/live_counts.hpp"
#include "actors/common/messages.hpp"
#include "net/transport.hpp"
#include "registry/runtime_file.hpp"

#include <caf/stateful_actor.hpp>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace actor_host {

/// A Reflection V1 runtime the manager reaches: its runtime connection and
/// the transport under it (closed when the file goes away).
struct v1_connection {
  caf::actor conn; // runtime_connection
  net::transport_ptr link;
};

struct v1_discovery_options {
  std::string runtimes_dir; // <project root>/.genkit/runtimes
  /// Connects to a runtime a file announces (manager.cpp: a v1_runtime_link
  /// under a runtime_connection, which registers it in the directory).
  std::function<v1_connection(const registry::runtime_file&)> connect;
  /// 0: scans only when told (tests).
  std::chrono::milliseconds scan_interval{1000};
  std::size_t max_files = 256; // runtime files looked at per scan
  /// The manager's listening ports: a runtime file may not point at them.
  std::vector<std::uint16_t> own_ports;
};

struct v1_discovery_state {
  struct tracked {
    std::filesystem::file_time_type mtime;
    std::string id;
    std::int64_t pid = 0;
    v1_connection live; // conn null: refused or ended, not tried again until the file changes
  };
  v1_discovery_options opts;
  std::map<std::string, tracked> files; // by file name
  bool over_cap_logged = false;
  static inline const char* name = "v1_discovery";
};

/// Watches a Genkit project's runtime files as Genkit's CLI does (it
/// polls; the CLI uses chokidar): every valid file of a runtime with a
/// loopback http:// URL is connected (the link health-checks it first and
/// every 5 s); a file that goes away closes its connection; a connection
/// that ends (a failed health check) leaves its file alone unless its pid is
/// gone, in which case the file is deleted as the CLI does. Runs detached:
/// it reads the disk. The connections are the supervisor's (connect adopts
/// them): they end with the manager, not with this actor.
///
/// - (scan_atom): read the folder now (also its own timer)
caf::behavior v1_discovery(caf::stateful_actor<v1_discovery_state>* self,
                           v1_discovery_options opts);

/// Why a runtime file's URL is not one the manager dials ("" if it is):
/// http:// on a loopback host only, since files are written by whoever can
/// write in the project, and none of the manager's own listeners (`own_ports`):
/// a file pointing at our API made every call come back to us, 1,024 deep.
std::string v1_url_problem(const std::string& url,
                           const std::vector<std::uint16_t>& own_ports = {});

} // namespace actor_host
