#pragma once

#include <simdjson.h>

#include <string_view>

/// Raw-text access to simdjson on-demand values, for code that forwards JSON
/// without re-serialising it. Heavier than wire/jsonrpc.hpp (pulls in
/// simdjson): include it only where on-demand values are walked directly.
namespace actor_host::wire::json_raw {

/// `s` without trailing JSON whitespace (raw tokens keep it).
std::string_view trim(std::string_view s);

/// The raw text of a value (object, array or scalar); consumes the value.
simdjson::error_code raw_of(simdjson::ondemand::value v, std::string_view& out);

} // namespace actor_host::wire::json_raw
