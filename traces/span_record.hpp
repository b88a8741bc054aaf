#pragma once

#include "traces/run_span.hpp"

#include <string>
#include <string_view>

/// A span the manager made (run_span: its route spans) as the trace store
/// keeps it: its fields, not its JSON. Most of a route span's 640 bytes of
/// JSON is the same for every span; written as JSON, those bytes were most
/// of what a commit and its checkpoint copied (bench/runs/
/// 2026-12-07-trace-cost2.md). The store writes JSON back out when it
/// loads the trace (span_json: the same text it would have stored), and
/// counts a trace's bytes as that JSON's size, so retention and the trace
/// cap measure what they did.
namespace actor_host::traces {

/// A stored span's text that starts with this is a packed run_span, not
/// JSON (JSON text never starts with a control character).
inline constexpr char span_record_mark = '\x01';

/// `span` without its trace and span ids (the row's key holds them).
std::string pack_run_span(const run_span& span);
/// The same into `out` (replacing what it held, in its buffer).
void pack_run_span(const run_span& span, std::string& out);

/// A packed span's fields into `out` (its ids left as they are); false if
/// `packed` is not one.
bool unpack_run_span(std::string_view packed, run_span& out);

} // namespace actor_host::traces
