#include "apps/cli.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <boost/json.hpp>

#include "config/duration.hpp"
#include "net/access_policy.hpp"
#include "net/url.hpp"
#include "net/ws_client.hpp"

namespace actor_host::apps {

namespace {

namespace json = boost::json;

// -- constants ----------------------------------------------------------------

/// Process exit codes, as documented in docs/API.md.
enum exit_code : int {
  exit_ok = 0,
  exit_failed = 1,
  exit_usage = 2,
  exit_unreachable = 3,
  exit_no_runtime = 4,
  exit_timed_out = 5,
  exit_interrupted = 130,
};

constexpr std::string_view default_manager_url = "http://127.0.0.1:4100";

constexpr std::string_view api_ws_path = "/api/ws";

// Covers resolve + connect + handshake. The manager is normally local, so a
// slow handshake means something is wrong, not that we should wait longer.
constexpr auto connect_timeout = std::chrono::seconds{5};

constexpr std::array<std::string_view, 4> commands{"runtimes", "actions", "run", "cancel"};

// Genkit Status codes (google.rpc.Code), indexed by number.
constexpr std::array<std::string_view, 17> status_names{
  "OK",
  "CANCELLED",
  "UNKNOWN",
  "INVALID_ARGUMENT",
  "DEADLINE_EXCEEDED",
  "NOT_FOUND",
  "ALREADY_EXISTS",
  "PERMISSION_DENIED",
  "RESOURCE_EXHAUSTED",
  "FAILED_PRECONDITION",
  "ABORTED",
  "OUT_OF_RANGE",
  "UNIMPLEMENTED",
  "INTERNAL",
  "UNAVAILABLE",
  "DATA_LOSS",
  "UNAUTHENTICATED",
};

constexpr int status_deadline_exceeded = 4;
constexpr int status_not_found = 5;
constexpr int status_unavailable = 14;

// -- JSON output --------------------------------------------------------------

/// Writes `jv` as JSON: compact when `step` is 0, else indented by `step`.
/// Boost.JSON's own serializer prints doubles in scientific notation (0.5 as
/// "5E-1"); results come from JavaScript runtimes, so print them the way
/// JSON.stringify would.
void write_json(std::ostream& os, const json::value& jv, int step, std::string& indent) {
  auto newline = [&] {
    if (step > 0)
      os << '\n' << indent;
  };
  switch (jv.kind()) {
    case json::kind::object: {
      const auto& obj = jv.get_object();
      if (obj.empty()) {
        os << "{}";
        return;
      }
      os << '{';
      indent.append(static_cast<size_t>(step), ' ');
      bool first = true;
      for (const auto& member : obj) {
        if (!first)
          os << ',';
        first = false;
        newline();
        os << json::serialize(member.key()) << (step > 0 ? ": " : ":");
        write_json(os, member.value(), step, indent);
      }
      indent.resize(indent.size() - static_cast<size_t>(step));
      newline();
      os << '}';
      return;
    }
    case json::kind::array: {
      const auto& arr = jv.get_array();
      if (arr.empty()) {
        os << "[]";
        return;
      }
      os << '[';
      indent.append(static_cast<size_t>(step), ' ');
      bool first = true;
      for (const auto& element : arr) {
        if (!first)
          os << ',';
        first = false;
        newline();
        write_json(os, element, step, indent);
      }
      indent.resize(indent.size() - static_cast<size_t>(step));
      newline();
      os << ']';
      return;
    }
    case json::kind::double_: {
      // Shortest round-trip form; parsed input is always finite.
      std::array<char, 32> buf;
      auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), jv.get_double());
      if (ec == std::errc{})
        os << std::string_view{buf.data(), static_cast<size_t>(end - buf.data())};
      else
        os << json::serialize(jv);
      return;
    }
    default:
      os << json::serialize(jv);
  }
}

std::string to_compact(const json::value& jv) {
  std::ostringstream os;
  std::string indent;
  write_json(os, jv, 0, indent);
  return std::move(os).str();
}

