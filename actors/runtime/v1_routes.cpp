#include "actors/runtime/v1_routes.hpp"

#include "actors/runtime/v1_reflection.hpp"
#include "wire/jsonrpc.hpp"

#include <spdlog/spdlog.h>

#include <csignal>

#include <signal.h>
#include <unistd.h>

namespace actor_host {

namespace rpc = wire::jsonrpc;

net::http_handler make_v1_routes(actions::catalog_ptr catalog, caf::actor hub,
                                 std::shared_ptr<const v1_identity> identity) {
  return [catalog = std::move(catalog), hub = std::move(hub),
          identity = std::move(identity)](net::http_request req, net::http_responder_ptr res) {
    const net::http_headers version{{"X-Genkit-Version", runtime_genkit_version}};
    auto text = [&](int status, std::string body) {
      res->respond(status, "text/plain", std::move(body), version);
    };
    if (!identity->ready.load(std::memory_order_acquire))
      return text(503, "starting");
    auto& runtime_id = identity->runtime_id;
    auto json = [&](std::string body) {
      res->respond(200, "application/json", std::move(body), version);
    };
    auto& path = req.path;
    const bool get = req.method == "GET";
    const bool post = req.method == "POST";
    if (path == "/api/__health" && get) {
      if (auto i = req.query.find("id"); i != req.query.end() && i->second != runtime_id)
        return text(503, "Invalid runtime ID");
      return text(200, "OK");
    }
    if (path == "/api/__quitquitquit" && (get || post)) {
      text(200, "OK");
      // Ends through main's ordinary shutdown, as a signal would.
      spdlog::info("asked to quit through /api/__quitquitquit");
      ::kill(::getpid(), SIGTERM);
      return;
    }
    if (path == "/api/actions" && get)
      return json(catalog->actions_map_json());
    if (path == "/api/values" && get) {
      auto i = req.query.find("type");
      if (i == req.query.end() || i->second.empty())
        return text(400, R"(Query parameter "type" is required.)");
      if (auto values = catalog->values_map_json(i->second))
        return json(*values);
      return text(400, "'type' " + i->second
                         + " is not supported. Only 'defaultModel' and 'middleware' are supported");
    }
    if (path == "/api/envs" && get)
      return json(R"(["dev"])");
    if (path == "/api/notify" && post) {
      std::string url;
      if (auto p = rpc::split_object(req.body))
        if (auto* u = p->find("telemetryServerUrl"))
          rpc::string_value(*u, url);
      if (!url.empty())
        caf::anon_send(hub, v1_notify_atom_v, std::move(url));
      return text(200, "OK");
    }
    if (path == "/api/runAction" && post) {
      auto s = req.query.find("stream");
      bool stream = s != req.query.end() && s->second == "true";
      caf::anon_send(hub, v1_run_atom_v, std::move(req.body), stream, std::move(res));
      return;
    }
    if (path == "/api/cancelAction" && post) {
      caf::anon_send(hub, v1_cancel_atom_v, std::move(req.body), std::move(res));
      return;
    }
    text(404, "Cannot " + req.method + " " + path);
  };
}

} // namespace actor_host
