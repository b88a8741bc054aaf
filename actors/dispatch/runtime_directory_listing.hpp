#pragma once

#include "actors/dispatch/runtime_directory.hpp"

#include <string>

namespace actor_host {

/// GET /api/runtimes: every RuntimeInfo; in a cluster each with its `node`
/// and `qualifiedId` ("node/id"), this node's first, then the others'.
std::string runtimes_json(const directory_state& st);

/// GET /api/services: each service (first registered first; `default` marks
/// the one calls without runtimeId or runtimeName go to) with its replicas,
/// another node's with their node and the calls this node has there.
std::string services_json(const directory_state& st);

} // namespace actor_host
