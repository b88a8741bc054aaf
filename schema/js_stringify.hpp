#pragma once

#include <boost/json/value.hpp>

#include <string>

/// JSON text as JavaScript writes it. Results and schemas pass through
/// JavaScript runtimes and tools; Boost.JSON's own serializer writes doubles
/// in another form (0.5 as "5E-1"), so output meant to match theirs goes
/// through here.
namespace actor_host::schema {

/// ECMAScript Number::toString(10) of `x` (17, 3.5, 1e+21, 1e-7, never
/// 1.7E1); "null" for what is not finite, as JSON.stringify writes it.
std::string js_number(double x);

/// JSON text of `v` as JavaScript's JSON.stringify(v, null, indent) writes it:
/// numbers in JS form (17, 3.5, 1e+21, never 1.7E1), members in stored order,
/// non-ASCII text unescaped. indent 0 = compact.
std::string json_stringify(const boost::json::value& v, int indent = 0);

} // namespace actor_host::schema
