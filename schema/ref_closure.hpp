#pragma once

#include <boost/json/fwd.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace actor_host::schema {

/// Caps of resolve_refs: what an untrusted schema may make of itself.
struct ref_limits {
  std::size_t max_nodes = 200000;     // JSON values in the result
  std::size_t max_bytes = 8u << 20;   // string bytes in the result
};

/// What a local `$ref` ("#", "#/definitions/A~1B", ~0 ~1 escapes, array
/// indexes) names in `doc`; nullptr when nothing, or when the ref is not local.
const boost::json::value* json_pointer(const boost::json::value& doc, std::string_view ref);

/// `schema` with every local `$ref` ("#", "#/definitions/X", "#/$defs/X",
/// any JSON pointer, ~0 ~1 escapes) replaced by a copy of what it names,
/// transitively, so the result stands alone. A ref inside what it names (a
/// recursive schema) stays a `$ref`, to "#/$defs/<name>", and the result's
/// `$defs` holds each such definition once. Walks with a work list, never
/// recursion. Returns "" or why not: a ref that names nothing, a remote ref,
/// or a result over `limits` (a ref "bomb").
std::string resolve_refs(const boost::json::value& schema, boost::json::value& out,
                         const ref_limits& limits = {});

} // namespace actor_host::schema
