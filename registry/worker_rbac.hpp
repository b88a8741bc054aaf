#pragma once

#include "wire/expected.hpp"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace actor_host::registry {

/// RBAC of the public worker listener, as iii engine v0.22.1 does it
/// (spec/WORKER_PROTOCOL.md 8.2). Function ids name ordinary registered
/// functions (usually of a trusted worker on the main worker port).
struct worker_rbac_config {
  std::string auth_function;                    // called once per connection; "" = none
  /// Callable by every session: `*` globs of function ids, and metadata
  /// filters `metadata:key=glob[&key=glob...]` (every key must match the
  /// function's registered metadata: a string value by the glob, any other
  /// value by its JSON text, e.g. `metadata:public=true`).
  std::vector<std::string> expose_functions;
  std::string on_function_registration;         // hooks; "" = none
  std::string on_trigger_type_registration;
  std::string on_trigger_registration;
  /// Middleware (spec 8.3): every call of a non-`engine::` function from this
  /// listener's workers goes to this function instead; "" = none.
  std::string middleware;

  /// Reads the comma-separated glob list of the `worker_expose_functions` setting.
  static std::vector<std::string> parse_list(std::string_view comma_separated);
};

/// What one connection may do, from the auth function's AuthResult.
struct worker_session {
  std::vector<std::string> allowed_functions;
  std::vector<std::string> forbidden_functions;
  std::optional<std::vector<std::string>> allowed_trigger_types; // absent = all
  bool allow_trigger_type_registration = true;
  bool allow_function_registration = true;
  std::string context = "{}"; // raw JSON, passed to the hooks
  std::string prefix;         // function_registration_prefix, "" = none
};

/// A connection's RBAC view (its listener's config and its session), shared
/// with the function registry, which filters `engine::functions::list` and
/// `::info` answers by it (spec 8.2).
struct worker_access {
  std::shared_ptr<const worker_rbac_config> config;
  worker_session session;
};
using worker_access_ptr = std::shared_ptr<const worker_access>;

/// Parses an AuthResult; the reason for anything that is not an object of
/// the AuthResult shape (the connection is then refused).
wire::expected<worker_session> parse_auth_result(std::string_view raw);

enum class invoke_decision { allow, forbidden_listed, not_exposed };

/// May a session of `config`'s listener call `function_id`? `metadata` is
/// the function's registered metadata (raw JSON); without it (null, or not
/// known where the check runs) no metadata filter matches.
invoke_decision check_invoke(const worker_rbac_config& config, const worker_session& session,
                             std::string_view function_id,
                             const std::string* metadata = nullptr);

/// Has `expose_functions` metadata filters (which need the function's metadata)?
bool has_metadata_filters(const worker_rbac_config& config);

/// May this session see (list, info) and call `function_id`? Null = a
/// connection without RBAC: everything.
bool may_see(const worker_access* access, std::string_view function_id,
             const std::string* metadata = nullptr);

/// The ids the listener's config calls on the engine's behalf (auth
/// function, hooks, middleware) and `engine::*`: a worker of the RBAC
/// listener may not register them (an auth function it owned would admit
/// every connection). Workers of the trusted listener provide them.
bool is_reserved_function(const worker_rbac_config& config, std::string_view function_id);

/// The FORBIDDEN message for a denied call, as the engine words it.
std::string forbidden_message(invoke_decision d, std::string_view function_id);

/// `P::id` with a prefix, `id` without.
std::string with_prefix(const worker_session& s, std::string_view id);
/// `id` without a leading `P::` (what the worker registered).
std::string without_prefix(const worker_session& s, std::string_view id);

} // namespace actor_host::registry
