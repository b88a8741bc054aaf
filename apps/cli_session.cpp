#include "apps/cli_session.hpp"

#include "net/ws_client.hpp"
#include "schema/js_stringify.hpp"
#include "wire/url.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <chrono>

namespace actor_host::apps {

namespace {

namespace json = boost::json;

constexpr std::string_view api_ws_path = "/api/ws";

// Covers resolve + connect + handshake. The manager is normally local, so a
// slow handshake means something is wrong, not that we should wait longer.
constexpr auto connect_timeout = std::chrono::seconds{5};

} // namespace

std::optional<std::string> api_ws_url(std::string manager, std::string& error) {
  // `--manager 127.0.0.1:4100` is an easy thing to type; treat it as http.
  if (manager.find("://") == std::string::npos)
    manager = "http://" + manager;
  auto url = wire::parse_url(manager);
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
  return (secure ? "wss://" : "ws://") + wire::host_header(*url) + path;
}

std::unique_ptr<manager_session> manager_session::open(const std::string& manager,
                                                       const net::tls_client_files& tls_files,
                                                       const std::string& token,
                                                       std::string& error, open_failure& why) {
  auto url = api_ws_url(manager, error);
  if (!url) {
    why = open_failure::usage;
    return nullptr;
  }
  net::tls_client_context_ptr tls;
  if (url->starts_with("wss://")) {
    tls = net::tls_client_context::load(tls_files, error);
    if (!tls) {
      why = open_failure::usage;
      return nullptr;
    }
  }
  auto client = net::blocking_ws_client::connect(*url, error, connect_timeout, std::move(tls),
                                                 token);
  if (!client) {
    error = "cannot reach the manager at " + *url + ": " + error;
    why = open_failure::unreachable;
    return nullptr;
  }
  return std::make_unique<manager_session>(std::move(client));
}

manager_session::manager_session(std::unique_ptr<net::blocking_ws_client> client)
  : client_(std::move(client)) {
  // nop
}

manager_session::~manager_session() = default;

call_result manager_session::call(std::string_view method, json::object params,
                                  const notification_handler& on_notification) {
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
      const auto* request_id = note_params->get_object().if_contains("requestId");
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
        out.error["message"] = "malformed error: " + schema::json_stringify(*err);
      return out;
    }
    const auto* res = obj.if_contains("result");
    out.result = res != nullptr ? *res : json::value{};
    return out;
  }
}

} // namespace actor_host::apps