std::string to_pretty(const json::value& jv) {
  std::ostringstream os;
  std::string indent;
  write_json(os, jv, 2, indent);
  return std::move(os).str();
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
    return std::string{*str};
  return to_compact(*jv);
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

// -- parsing helpers ----------------------------------------------------------

std::optional<json::value> parse_json(std::string_view text, std::string& error) {
  json::error_code ec;
  auto jv = json::parse(text, ec);
  if (ec) {
    error = ec.message();
    return std::nullopt;
  }
  return jv;
}

/// Parses the `run` input argument; on failure returns nullopt and a message
/// that tells the user how to fix the input.
std::optional<json::value> parse_input(std::string_view text, std::string& error) {
  if (auto jv = parse_json(text, error))
    return jv;
  // The common mistake is `run /flow/echo hello`: the shell already ate any
  // quotes. Text without JSON punctuation cannot be meant as JSON.
  if (!text.empty() && text.find_first_of("{}[]\"") == std::string_view::npos
      && text.find_first_of("0123456789") != 0 && text.front() != '-') {
    error = "input must be JSON, e.g. '\"hi\"'";
    if (text.find('\'') == std::string_view::npos)
      error += "; to send the string " + std::string{text} + ", write '"
               + json::serialize(json::string_view{text.data(), text.size()}) + "'";
    return std::nullopt;
  }
  error = "input is not valid JSON: " + error;
  return std::nullopt;
}

/// Derives the `/api/ws` URL from the `--manager` value (the API server's
/// http:// URL). A ws:// URL is accepted too, and a URL that already ends in
/// /api/ws is used as is.
std::optional<std::string> api_ws_url(std::string manager, std::string& error) {
  // `--manager 127.0.0.1:4100` is an easy thing to type; treat it as http.
  if (manager.find("://") == std::string::npos)
    manager = "http://" + manager;
  auto url = net::parse_url(manager);
  if (!url) {
    error = "invalid manager URL '" + manager + "' (expected e.g. http://127.0.0.1:4100)";
    return std::nullopt;
  }
  const bool secure = url->scheme == "https" || url->scheme == "wss";
  auto path = url->target.substr(0, url->target.find('?'));
  while (!path.empty() && path.back() == '/')
    path.pop_back();
  if (!path.ends_with(api_ws_path))
    path += api_ws_path;
  return (secure ? "wss://" : "ws://") + net::host_header(*url) + path;
}

// -- errors -------------------------------------------------------------------

/// Returns the Status code in a JSON-RPC error's `data.code`, if any.
/// Accepts the name as well as the number, since some runtimes send names.
std::optional<int> status_code(const json::object& error) {
  const auto* data = error.if_contains("data");
  const auto* code = data != nullptr ? member(*data, "code") : nullptr;
  if (code == nullptr)
    return std::nullopt;
  if (code->is_int64() && code->get_int64() >= 0
      && code->get_int64() < static_cast<std::int64_t>(status_names.size()))
    return static_cast<int>(code->get_int64());
  if (const auto* name = code->if_string()) {
    auto it = std::find(status_names.begin(), status_names.end(), std::string_view{*name});
    if (it != status_names.end())
      return static_cast<int>(it - status_names.begin());
  }
  return std::nullopt;
}

/// Prints `error: <message> (<STATUS>)` and maps the error to an exit code.
int report_rpc_error(const json::object& error) {
  std::string message = "request failed";
  if (const auto* msg = error.if_contains("message"); msg != nullptr && msg->is_string())
    message = std::string{msg->get_string()};
  auto status = status_code(error);
  std::cerr << "error: " << message;
  if (status)
    std::cerr << " (" << status_names[static_cast<size_t>(*status)] << ")";
  std::cerr << '\n';
  // Only the manager's own lookup errors mean "no runtime": a runtime's
  // NOT_FOUND (e.g. an unknown action) is an ordinary failure.
  std::string_view msg{message};
  if (status == status_unavailable && msg.starts_with("No runtimes"))
    return exit_no_runtime;
  if (status == status_not_found && msg.starts_with("Runtime ") && msg.ends_with(" not found"))
    return exit_no_runtime;
  if (status == status_deadline_exceeded)
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

// -- JSON-RPC session ---------------------------------------------------------

/// The outcome of one JSON-RPC call.
struct call_result {
  /// Set on success.
  std::optional<json::value> result;
  /// The error object when the manager answered with an error.
  json::object error;
  /// Set when the connection failed before an answer arrived.
  std::string transport_error;
};

/// Receives `method` and `params` of notifications addressed to the call.
using notification_handler = std::function<void(std::string_view, const json::object&)>;

/// One WebSocket connection to the manager, with sequential calls on it.
class manager_session {
public:
  explicit manager_session(std::unique_ptr<net::blocking_ws_client> client)
    : client_(std::move(client)) {
    // nop
  }

  /// Sends a request and blocks until its response. Notifications whose
  /// `params.requestId` equals this request's id go to `on_notification`;
  /// everything else (other ids, unknown methods) is ignored.
  call_result call(std::string_view method, json::object params,
                   const notification_handler& on_notification = {}) {
    call_result out;
    // String ids: the manager echoes them unchanged in `requestId`.
    json::value id = json::string{std::to_string(next_id_++)};
    json::object request;
    request["jsonrpc"] = "2.0";
    request["id"] = id;
    request["method"] = method;
    if (!params.empty())
      request["params"] = std::move(params);
    std::string error;
    if (!client_->send_text(json::serialize(request), error)) {
      out.transport_error = error;
      return out;
    }
    for (;;) {
      auto text = client_->read_text(error);
      if (!text) {
        out.transport_error = error;
        return out;
      }
      json::error_code ec;
      auto msg = json::parse(*text, ec);
      if (ec || !msg.is_object())
        continue; // Not JSON-RPC; nothing we could answer to.
      const auto& obj = msg.get_object();
      if (const auto* note = obj.if_contains("method")) {
        const auto* note_params = obj.if_contains("params");
        if (!note->is_string() || note_params == nullptr || !note_params->is_object())
          continue;
        const auto* request_id = member(*note_params, "requestId");
        if (request_id == nullptr || *request_id != id)
          continue;
        if (on_notification)
          on_notification(note->get_string(), note_params->get_object());
        continue;
      }
      const auto* reply_id = obj.if_contains("id");
      const auto* err = obj.if_contains("error");
      // A reply with id null answers a request the manager could not parse;
      // with one request in flight it can only be ours.
      bool ours = reply_id != nullptr
                  && (*reply_id == id || (reply_id->is_null() && err != nullptr));
      if (!ours)
        continue;
      if (err != nullptr) {
        if (const auto* err_obj = err->if_object())
          out.error = *err_obj;
        else
          out.error["message"] = "malformed error: " + to_compact(*err);
        return out;
      }
      const auto* res = obj.if_contains("result");
      out.result = res != nullptr ? *res : json::value{};
      return out;
    }
  }

private:
  std::unique_ptr<net::blocking_ws_client> client_;
  int next_id_ = 1;
};

// -- commands -----------------------------------------------------------------

/// Everything the command line can set; each command reads its part.
struct cli_options {
  std::string manager;
  std::string token; // sent as Authorization: Bearer
  bool json = false;
  std::string runtime;
  std::string key;
  std::string input;
  bool stream = false;
  std::string context;
  std::string timeout;
  std::string trace_id;
  net::tls_client_files tls; // https:// / wss:// managers
};

/// Connects to the manager or prints why not. Returns nullptr on failure and
/// sets `rc`.
std::unique_ptr<manager_session> open_session(const cli_options& opts, int& rc) {
  std::string error;
  auto url = api_ws_url(opts.manager, error);
  if (!url) {
    std::cerr << "error: " << error << '\n';
    rc = exit_usage;
    return nullptr;
  }
  net::tls_client_context_ptr tls;
  if (url->starts_with("wss://")) {
    tls = net::tls_client_context::load(opts.tls, error);
    if (!tls) {
      std::cerr << "error: " << error << '\n';
      rc = exit_usage;
      return nullptr;
    }
  }
  auto client = net::blocking_ws_client::connect(*url, error, connect_timeout, std::move(tls),
                                                 opts.token);
  if (!client) {
    std::cerr << "error: cannot reach the manager at " << *url << ": " << error << '\n';
    rc = exit_unreachable;
    return nullptr;
  }
  return std::make_unique<manager_session>(std::move(client));
}

/// Handles the failure cases of a call; returns the exit code, or -1 when
/// the call succeeded and the caller should print its result.
int check(const call_result& res) {
  if (!res.transport_error.empty()) {
    std::cerr << "error: lost connection to the manager: " << res.transport_error << '\n';
    return exit_unreachable;
  }
  if (!res.result)
    return report_rpc_error(res.error);
  return -1;
}

int cmd_runtimes(manager_session& session, const cli_options& opts) {
  auto res = session.call("listRuntimes", {});
  if (auto rc = check(res); rc >= 0)
    return rc;
  if (opts.json) {
    std::cout << to_compact(*res.result) << '\n';
    return exit_ok;
  }
  const auto* list = member(*res.result, "runtimes");
  if (list == nullptr || !list->is_array() || list->get_array().empty()) {
    std::cout << "No runtimes registered.\n";
    return exit_ok;
  }
  std::vector<std::vector<std::string>> rows{{"ID", "PID", "NAME", "VERSION", "REGISTERED"}};
  for (const auto& info : list->get_array())
    rows.push_back({cell(member(info, "id")), cell(member(info, "pid")),
                    cell(member(info, "name")), cell(member(info, "genkitVersion")),
                    cell(member(info, "timestamp"))});
  print_table(std::cout, rows);
  return exit_ok;
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

int cmd_actions(manager_session& session, const cli_options& opts) {
  json::object params;
  if (!opts.runtime.empty())
    params["runtimeId"] = opts.runtime;
  auto res = session.call("listActions", std::move(params));
  if (auto rc = check(res); rc >= 0)
    return rc;
  if (opts.json) {
    std::cout << to_compact(*res.result) << '\n';
    return exit_ok;
  }
  const auto* actions = member(*res.result, "actions");
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
    rows.push_back({std::string{key}, schema_type(member(action, "inputSchema")), description});
  }
  std::sort(rows.begin(), rows.end());
  rows.insert(rows.begin(), {"KEY", "INPUT", "DESCRIPTION"});
  print_table(std::cout, rows);
  return exit_ok;
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
      std::cout << (chunk != nullptr ? to_compact(*chunk) : "null") << std::endl;
    }
  };
  auto res = session.call("runAction", std::move(params), on_notification);
  if (!res.result) {
    if (trace_id.empty() && res.transport_error.empty())
      trace_id = error_trace_id(res.error);
    auto rc = check(res);
    if (!opts.json && !trace_id.empty())
      std::cerr << "trace: " << trace_id << '\n';
    return rc;
  }
  if (const auto* telemetry = member(*res.result, "telemetry")) {
    if (const auto* trace = member(*telemetry, "traceId"); trace != nullptr && trace->is_string())
      trace_id = std::string{trace->get_string()};
  }
  if (opts.json) {
    std::cout << to_compact(*res.result) << std::endl;
    return exit_ok;
  }
  // An action that returns undefined has no `result` member: print nothing.
  if (const auto* result = member(*res.result, "result"))
    std::cout << to_pretty(*result) << std::endl;
  if (!trace_id.empty())
    std::cerr << "trace: " << trace_id << '\n';
  return exit_ok;
}

