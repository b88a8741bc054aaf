#include "actors/doors/http/http_api.hpp"

#include "actors/doors/http/http_caller.hpp"
#include "actors/doors/http/trace_routes.hpp"
#include "actors/doors/http/trpc.hpp"
#include "actors/doors/http/trpc_batch.hpp"
#include "obs/metrics.hpp"
#include "ui/embedded_assets.hpp"
#include "wire/jsonrpc.hpp"

#include <map>

#include <unistd.h>

namespace actor_host {

namespace rpc = wire::jsonrpc;

namespace {

constexpr const char* json_type = "application/json";

void respond_plain(const net::http_responder_ptr& res, int status, std::string body) {
  res->respond(status, "text/plain", std::move(body));
}

// The dashboard's files. The page may load only its own scripts and styles
// and talk only to this origin; no other site may frame it.
void respond_asset(const net::http_request& req, const net::http_responder_ptr& res,
                   const ui::asset& a) {
  net::http_headers h{
    {"Content-Security-Policy",
     "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
     "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"},
    {"X-Content-Type-Options", "nosniff"},
    {"X-Frame-Options", "DENY"},
    {"Referrer-Policy", "no-referrer"},
    {"Cache-Control", "no-cache"},
    {"ETag", std::string{a.etag}},
  };
  if (auto* inm = req.header("if-none-match"); inm && *inm == a.etag)
    return res->respond(304, std::string{a.content_type}, {}, std::move(h));
  res->respond(200, std::string{a.content_type}, std::string{a.body}, std::move(h));
}

// A file of --ui-assets (the Genkit Dev UI): its own scripts decide what it
// loads, so no CSP of ours; it is not to be framed by other sites.
void respond_app_file(const net::http_request& req, const net::http_responder_ptr& res,
                      const ui::asset_dir::file& f) {
  net::http_headers h{
    {"X-Content-Type-Options", "nosniff"},
    {"X-Frame-Options", "DENY"},
    {"Cache-Control", "no-cache"},
    {"ETag", f.etag},
  };
  if (auto* inm = req.header("if-none-match"); inm && *inm == f.etag)
    return res->respond(304, f.content_type, {}, std::move(h));
  res->respond(200, f.content_type, f.body, std::move(h));
}

bool operator_path(std::string_view p) {
  return p.starts_with("/api/") || p.starts_with("/ui/") || p == "/metrics" || p == "/healthz"
         || p == "/readyz";
}

// The tools server's procedures (tRPC queries) that are not ours as well:
// what each is answered with. Those actor-host does not serve answer 501.
enum class tool_query { actions, values, runtimes, current_runtime, traces, environment, none };

tool_query find_tool_query(std::string_view name) {
  static const std::pair<std::string_view, tool_query> served[] = {
    {"listActions", tool_query::actions},        {"listValues", tool_query::values},
    {"getActiveRuntimes", tool_query::runtimes}, {"getCurrentRuntime", tool_query::current_runtime},
    {"listTraces", tool_query::traces},          {"getTrace", tool_query::traces},
    {"getGenkitEnvironment", tool_query::environment},
  };
  for (auto& [n, q] : served)
    if (n == name)
      return q;
  return tool_query::none;
}

// Procedures of @genkit-ai/tools-common's router that belong to the Genkit
// CLI's own project tooling (docs/API.md lists them).
bool unserved_tool_procedure(std::string_view name) {
  static const std::string_view names[] = {
    "createPrompt",  "listLogs",          "addTrace",         "listEvalRunKeys",
    "getEvalRun",    "deleteEvalRun",     "listDatasets",     "getDataset",
    "createDataset", "updateDataset",     "deleteDataset",    "runNewEvaluation",
    "validateDatasetSchema", "sendPageView", "sendSelectContent", "getAppProcessStatus",
    "restartAppProcess", "killAppProcess",
  };
  for (auto n : names)
    if (n == name)
      return true;
  return false;
}

/// getGenkitEnvironment: the manager's version and its GENKIT_* variables
/// only (the tools server lists the whole environment; ours may hold
/// secrets, and a page of this origin must not read them).
std::string genkit_environment() {
  std::map<std::string, std::string> sorted; // by name, as the tools server sorts them
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv{*e};
    auto eq = kv.find('=');
    if (kv.starts_with("GENKIT_") && eq != std::string_view::npos)
      sorted.emplace(kv.substr(0, eq), kv.substr(eq + 1));
  }
  std::string vars;
  for (auto& [name, value] : sorted)
    vars += (vars.empty() ? "" : ",") + std::string{R"({"name":)"} + rpc::quote(name)
            + R"(,"value":)" + rpc::quote(value) + "}";
  return R"({"cliPackageVersion":")" ACTOR_HOST_VERSION R"(","environmentVars":[)" + vars + "]}";
}

} // namespace

