// The input validator (registry/json_schema): compile a schema, validate an
// instance against it and word the errors, both from the input. The input is
// `schema NUL instance`; without a NUL the text is both, which is how the
// seeds from the project's schemas are used as they are.
//
// The schema is compiled as given: `pattern` runs through RE2, and `$ref`s
// that would recurse without end are refused at compile (both were
// findings of earlier runs; their reproducers are in the corpus now).

#include "fuzz/fuzz_support.hpp"
#include "schema/json_schema.hpp"

#include <boost/json.hpp>

#include <cstring>

namespace json = boost::json;
namespace schema = actor_host::schema;
using actor_host::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto text = actor_host::fuzz::text_of(data, size);
  auto nul = text.find('\0');
  std::string_view schema_part = text, instance_part = text;
  if (nul != std::string::npos) {
    schema_part = std::string_view{text}.substr(0, nul);
    instance_part = std::string_view{text}.substr(nul + 1);
  }
  auto compiled = schema::json_schema::compile(schema_part);
  if (!compiled) {
    require(!compiled.error().empty(), "a schema that does not compile says why");
    return 0;
  }
  auto& schema = *compiled;
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
  // 1e309 parses as infinity, which JS (and json_stringify) writes as null.
  auto js = schema::json_stringify(instance, 2);
  auto back = json::parse(js, ec);
  require(!ec, "json_stringify() output parses", js);
  return 0;
}
