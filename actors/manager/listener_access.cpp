#include "actors/manager/listener_access.hpp"

#include "actors/iii/channel.hpp"

namespace actor_host {

net::access_policy access_for(const manager_options& o, listener l) {
  net::access_policy p;
  p.allowed_origins = o.allowed_origins;
  p.allowed_hosts = o.allowed_hosts;
  p.bind = o.bind;
  p.token = o.auth_token;
  p.remote_without_token = o.remote_without_token;
  switch (l) {
    case listener::reflection:
      p.token_in_query = true;
      break;
    case listener::api:
      p.json_posts = true;
      // Probes (kubelet, load balancers) carry no token; they learn only
      // "ok" or why not ready. The dashboard's files hold no data; the page
      // asks for the token and opens /api/ws with it (a browser cannot set
      // a header on a WebSocket).
      p.open_paths = {"/healthz", "/readyz", "/", "/ui/"};
      p.token_in_query = true;
      // Genkit's exporters post to the telemetry server's base URL and can
      // send no header: with a token, that URL carries it in its path.
      p.token_path_routes = {"/api/traces", "/api/otlp/v1/traces"};
      break;
    case listener::rbac_workers:
      // Workers here are authenticated by the RBAC auth function (their own
      // credentials in headers or query), not by the manager's token.
      if (!o.rbac.auth_function.empty()) {
        p.token.clear();
        p.remote_without_token = true;
      }
      [[fallthrough]];
    case listener::workers:
      p.token_in_query = true;
      // Channel sockets carry their own secret key; /otel only counts frames.
      p.open_paths = {std::string{channel_path_prefix}, "/otel"};
      break;
  }
  return p;
}

} // namespace actor_host
