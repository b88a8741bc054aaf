#pragma once

#include <caf/atom.hpp>
#include <caf/error.hpp>
#include <caf/make_message.hpp>
#include <caf/meta/type_name.hpp>

#include <cstdint>
#include <string>
#include <utility>

namespace actor_host {

/// How a call failed, as a value. Made once, where the error is made (the
/// manager's own, errors.hpp) or where it arrives (a runtime's or worker's
/// error object, error_of()); every front door turns it into its wire shape
/// from these fields without parsing JSON: the JSON-RPC error object as it
/// is, the HTTP status, the gRPC status, the tools server's `{error: ...}`.
struct call_error {
  std::int32_t status = 2;  // its Genkit Status code (wire::status_code; 2 UNKNOWN)
  std::int32_t http = 500;  // the HTTP status a door answers it with
  std::string message;      // the Status message (else the JSON-RPC message)
  std::string object;       // the JSON-RPC error object, as /api/ws and iii callers get it
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, call_error& x) {
  return f(caf::meta::type_name("call_error"), x.status, x.http, x.message, x.object);
}

/// How a call ended: `(done_atom, tag, call_end)` to its caller.
struct call_end {
  bool ok = false;
  std::string result; // ok: the method's result (JSON)
  call_error error;   // not ok: why

  /// What a JSON-RPC caller gets: the result, or the error object.
  const std::string& text() const noexcept {
    return ok ? result : error.object;
  }
};

inline call_end succeeded(std::string result) {
  return call_end{true, std::move(result), {}};
}

inline call_end failed(call_error error) {
  return call_end{false, {}, std::move(error)};
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, call_end& x) {
  return f(caf::meta::type_name("call_end"), x.ok, x.result, x.error);
}

/// How an actor that is asked for a call but does not take it (a service's
/// queue, the failover hold, the iii function registry) refuses: the
/// caller's error travels as the context of this error and reaches the
/// door's finished().
inline caf::error call_refusal(call_error error) {
  return caf::error{std::uint8_t{1}, caf::atom("refused"), caf::make_message(std::move(error))};
}

} // namespace actor_host
