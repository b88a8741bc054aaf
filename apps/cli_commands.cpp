#include "apps/cli_commands.hpp"

#include "schema/js_stringify.hpp"
#include "wire/status.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <iostream>
#include <string_view>
#include <vector>

namespace actor_host::apps {

namespace {

namespace json = boost::json;

// -- output -------------------------------------------------------------------
//
// JSON is printed with schema::json_stringify: results come from JavaScript
// runtimes, so they are written the way JSON.stringify would (Boost.JSON's
// own serializer writes 0.5 as "5E-1").

/// Text from a runtime or the manager, made safe for a terminal: C0 control
/// characters (ESC, BEL, CR, ...), DEL and the C1 controls (U+0080-U+009F,
/// CSI among them) become \u00XX, so a description, an error message or an id
/// cannot move the cursor, retitle the window or clear the screen. The same
/// escape is valid inside a JSON string, so JSON output goes through it too
/// (JSON leaves DEL and C1 raw), keeping its own line breaks.
std::string terminal_safe(std::string_view text, bool keep_newlines = false) {
  std::string out;
  out.reserve(text.size());
  auto escape = [&](unsigned c) {
    static constexpr char hex[] = "0123456789abcdef";
    out += "\\u00";
    out += hex[c >> 4];
    out += hex[c & 0xf];
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n' && keep_newlines) {
      out += '\n';
    } else if (c < 0x20 || c == 0x7f) {
      escape(c);
    } else if (c == 0xc2 && i + 1 < text.size()
               && static_cast<unsigned char>(text[i + 1]) >= 0x80
               && static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      escape(static_cast<unsigned char>(text[++i]));
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

/// JSON for the terminal (see terminal_safe).
std::string json_out(const json::value& jv, int indent = 0) {
  return terminal_safe(schema::json_stringify(jv, indent), true);
}

/// Returns the member `key` of `jv` if `jv` is an object that has it.
const json::value* member(const json::value& jv, std::string_view key) {
  if (const auto* obj = jv.if_object())
    return obj->if_contains(key);
  return nullptr;
}

/// Renders a scalar for a table cell: strings without quotes, missing or
/// null values as "-".
std::string cell(const json::value* jv) {
  if (jv == nullptr || jv->is_null())
    return "-";
  if (const auto* str = jv->if_string())
    return terminal_safe(*str);
  return json_out(*jv);
}

/// Prints rows as left-aligned columns separated by two spaces.
void print_table(std::ostream& os, const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()), 0);
    for (size_t i = 0; i < row.size(); ++i)
      widths[i] = std::max(widths[i], row[i].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size())
        line.append(widths[i] - row[i].size() + 2, ' ');
    }
    // Trailing blanks come from empty last cells; they only confuse diffs.
    while (!line.empty() && line.back() == ' ')
      line.pop_back();
    os << line << '\n';
  }
}

// -- errors -------------------------------------------------------------------

/// Returns the Status code in a JSON-RPC error's `data.code`, if any.
/// Accepts the name as well as the number, since some runtimes send names.
std::optional<wire::status_code> error_status(const json::object& error) {
  const auto* data = error.if_contains("data");
  const auto* code = data != nullptr ? member(*data, "code") : nullptr;
  if (code == nullptr)
    return std::nullopt;
  if (code->is_int64())
    if (auto status = wire::status_from_number(code->get_int64()))
      return status;
  if (const auto* name = code->if_string())
    return wire::status_from_name(*name);
  return std::nullopt;
}

/// Prints `error: <message> (<STATUS>)` and maps the error to an exit code.
int report_rpc_error(const json::object& error) {
  using wire::status_code;
  std::string message = "request failed";
  if (const auto* msg = error.if_contains("message"); msg != nullptr && msg->is_string())
    message = std::string{msg->get_string()};
  auto status = error_status(error);
  std::cerr << "error: " << terminal_safe(message);
  if (status)
    std::cerr << " (" << wire::status_name(static_cast<int>(*status)) << ")";
  std::cerr << '\n';
  // Only the manager's own lookup errors mean "no runtime": a runtime's
  // NOT_FOUND (e.g. an unknown action) is an ordinary failure.
  std::string_view msg{message};
  if (status == status_code::unavailable && msg.starts_with("No runtimes"))
    return exit_no_runtime;
  if (status == status_code::not_found && msg.starts_with("Runtime ")
      && msg.ends_with(" not found"))
    return exit_no_runtime;
  if (status == status_code::deadline_exceeded)
    return exit_timed_out;
  return exit_failed;
}

/// Returns `data.details.traceId` of an action failure, if present.
std::string error_trace_id(const json::object& error) {
  const auto* data = error.if_contains("data");
  const auto* details = data != nullptr ? member(*data, "details") : nullptr;
  const auto* trace = details != nullptr ? member(*details, "traceId") : nullptr;
  return trace != nullptr && trace->is_string() ? std::string{trace->get_string()} : std::string{};
}