int cmd_cancel(manager_session& session, const cli_options& opts) {
  json::object params;
  params["traceId"] = opts.trace_id;
  if (!opts.runtime.empty())
    params["runtimeId"] = opts.runtime;
  auto res = session.call("cancelAction", std::move(params));
  if (auto rc = check(res); rc >= 0)
    return rc;
  if (opts.json) {
    std::cout << to_compact(*res.result) << '\n';
    return exit_ok;
  }
  const auto* message = member(*res.result, "message");
  std::cout << (message != nullptr && message->is_string() ? std::string{message->get_string()}
                                                           : to_compact(*res.result))
            << '\n';
  return exit_ok;
}

// -- signals ------------------------------------------------------------------

void on_sigint(int) {
  // Only async-signal-safe calls here. Exiting closes the socket, and the
  // manager cancels the runs of a caller whose socket closes.
  constexpr char msg[] = "interrupted\n";
  [[maybe_unused]] auto n = ::write(STDERR_FILENO, msg, sizeof(msg) - 1);
  ::_exit(exit_interrupted);
}

void install_sigint_handler() {
  struct sigaction sa = {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
}

} // namespace

bool is_cli_command(std::string_view arg) {
  return std::find(commands.begin(), commands.end(), arg) != commands.end();
}

int run_cli(int argc, char** argv) {
  install_sigint_handler();
  cli_options opts;
  if (const char* env = std::getenv("ACTOR_HOST_TLS_CA_FILE"); env != nullptr)
    opts.tls.ca_file = env;
  if (const char* env = std::getenv("ACTOR_HOST_MANAGER"); env != nullptr && *env != '\0')
    opts.manager = env;
  std::string token_file;
  if (const char* env = std::getenv("ACTOR_HOST_AUTH_TOKEN_FILE"); env != nullptr && *env != '\0')
    token_file = env;
  else
    opts.manager = std::string{default_manager_url};
  // -- command line ---------------------------------------------------------
  CLI::App app{"Command-line client for an actor-host manager.", "actor-host"};
  app.require_subcommand(1, 1);
  const std::string footer =
    "Exit codes: 0 ok, 1 failed, 2 usage error, 3 cannot reach the manager,\n"
    "4 no runtime / runtime not found, 5 timed out, 130 interrupted.";
  auto add_common = [&](CLI::App* cmd) {
    cmd->add_option("--manager", opts.manager,
                    "API server URL (default: $ACTOR_HOST_MANAGER, else "
                      + std::string{default_manager_url} + ")");
    cmd->add_flag("--json", opts.json, "Print raw JSON results");
    cmd->add_option("--auth-token-file", token_file,
                    "File with the manager's token, sent as Authorization: Bearer (default: "
                    "$ACTOR_HOST_AUTH_TOKEN_FILE)");
    cmd->add_option("--tls-ca-file", opts.tls.ca_file,
                    "https:// manager: PEM CA(s) its certificate must chain to (default: "
                    "$ACTOR_HOST_TLS_CA_FILE, else the system store)");
    cmd->add_option("--tls-cert-file", opts.tls.cert_file,
                    "client certificate (PEM) for a manager that requires one");
    cmd->add_option("--tls-key-file", opts.tls.key_file, "key of --tls-cert-file");
    cmd->footer(footer);
  };
  auto add_runtime = [&](CLI::App* cmd) {
    cmd->add_option("--runtime", opts.runtime,
                    "Runtime ID (default: the manager picks one)");
  };
  auto* runtimes = app.add_subcommand("runtimes", "List the registered runtimes");
  add_common(runtimes);
  auto* actions = app.add_subcommand("actions", "List the actions of a runtime");
  add_runtime(actions);
  add_common(actions);
  auto* run = app.add_subcommand("run", "Run an action and print its result");
  run->add_option("KEY", opts.key, "Action key, e.g. /flow/echo")->required();
  auto* input_opt = run->add_option("JSON", opts.input,
                                    "Input as JSON, e.g. '\"hi\"' or '{\"n\":3}'");
  run->add_flag("--stream", opts.stream, "Print streamed chunks as they arrive");
  add_runtime(run);
  run->add_option("--context", opts.context, "Action context as JSON");
  run->add_option("--timeout", opts.timeout, "Run timeout: 250ms, 30s, 2m or milliseconds");
  add_common(run);
  auto* cancel = app.add_subcommand("cancel", "Cancel a running action by trace ID");
  cancel->add_option("TRACE_ID", opts.trace_id, "Trace ID printed by 'run'")->required();
  add_runtime(cancel);
  add_common(cancel);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    // --help: prints the help of the selected command.
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return exit_usage;
  }
  if (!token_file.empty()) {
    if (auto err = net::read_token_file(token_file, opts.token); !err.empty()) {
      std::cerr << "error: " << err << '\n';
      return exit_usage;
    }
  }
  // -- validate `run` arguments before connecting ---------------------------
  std::optional<json::value> input;
  std::optional<json::value> context;
  std::optional<std::int64_t> timeout_ms;
  if (run->parsed()) {
    std::string error;
    if (input_opt->count() > 0) {
      input = parse_input(opts.input, error);
      if (!input) {
        std::cerr << "error: " << error << '\n';
        return exit_usage;
      }
    }
    if (!opts.context.empty()) {
      context = parse_json(opts.context, error);
      if (!context) {
        std::cerr << "error: --context is not valid JSON: " << error << '\n';
        return exit_usage;
      }
    }
    if (!opts.timeout.empty()) {
      timeout_ms = config::parse_duration_ms(opts.timeout);
      if (!timeout_ms) {
        std::cerr << "error: invalid --timeout '" << opts.timeout
                  << "' (expected e.g. 250ms, 30s, 2m or a number of milliseconds)\n";
        return exit_usage;
      }
    }
  }
  // -- execute --------------------------------------------------------------
  int rc = exit_ok;
  auto session = open_session(opts, rc);
  if (!session)
    return rc;
  if (runtimes->parsed())
    return cmd_runtimes(*session, opts);
  if (actions->parsed())
    return cmd_actions(*session, opts);
  if (run->parsed())
    return cmd_run(*session, opts, input, context, timeout_ms);
  return cmd_cancel(*session, opts);
}

} // namespace actor_host::apps
