#pragma once

// bench_load's HTTP mode: the Genkit tools server's routes (POST
// /api/runAction, POST /api/streamAction), which actor-host's HTTP front door
// serves too, driven with the same inputs as the WebSocket mode.

#include "bench/loadgen_options.hpp"

namespace bench {

/// Runs o.scenario (echo or stream) against http://o.host:o.port: N callers
/// x K in flight become N*K keep-alive HTTP/1.1 connections (HTTP/1.1 has
/// one request at a time per connection), each a closed loop. echo: POST
/// /api/runAction {key:/flow/echo, input:{i,s}}; stream: POST
/// /api/streamAction {key:/flow/streamCount, input:{n}}, rate = chunks/s
/// (newline-delimited lines before the final result), latency = time to
/// first chunk; streams still running when the window ends are cancelled
/// (POST /api/cancelAction {traceId}, from their X-Genkit-Trace-Id header).
/// Prints the same JSON result line as the WebSocket mode; returns the exit
/// status.
int run_http_load(const load_options& o);

} // namespace bench
