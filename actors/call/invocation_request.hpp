#pragma once

#include <caf/meta/type_name.hpp>
#include <caf/timespan.hpp>

#include <string>

namespace actor_host {

/// Which protocol the caller of an iii function speaks, i.e. the shape of
/// the (done_atom, tag, call_end) it gets back.
enum class reply_format {
  iii,    // raw = the result ("" = none) or an iii error object {code, message}
  genkit, // raw = {result, telemetry:{traceId}} or a JSON-RPC error with a Status
};

/// A call of an iii function, as the caller's side made it.
struct invocation_request {
  std::string function_id;      // as registered (prefix included)
  std::string data = "null";    // raw JSON payload, _caller_worker_id already added
  std::string metadata;         // raw JSON, "" when absent
  std::string traceparent;
  std::string baggage;
  std::string caller_worker_id; // "" for front-door callers
  bool wants_reply = true;      // false for void calls
  reply_format format = reply_format::iii;
  caf::timespan timeout{0};     // 0 = none
};

/// Invocations cross nodes of a cluster as they are (actors/cluster/).
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, invocation_request& x) {
  return f(caf::meta::type_name("invocation_request"), x.function_id, x.data, x.metadata,
           x.traceparent, x.baggage, x.caller_worker_id, x.wants_reply, x.format, x.timeout);
}

} // namespace actor_host
