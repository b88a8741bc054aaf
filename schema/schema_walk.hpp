#pragma once

#include "wire/expected.hpp"

#include <boost/json/value.hpp>

#include <memory>
#include <string>
#include <string_view>

namespace re2 {
class RE2;
}

/// Walking a JSON Schema document, shared by validation (json_schema.cpp)
/// and the ajv-style error wording (ajv_wording.cpp). Internal to schema/.
namespace actor_host::schema::detail {

/// The member `key` of `v` if `v` is an object that has it; nullptr otherwise
/// (also for a null `v`).
const boost::json::value* member(const boost::json::value* v, std::string_view key);

/// Follows local "$ref"s ("#/..."); nullptr for a ref it cannot resolve.
const boost::json::value* resolve(const boost::json::value& root, const boost::json::value* s);

/// `pattern` compiled with RE2 as ajv compiles it (the "u" flag: UTF-8), or
/// nullptr with the reason in `*why` (if given and still empty).
std::shared_ptr<const re2::RE2> compile_re2(std::string_view pattern, std::string* why);

/// The reason, for the first `$ref` valijson would recurse on without end:
/// one that is not local, one that names nothing, a cycle that applies a
/// schema to the same value again (recursion through properties/items is
/// fine). Walks with work lists.
wire::expected<void> check_refs(const boost::json::value& root);

} // namespace actor_host::schema::detail
