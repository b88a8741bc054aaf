// The input validator (registry/json_schema): compile a schema, validate an
// instance against it and word the errors, both from the input. The input is
// `schema NUL instance`; without a NUL the text is both, which is how the
// seeds from the project's schemas are used as they are.
//
// Until registry/json_schema.cpp drops std::regex for RE2 (another branch),
// `pattern`, `patternProperties` and `format` are removed from the schema
// before compiling: std::regex's recursive executor overflows the stack on
// long inputs, a known finding that would stop every run. Build with
// -DACTOR_HOST_FUZZ_SCHEMA_REGEX to keep them. `$ref`s are dropped too,
// unless ACTOR_HOST_FUZZ_STRICT=1 (see drop_known_findings).

#include "fuzz/fuzz_support.hpp"
#include "schema/json_schema.hpp"

#include <boost/json.hpp>

#include <cstring>

namespace json = boost::json;
namespace schema = actor_host::schema;
using actor_host::fuzz::require;

namespace {

// valijson recurses without end on `$ref` cycles: a ref to itself
// ({"$ref":"#"}), a ref that is not local ({"$ref":"string"}), a ref back to
// an ancestor through allOf ({"allOf":[{"$ref":"#"}]}), until the stack
// overflows (fuzz/crashes-found/schema/ref-*). Not fixed yet, so every `$ref`
// is dropped unless strict.
void drop_known_findings(json::value& v) {
  if (auto* o = v.if_object()) {
#ifndef ACTOR_HOST_FUZZ_SCHEMA_REGEX
    for (auto key : {"pattern", "patternProperties", "format"})
      o->erase(key);
#endif
    if (!actor_host::fuzz::strict())
      o->erase("$ref");
    for (auto& [k, x] : *o)
      drop_known_findings(x);
  } else if (auto* a = v.if_array()) {
    for (auto& x : *a)
      drop_known_findings(x);
  }
}

std::string schema_text(std::string_view text) {
  json::error_code ec;
  auto v = json::parse(text, ec);
  if (ec)
    return std::string{text}; // compile() refuses it on its own
  drop_known_findings(v);
  return json::serialize(v);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto text = actor_host::fuzz::text_of(data, size);
  auto nul = text.find('\0');
  std::string_view schema_part = text, instance_part = text;
  if (nul != std::string::npos) {
    schema_part = std::string_view{text}.substr(0, nul);
    instance_part = std::string_view{text}.substr(nul + 1);
  }
  std::string why;
  auto schema = schema::json_schema::compile(schema_text(schema_part), why);
  if (!schema) {
    require(!why.empty(), "a schema that does not compile says why");
    return 0;
  }
  json::error_code ec;
  auto instance = json::parse(instance_part, ec);
  if (ec)
    return 0;
  std::vector<std::string> first, all;
  bool ok = schema->validate(instance, first);
  bool ok_all = schema->validate(instance, all, true);
  require(ok == ok_all, "all_errors does not change the verdict");
  require(ok == first.empty() && ok_all == all.empty(), "an invalid instance has errors");
  if (!ok) {
    auto message = schema::schema_error_message(first, instance, schema->text());
    require(!message.empty(), "an error message");
  }
  // Strict: 1e309 parses as infinity, which json_stringify() writes as
  // "i.f" (fuzz/crashes-found/schema/stringify-infinity; JS writes null).
  auto js = schema::json_stringify(instance, 2);
  auto back = json::parse(js, ec);
  if (actor_host::fuzz::strict())
    require(!ec, "json_stringify() output parses", js);
  return 0;
}