net::http_handler make_http_api(http_api_context ctx) {
  auto slots = std::make_shared<caller_slots>(ctx.door.policy.max_calls_per_caller);
  return [ctx = std::move(ctx), slots](net::http_request req, net::http_responder_ptr res) {
    auto& p = req.path;
    bool get = req.method == "GET";
    bool post = req.method == "POST";
    // Hands the request to a caller actor of its own; the slot is taken
    // here, on the I/O thread, so that a flood is refused before it spawns
    // anything (the call's state gives it back).
    auto spawn_caller = [&](net::http_request r, const net::http_responder_ptr& out,
                            http_route kind, std::string trpc_name, bool tools_shape = false) {
      auto address = address_of(r.peer);
      if (!slots->acquire(address)) {
        obs::global().calls_over_cap.fetch_add(1, std::memory_order_relaxed);
        auto error = manager_errors::too_many_calls(slots->cap(), "address");
        auto body = !trpc_name.empty() ? trpc::error(error, trpc_name)
                    : tools_shape        ? R"({"error":)" + manager_errors::tools_error(error) + "}"
                                         : R"({"error":)" + error.object + "}";
        return out->respond(429, json_type, std::move(body), {{"Retry-After", "1"}});
      }
      if (kind == http_route::run_action && ctx.runs)
        return (*ctx.runs)(std::make_shared<http_run>(
          http_run{std::move(r), out, {slots, std::move(address)}, tools_shape}));
      http_caller_args args{std::move(r), out, ctx.door, kind, {slots, std::move(address)},
                            ctx.supervisor, std::move(trpc_name), tools_shape};
      auto caller = ctx.system->spawn(http_caller, std::move(args));
      caf::anon_send(ctx.supervisor, adopt_atom_v, caf::actor_cast<caf::actor>(caller));
    };
    // runAction, the call this door is for, first: no route before the table
    // takes a POST to these paths (the GET pages, the trace routes, the tRPC
    // queries; a `batch` query makes it a tRPC batch, refused below).
    if (post && req.query.count("batch") == 0) {
      if (p == "/api/runAction")
        return spawn_caller(std::move(req), res, http_route::run_action, {}, true);
      if (p == "/api/rpc/runAction")
        return spawn_caller(std::move(req), res, http_route::run_action, {});
    }
    if (get && p == "/api/__health")
      return respond_plain(res, 200, "OK");
    if (get && p == "/api/__stats")
      return res->respond(200, json_type, ctx.stats_json());
    // Operator endpoints: cheap, answered on the I/O thread.
    if (get && p == "/metrics")
      return res->respond(200, "text/plain; version=0.0.4; charset=utf-8", ctx.metrics_text());
    // Membership as this node sees it (published by the cluster node).
    if (get && p == "/api/cluster")
      return res->respond(200, json_type,
                          cluster_json(ctx.door));
    if (get && ctx.ui_assets && !operator_path(p))
      if (auto* f = ctx.ui_assets->find(p))
        return respond_app_file(req, res, *f);
    if (get && (p == "/" || p.starts_with("/ui/"))) {
      if (auto* a = ui::find_asset(p == "/" ? "/ui/index.html" : p))
        return respond_asset(req, res, *a);
    }
    if (serve_trace_route(*ctx.system, ctx.traces, req, res))
      return;
    if (get && p == "/healthz")
      return respond_plain(res, 200, "ok\n");
    // Readiness is the supervisor's to say: asked by a caller actor.
    if (get && p == "/readyz") {
      http_caller_args args{std::move(req), res, ctx.door, http_route::readiness, {},
                            ctx.supervisor, {}};
      auto caller = ctx.system->spawn(http_caller, std::move(args));
      caf::anon_send(ctx.supervisor, adopt_atom_v, caf::actor_cast<caf::actor>(caller));
      return;
    }
    // One of the tools server's tRPC queries, with its input (a JSON
    // object, or empty), answered into `out` (alone, or a part of a batch).
    auto serve_query = [&](const std::string& name, const std::string& raw_input,
                           net::http_request r, const net::http_responder_ptr& out) {
      auto q = find_tool_query(name);
      if (q == tool_query::none) {
        if (unserved_tool_procedure(name))
          return out->respond(
            501, json_type,
            trpc::error(name + " is not served by actor-host's manager: datasets, evaluations, "
                               "prompts, logs and the app process are the Genkit CLI's",
                        501, name));
        return out->respond(404, json_type,
                            trpc::error("No query procedure " + name, 404, name));
      }
      auto parsed = trpc::input_as_query(raw_input);
      if (!parsed)
        return out->respond(400, json_type, trpc::bad_request(parsed.error(), name));
      auto& input = *parsed;
      switch (q) {
        case tool_query::environment:
          return out->respond(200, json_type, trpc::result(genkit_environment()));
        case tool_query::traces:
          return serve_trace_procedure(*ctx.system, ctx.traces, name, input, out);
        default:
          break;
      }
      r.query = std::move(input);
      auto kind = q == tool_query::actions    ? http_route::actions
                  : q == tool_query::values   ? http_route::values
                  : q == tool_query::runtimes ? http_route::runtimes
                                              : http_route::current_runtime;
      spawn_caller(std::move(r), out, kind, name);
    };
    // The Genkit tools server's tRPC queries, beside our own routes: one
    // per request, or a batch (`?batch=1`, names joined by commas, inputs
    // keyed by position), as tRPC's httpBatchLink sends them.
    if (p.starts_with("/api/")) {
      auto tail = p.substr(5);
      bool batched = req.query.count("batch") != 0;
      if (batched || find_tool_query(tail) != tool_query::none || unserved_tool_procedure(tail)) {
        auto names = batched ? trpc::batch_names(tail) : std::vector<std::string>{tail};
        if (names.empty())
          return res->respond(400, json_type,
                              trpc::bad_request("a batch names 1 to "
                                                  + std::to_string(trpc::max_batch_size)
                                                  + " procedures, joined by commas",
                                                tail));
        if (!get)
          return res->respond(405, json_type,
                              trpc::error("use GET for the queries of " + tail
                                            + " (batched mutations are not served)",
                                          405, tail),
                              {{"Allow", "GET"}});
        std::string raw_input;
        if (auto i = req.query.find("input"); i != req.query.end())
          raw_input = i->second;
        if (!batched)
          return serve_query(names[0], raw_input, std::move(req), res);
        // Batch inputs: {"0": input of the first, ...}; absent = none.
        rpc::object_members inputs;
        if (!raw_input.empty()) {
          auto split = rpc::split_object(raw_input);
          if (!split || !rpc::validate(raw_input))
            return res->respond(400, json_type,
                                trpc::bad_request("a batch's input must be a JSON object keyed "
                                                  "by position (\"0\", \"1\", ...)",
                                                  tail));
          inputs = std::move(*split);
        }
        auto b = trpc::batch::make(res, names.size());
        // One trace query per batch: each may answer up to the store's
        // max_answer_bytes, and 32 of them in one GET held 4 GB.
        bool traces_asked = false;
        for (std::size_t i = 0; i < names.size(); ++i) {
          if (find_tool_query(names[i]) == tool_query::traces) {
            if (traces_asked) {
              b->part(i)->respond(
                400, json_type,
                trpc::bad_request("one trace query (listTraces, getTrace) per batch: ask for "
                                  "this one on its own",
                                  names[i]));
              continue;
            }
            traces_asked = true;
          }
          auto* in = inputs.find(std::to_string(i));
          serve_query(names[i], in && *in != "null" ? *in : std::string{}, req, b->part(i));
        }
        return;
      }
    }
    // The tools server's paths answer in its shapes (runAction and
    // streamAction errors as the Dev UI reads them, cancelAction as a tRPC
    // mutation); /api/rpc/ has the same calls with JSON-RPC error objects.
    enum class shape { ours, tools, trpc };
    struct route_spec {
      const char* path;
      bool needs_post;
      http_route kind;
      shape answers;
    };
    static const route_spec table[] = {
      {"/api/runtimes", false, http_route::runtimes, shape::ours},
      {"/api/services", false, http_route::services, shape::ours},
      {"/api/actions", false, http_route::actions, shape::ours},
      {"/api/describe", false, http_route::describe, shape::ours},
      {"/api/values", false, http_route::values, shape::ours},
      {"/api/runAction", true, http_route::run_action, shape::tools},
      {"/api/streamAction", true, http_route::stream_action, shape::tools},
      {"/api/cancelAction", true, http_route::cancel_action, shape::trpc},
      {"/api/sendBidiInput", true, http_route::send_bidi_input, shape::tools},
      {"/api/endBidiInput", true, http_route::end_bidi_input, shape::tools},
      {"/api/rpc/runAction", true, http_route::run_action, shape::ours},
      {"/api/rpc/streamAction", true, http_route::stream_action, shape::ours},
      {"/api/rpc/cancelAction", true, http_route::cancel_action, shape::ours},
    };
    for (auto& [path, needs_post, kind, answers] : table) {
      if (p != path)
        continue;
      if ((needs_post && !post) || (!needs_post && !get)) {
        auto body = R"({"error":)"
                    + rpc::error_object(rpc::code::invalid_request,
                                        std::string{"Invalid request: use "}
                                          + (needs_post ? "POST" : "GET") + " for " + p)
                    + "}";
        return res->respond(405, json_type, std::move(body),
                            {{"Allow", needs_post ? "POST" : "GET"}});
      }
      return spawn_caller(std::move(req), res, kind,
                          answers == shape::trpc ? std::string{"cancelAction"} : std::string{},
                          answers == shape::tools);
    }
    auto body = R"({"error":)"
                + rpc::error_object(rpc::code::method_not_found, "Not found: " + p) + "}";
    res->respond(404, json_type, std::move(body));
  };
}

} // namespace actor_host