/// Handles the failure cases of a call; returns the exit code, or -1 when
/// the call succeeded and the caller should print its result.
int check(const call_result& res) {
  if (!res.transport_error.empty()) {
    std::cerr << "error: lost connection to the manager: " << terminal_safe(res.transport_error)
              << '\n';
    return exit_unreachable;
  }
  if (!res.result)
    return report_rpc_error(res.error);
  return -1;
}

/// A request/answer command: calls `method`, turns a failure into its exit
/// code, prints the result as JSON with --json and hands it to `print`
/// otherwise (print returns the exit code).
template <class Print>
int query(manager_session& session, const cli_options& opts, std::string_view method,
          json::object params, Print print) {
  auto res = session.call(method, std::move(params));
  if (auto rc = check(res); rc >= 0)
    return rc;
  if (opts.json) {
    std::cout << json_out(*res.result) << '\n';
    return exit_ok;
  }
  return print(*res.result);
}

/// Summarises a JSON schema's top-level type: "string", "object", "a|b",
/// "any" (a schema without a plain type) or "-" (no schema).
std::string schema_type(const json::value* schema) {
  if (schema == nullptr || schema->is_null())
    return "-";
  const auto* type = member(*schema, "type");
  if (type == nullptr)
    return "any";
  if (type->is_string())
    return std::string{type->get_string()};
  if (const auto* types = type->if_array()) {
    std::string joined;
    for (const auto& t : *types) {
      if (!joined.empty())
        joined += '|';
      joined += cell(&t);
    }
    return joined;
  }
  return "any";
}

} // namespace

// -- commands -----------------------------------------------------------------

std::unique_ptr<manager_session> open_session(const cli_options& opts, int& rc) {
  std::string error;
  auto why = manager_session::open_failure::usage;
  auto session = manager_session::open(opts.manager, opts.tls, opts.token, error, why);
  if (!session) {
    std::cerr << "error: " << error << '\n';
    rc = why == manager_session::open_failure::unreachable ? exit_unreachable : exit_usage;
  }
  return session;
}

int cmd_runtimes(manager_session& session, const cli_options& opts) {
  return query(session, opts, "listRuntimes", {}, [&](const json::value& result) {
    const auto* list = member(result, "runtimes");
    if (list == nullptr || !list->is_array() || list->get_array().empty()) {
      std::cout << "No runtimes registered.\n";
      return exit_ok;
    }
    // In a cluster every runtime names its node.
    bool clustered = member(list->get_array().front(), "node") != nullptr;
    std::vector<std::vector<std::string>> rows{{"ID", "PID", "NAME", "VERSION", "REGISTERED"}};
    if (clustered)
      rows.front().push_back("NODE");
    for (const auto& info : list->get_array()) {
      rows.push_back({cell(member(info, "id")), cell(member(info, "pid")),
                      cell(member(info, "name")), cell(member(info, "genkitVersion")),
                      cell(member(info, "timestamp"))});
      if (clustered)
        rows.back().push_back(cell(member(info, "node")));
    }
    print_table(std::cout, rows);
    return exit_ok;
  });
}
int cmd_services(manager_session& session, const cli_options& opts) {
  return query(session, opts, "listServices", {}, [&](const json::value& result) {
    const auto* list = member(result, "services");
    if (list == nullptr || !list->is_array() || list->get_array().empty()) {
      std::cout << "No runtimes registered.\n";
      return exit_ok;
    }
    std::vector<std::vector<std::string>> rows{
      {"SERVICE", "REPLICA", "NODE", "IN FLIGHT", "QUEUED", "STATE"}};
    for (const auto& svc : list->get_array()) {
      auto name = cell(member(svc, "name"));
      if (auto* d = member(svc, "default"); d && d->is_bool() && d->get_bool())
        name += " (default)";
      rows.push_back(
        {name, "", "", cell(member(svc, "inFlight")), cell(member(svc, "queued")), ""});
      const auto* replicas = member(svc, "replicas");
      if (replicas == nullptr || !replicas->is_array())
        continue;
      for (const auto& r : replicas->get_array())
        rows.push_back({"", cell(member(r, "id")), cell(member(r, "node")),
                        cell(member(r, "inFlight")), "", cell(member(r, "state"))});
    }
    print_table(std::cout, rows);
    return exit_ok;
  });
}

int cmd_restart(manager_session& session, const cli_options& opts) {
  json::object params;
  params["name"] = opts.service;
  return query(session, opts, "restartService", std::move(params), [&](const json::value& result) {
    const auto* ids = member(result, "restarted");
    std::cout << "Restarted " << terminal_safe(opts.service);
    if (ids != nullptr && ids->is_array())
      std::cout << ": " << json_out(*ids);
    std::cout << '\n';
    return exit_ok;
  });
}

int cmd_drain(manager_session& session, const cli_options& opts) {
  return query(session, opts, "drainNode", {}, [&](const json::value& result) {
    const auto* message = member(result, "message");
    if (message == nullptr || !message->is_string()) {
      std::cerr << "error: the manager's answer to drainNode has no message\n";
      return exit_failed;
    }
    std::cout << terminal_safe(std::string{message->as_string()}) << '\n';
    return exit_ok;
  });
}

