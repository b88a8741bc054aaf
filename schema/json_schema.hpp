#pragma once

// json_stringify() was declared here; its callers still find it through this.
#include "schema/js_stringify.hpp"
#include "wire/expected.hpp"

#include <boost/json/value.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

/// JSON Schema validation of action inputs, as Genkit does it with ajv.
namespace actor_host::schema {

/// A compiled JSON Schema (draft-07, the subset zod-to-json-schema emits:
/// type incl. type arrays, properties, required, additionalProperties, items,
/// min/maxItems, min/maxLength, pattern, enum, const, minimum/maximum and
/// their exclusive forms, multipleOf, anyOf/oneOf/allOf/not, local $ref).
/// Validation is done by valijson; `pattern` is matched with RE2 (linear
/// time, no recursion: std::regex overflowed the stack on long strings), so
/// a pattern RE2 cannot compile (lookaround, backreferences) makes the
/// schema invalid. `patternProperties` stays with valijson's std::regex, on
/// property names of at most 1024 characters (longer ones fail validation).
/// `format` is checked here (RE2) for email, uuid, date and date-time
/// (ajv-formats' checks) outside anyOf/oneOf branches; other formats pass.
/// Immutable once compiled: validate() may run on many threads at once.
class json_schema {
public:
  ~json_schema();
  json_schema(const json_schema&) = delete;
  json_schema& operator=(const json_schema&) = delete;

  /// Parses and compiles `schema_json`; the reason if it is not JSON or not a
  /// schema valijson accepts.
  static wire::expected<std::shared_ptr<const json_schema>>
  compile(std::string_view schema_json);

  /// True if `v` is valid. Otherwise appends errors worded like ajv's, as
  /// Genkit prints them: "<path>: <reason>", path dotted ("customer.address",
  /// "items.0.qty") or "(root)", e.g. "customer: must have required property
  /// 'address'". Like Genkit's ajv (allErrors off) it reports the first
  /// failure in ajv's order only (for a failed anyOf/oneOf: the first failure
  /// of each branch, then the anyOf itself); `all_errors` reports them all.
  /// Numbers with an integral value count as integers (2.0 like 2), as in JS.
  bool validate(const boost::json::value& v, std::vector<std::string>& errors,
                bool all_errors = false) const;

  /// The schema text as compiled.
  const std::string& text() const;

private:
  struct impl;
  explicit json_schema(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

/// Genkit's ValidationError text (without its "INVALID_ARGUMENT: " prefix):
/// "Schema validation failed. Parse Errors:\n\n- e1\n- e2\n\nProvided data:\n\n
/// <input>\n\nRequired JSON schema:\n\n<schema>", input and schema formatted
/// like JSON.stringify(x, null, 2) (schema text that is not JSON goes verbatim).
/// Defined in ajv_wording.cpp, with the rest of Genkit's wording.
std::string schema_error_message(const std::vector<std::string>& errors,
                                 const boost::json::value& input, std::string_view schema);

} // namespace actor_host::schema
