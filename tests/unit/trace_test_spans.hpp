#pragma once

// Spans the trace store suites build their files from.

#include "traces/run_span.hpp"

#include <cstdio>
#include <random>
#include <string>
#include <utility>

namespace actor_host::testing {

/// 32 hex digits, as Genkit's runtimes make trace ids (not in order).
inline std::string random_trace_id(std::mt19937_64& rng) {
  char b[40];
  std::snprintf(b, sizeof b, "%016llx%016llx", static_cast<unsigned long long>(rng()),
                static_cast<unsigned long long>(rng()));
  return b;
}

/// A route span as the front door records one: runtime "rt", /flow/echo,
/// 100 ms long, ok.
inline traces::run_span test_route_span(std::string trace, std::string id, std::string parent,
                                        std::string name = "actor-host rt") {
  traces::run_span s;
  s.trace_id = std::move(trace);
  s.span_id = std::move(id);
  s.parent_span_id = std::move(parent);
  s.kind = "actor-host";
  s.action_type = "route";
  s.name = std::move(name);
  s.start_ms = 1700000000000;
  s.end_ms = 1700000000100;
  s.attributes = {{"actor-host:runtime", "rt"}, {"actor-host:action", "/flow/echo"}};
  return s;
}

} // namespace actor_host::testing