int cmd_cluster(manager_session& session, const cli_options& opts) {
  return query(session, opts, "getCluster", {}, [&](const json::value& result) {
    const auto* self = member(result, "self");
    const auto* nodes = member(result, "nodes");
    if (self == nullptr || !self->is_string() || nodes == nullptr || !nodes->is_array()) {
      std::cout << "This manager is not part of a cluster (start it with --cluster-port).\n";
      return exit_ok;
    }
    std::vector<std::vector<std::string>> rows{
      {"NAME", "ADDRESS", "STATUS", "RUNTIMES", "WORKERS"}};
    for (const auto& n : nodes->get_array()) {
      auto name = cell(member(n, "name"));
      if (name == self->get_string())
        name += " (this node)";
      rows.push_back({name, cell(member(n, "address")), cell(member(n, "status")),
                      cell(member(n, "runtimes")), cell(member(n, "workers"))});
    }
    print_table(std::cout, rows);
    return exit_ok;
  });
}

int cmd_actions(manager_session& session, const cli_options& opts) {
  json::object params;
  if (!opts.runtime.empty())
    params["runtimeId"] = opts.runtime;
  return query(session, opts, "listActions", std::move(params), [&](const json::value& result) {
    const auto* actions = member(result, "actions");
    if (actions == nullptr || !actions->is_object() || actions->get_object().empty()) {
      std::cout << "No actions.\n";
      return exit_ok;
    }
    std::vector<std::vector<std::string>> rows;
    for (const auto& [key, action] : actions->get_object()) {
      std::string description;
      if (const auto* desc = member(action, "description"); desc != nullptr && desc->is_string())
        description = std::string{desc->get_string()};
      // Keep one action per line.
      std::replace(description.begin(), description.end(), '\n', ' ');
      const auto* metadata = member(action, "metadata");
      const auto* bidi = metadata != nullptr ? member(*metadata, "bidi") : nullptr;
      if (bidi != nullptr && bidi->is_bool() && bidi->get_bool())
        description = description.empty() ? "(bidi)" : description + " (bidi)";
      rows.push_back({terminal_safe(key), terminal_safe(schema_type(member(action, "inputSchema"))),
                      terminal_safe(description)});
    }
    std::sort(rows.begin(), rows.end());
    rows.insert(rows.begin(), {"KEY", "INPUT", "DESCRIPTION"});
    print_table(std::cout, rows);
    return exit_ok;
  });
}

int cmd_run(manager_session& session, const cli_options& opts,
            const std::optional<json::value>& input,
            const std::optional<json::value>& context,
            std::optional<std::int64_t> timeout_ms) {
  json::object params;
  params["key"] = opts.key;
  if (input)
    params["input"] = *input;
  if (context)
    params["context"] = *context;
  if (!opts.runtime.empty())
    params["runtimeId"] = opts.runtime;
  if (!opts.service.empty())
    params["runtimeName"] = opts.service;
  params["stream"] = opts.stream;
  if (timeout_ms)
    params["timeoutMs"] = *timeout_ms;
  std::string trace_id;
  auto on_notification = [&](std::string_view method, const json::object& note) {
    if (method == "runActionState") {
      const auto* state = note.if_contains("state");
      const auto* trace = state != nullptr ? member(*state, "traceId") : nullptr;
      if (trace != nullptr && trace->is_string())
        trace_id = std::string{trace->get_string()};
    } else if (method == "streamChunk") {
      const auto* chunk = note.if_contains("chunk");
      // Flush per chunk: the point of streaming is to see progress, and a
      // SIGINT exit must not lose what was already received.
      std::cout << (chunk != nullptr ? json_out(*chunk) : "null") << std::endl;
    }
  };
  auto res = session.call("runAction", std::move(params), on_notification);
  if (!res.result) {
    if (trace_id.empty() && res.transport_error.empty())
      trace_id = error_trace_id(res.error);
    auto rc = check(res);
    if (!opts.json && !trace_id.empty())
      std::cerr << "trace: " << terminal_safe(trace_id) << '\n';
    return rc;
  }
  if (const auto* telemetry = member(*res.result, "telemetry")) {
    if (const auto* trace = member(*telemetry, "traceId"); trace != nullptr && trace->is_string())
      trace_id = std::string{trace->get_string()};
  }
  if (opts.json) {
    std::cout << json_out(*res.result) << std::endl;
    return exit_ok;
  }
  // An action that returns undefined has no `result` member: print nothing.
  if (const auto* result = member(*res.result, "result"))
    std::cout << json_out(*result, 2) << std::endl;
  if (!trace_id.empty())
    std::cerr << "trace: " << terminal_safe(trace_id) << '\n';
  return exit_ok;
}

int cmd_cancel(manager_session& session, const cli_options& opts) {
  json::object params;
  params["traceId"] = opts.trace_id;
  if (!opts.runtime.empty())
    params["runtimeId"] = opts.runtime;
  return query(session, opts, "cancelAction", std::move(params), [&](const json::value& result) {
    const auto* message = member(result, "message");
    std::cout << (message != nullptr && message->is_string() ? terminal_safe(message->get_string())
                                                             : json_out(result))
              << '\n';
    return exit_ok;
  });
}
} // namespace actor_host::apps
