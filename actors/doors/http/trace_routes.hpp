#pragma once

#include "net/http_exchange.hpp"

#include <caf/fwd.hpp>

#include <map>
#include <string>

namespace actor_host {

/// The telemetry server's routes (@genkit-ai/telemetry-server's API) on the
/// manager's API port, answered from the trace keeper:
///   POST /api/traces        a TraceData document → 200 "OK", 400 why not
///   GET  /api/traces        ?limit (1-1000, default 10) &continuationToken
///                           → {"traces":[TraceData...],"continuationToken"?}
///   GET  /api/traces/<id>   → TraceData, 404 when unknown
///   POST /api/otlp/v1/traces (and /api/otlp): OTLP/HTTP JSON → {} (stored as
///        TraceData); /api/otlp/v1/logs and /metrics → {} (accepted, not kept)
/// Input is checked here, on the I/O thread; each answer comes from a
/// short-lived actor that asks the keeper. Returns false when `req` is none
/// of these routes.
bool serve_trace_route(caf::actor_system& sys, const caf::actor& keeper,
                       net::http_request& req, const net::http_responder_ptr& res);

/// The tools server's tRPC queries on traces (trpc.hpp): `listTraces`
/// ({limit?, continuationToken?}; no store: no traces) and `getTrace`
/// ({traceId}). `input` is the query's input as parameters.
void serve_trace_procedure(caf::actor_system& sys, const caf::actor& keeper,
                           const std::string& procedure,
                           const std::map<std::string, std::string>& input,
                           const net::http_responder_ptr& res);

} // namespace actor_host
