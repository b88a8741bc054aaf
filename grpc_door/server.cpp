#include "grpc_door/server.hpp"

#include "grpc_door/detail/door_state.hpp"
#include "grpc_door/reset_meter.hpp"
#include "net/access_policy.hpp"
#include "net/socket_shutdown.hpp"
#include "obs/metrics.hpp"
#include "wire/status.hpp"

#include <absl/synchronization/mutex.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_credentials_options.h>
#include <spdlog/spdlog.h>

#include <pthread.h>

#include <mutex>
#include <string_view>
#include <thread>

namespace actor_host::grpc_door {

std::string detail::peer_ip(std::string_view peer) {
  auto colon = peer.find(':');
  if (colon == std::string_view::npos)
    return {};
  auto kind = peer.substr(0, colon);
  auto rest = peer.substr(colon + 1);
  if (kind == "ipv6") {
    if (rest.size() > 1 && rest.front() == '[') {
      auto close = rest.find(']');
      if (close != std::string_view::npos)
        return std::string{rest.substr(1, close - 1)};
    }
    return {};
  }
  if (kind != "ipv4")
    return {};
  auto last = rest.rfind(':');
  return std::string{rest.substr(0, last)};
}

namespace {

/// The port of a gRPC peer string; 0 when it has none.
std::uint16_t peer_port(std::string_view peer) {
  auto colon = peer.rfind(':');
  if (colon == std::string_view::npos || colon + 1 == peer.size())
    return 0;
  unsigned port = 0;
  for (char c : peer.substr(colon + 1)) {
    if (c < '0' || c > '9' || port > 65535)
      return 0;
    port = port * 10 + static_cast<unsigned>(c - '0');
  }
  return port <= 65535 ? static_cast<std::uint16_t>(port) : 0;
}

/// A method name as it may appear in a message or a log line: printable
/// ASCII, capped.
std::string printable(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 200))
    out += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (s.size() > 200)
    out += "...";
  return out;
}

/// The token, or a loopback peer; client certificates verified by the
/// handshake or --insecure stand in for both.
grpc::Status admit(const server_options& opts, detail::cq_call& call) {
  if (!opts.token.empty()) {
    auto& md = call.ctx.client_metadata();
    auto it = md.find("authorization");
    auto token = it == md.end() ? std::string_view{}
                                : net::bearer_token({it->second.data(), it->second.size()});
    if (token.empty())
      return {grpc::StatusCode::UNAUTHENTICATED,
              "this listener needs 'authorization: Bearer <token>' metadata"};
    // Same length first, then every byte: no early exit on the content.
    unsigned diff = token.size() != opts.token.size();
    for (std::size_t i = 0; i < token.size() && i < opts.token.size(); ++i)
      diff |= static_cast<unsigned char>(token[i] ^ opts.token[i]);
    if (diff != 0)
      return {grpc::StatusCode::UNAUTHENTICATED, "the token does not match"};
    return grpc::Status::OK;
  }
  bool verified = !opts.tls.cert_file.empty() && !opts.tls.client_ca_file.empty()
                  && !opts.tls.skip_client_verify;
  if (verified || opts.insecure || net::is_loopback_address(call.ip()))
    return grpc::Status::OK;
  return {grpc::StatusCode::PERMISSION_DENIED,
          "only loopback peers may call without a token (--auth-token-file)"};
}

/// Picks the reactor that serves a call of the generic service, by method.
void serve(const detail::door_ptr& door, std::unique_ptr<detail::cq_call> call) {
  auto& opts = door->opts;
  if (!door->serving.load())
    return detail::refusal(std::move(call),
                           {grpc::StatusCode::UNAVAILABLE, "the manager is shutting down"});
  if (auto refused = admit(opts, *call); !refused.ok())
    return detail::refusal(std::move(call), refused);
  if (door->open_calls.load() >= opts.max_calls)
    return detail::refusal(std::move(call),
                           {grpc::StatusCode::RESOURCE_EXHAUSTED,
                            "too many calls open on this listener (max_connections)"});
  // Checked and counted on this one thread (counted_reactor), so a peer
  // cannot pass the cap with calls in a burst.
  if (opts.max_calls_per_peer > 0
      && door->peer_calls(call->ip()) >= opts.max_calls_per_peer)
    return detail::refusal(std::move(call),
                           {grpc::StatusCode::RESOURCE_EXHAUSTED,
                            "too many calls open from your address (max_calls_per_caller)"});
  const auto& method = call->ctx.method();
  if (method == "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"
      || method == "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo")
    return detail::reflection_reactor(door, std::move(call));
  if (method == "/grpc.health.v1.Health/Check")
    return detail::health_check_reactor(door, std::move(call));
  if (method == "/grpc.health.v1.Health/Watch")
    return detail::health_watch_reactor(door, std::move(call));
  auto cat = door->current();
  if (const auto* m = cat ? cat->find_method(method) : nullptr)
    return detail::action_reactor(door, std::move(cat), m, std::move(call));
  auto unknown = "unknown method " + printable(method)
                 + " (list the services with server reflection)";
  detail::refusal(std::move(call), {grpc::StatusCode::UNIMPLEMENTED, std::move(unknown)});
}

std::shared_ptr<grpc::ServerCredentials> credentials(const net::tls_server_files& tls,
                                                     std::string& error) {
  if (tls.cert_file.empty())
    return grpc::InsecureServerCredentials();
  if (tls.key_file.empty()) {
    error = "--grpc-auth-cert-file needs --grpc-auth-key-file";
    return nullptr;
  }
  // The files are read again every 10 s (a renewed certificate is used for
  // new handshakes; open connections stay).
  auto provider = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
    tls.key_file, tls.cert_file, tls.client_ca_file, 10);
  grpc::experimental::TlsServerCredentialsOptions options{provider};
  options.watch_identity_key_cert_pairs();
  if (!tls.client_ca_file.empty()) {
    options.watch_root_certs();
    options.set_cert_request_type(
      tls.skip_client_verify ? GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_BUT_DONT_VERIFY
                             : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  } else {
    options.set_cert_request_type(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  }
  return grpc::experimental::TlsServerCredentials(options);
}

} // namespace

struct server::impl {
  detail::door_ptr door;
  grpc::AsyncGenericService service;
  std::unique_ptr<grpc::ServerCompletionQueue> cq;
  std::unique_ptr<grpc::Server> grpc_server;
  std::thread poller;
  detail::reactor_count live;
  std::mutex accept_mtx;
  bool accepting = true; // under accept_mtx: no call is requested after shutdown began
  int port = 0;
  /// The door's thread only (on_request, on_done, poll).
  reset_meter resets{{}};
  std::chrono::steady_clock::time_point next_sweep{};

  /// Calls requested ahead: a burst of new calls is matched without waiting
  /// for the poller to request each.
  static constexpr int calls_ahead = 32;

  void request_call() {
    std::lock_guard<std::mutex> guard{accept_mtx};
    if (!accepting)
      return;
    auto* call = new detail::cq_call(&impl::on_request, &impl::on_done, this, &live);
    call->ctx.AsyncNotifyWhenDone(&call->done_tag);
    service.RequestCall(&call->ctx, &call->stream, cq.get(), cq.get(), &call->request_tag);
  }

  static void on_request(void* self, detail::cq_call* raw, bool ok) {
    std::unique_ptr<detail::cq_call> call{raw};
    if (!ok)
      return; // shutting down: the request came back unmatched
    auto* p = static_cast<impl*>(self);
    p->request_call();
    if (call->done_early) {
      // Over before it was served: nothing to answer.
      p->judge(*call, true);
      return;
    }
    serve(p->door, std::move(call));
  }

  static void on_done(void* self, detail::cq_call& call) {
    static_cast<impl*>(self)->judge(call, call.ctx.IsCancelled());
  }

  /// Counts how a call ended against its connection (reset_meter) and
  /// closes a connection whose client resets calls faster than it lets
  /// them finish.
  void judge(detail::cq_call& call, bool cancelled) {
    // The common case (a call that finished, no connection resetting)
    // costs no clock read and no peer string.
    if (!cancelled) {
      if (resets.tracked() > 0)
        resets.finished(call.peer(), std::chrono::steady_clock::now());
      return;
    }
    // Ended by its own deadline, not by the client.
    if (call.ctx.deadline() <= std::chrono::system_clock::now())
      return;
    const auto& peer = call.peer();
    if (!resets.reset(peer, std::chrono::steady_clock::now()))
      return;
    bool closed = net::shutdown_connection(call.ip(), peer_port(peer),
                                           static_cast<std::uint16_t>(port));
    // The counter counts connections closed; one already gone costs nothing.
    if (closed)
      obs::global().grpc_reset_closures.fetch_add(1, std::memory_order_relaxed);
    spdlog::warn("gRPC: {} the connection from {}: its client cancelled more than {} calls "
                 "beyond those it let finish (HTTP/2 rapid reset; max_client_resets)",
                 closed ? "closed" : "could not find", printable(peer),
                 door->opts.max_client_resets);
  }

  /// The one thread that polls the listener and runs the reactors' OnX.
  void poll() {
    pthread_setname_np(pthread_self(), "grpc-door");
    detail::cq_wakeups::mark_door_thread();
    void* tag = nullptr;
    bool ok = false;
    // Wakes at least every second for the calls whose first message is
    // overdue (door_state::expire_first_messages).
    for (;;) {
      auto now = std::chrono::system_clock::now();
      auto st = cq->AsyncNext(&tag, &ok, now + std::chrono::seconds(1));
      if (st == grpc::CompletionQueue::SHUTDOWN)
        return;
      if (st == grpc::CompletionQueue::GOT_EVENT)
        static_cast<detail::cq_tag*>(tag)->on_event(ok);
      auto steady = std::chrono::steady_clock::now();
      door->expire_first_messages(steady);
      if (steady >= next_sweep) {
        resets.sweep(steady);
        next_sweep = steady + std::chrono::seconds(1);
      }
    }
  }
};

server::server(std::unique_ptr<impl> p) : impl_(std::move(p)) {
}

server::~server() {
  shutdown();
}

std::unique_ptr<server> server::start(server_options opts, std::string& error) {
  auto p = std::make_unique<impl>();
  p->door = std::make_shared<detail::door_state>();
  p->door->opts = std::move(opts);
  auto& o = p->door->opts;
  p->resets = reset_meter{{o.max_client_resets, 100.0}};
  auto creds = credentials(o.tls, error);
  if (!creds)
    return nullptr;
  // The TLS files must be readable now: the watcher only logs later.
  for (const auto* f : {&o.tls.cert_file, &o.tls.key_file, &o.tls.client_ca_file}) {
    if (f->empty())
      continue;
    std::FILE* fp = std::fopen(f->c_str(), "r");
    if (!fp) {
      error = "cannot read " + *f;
      return nullptr;
    }
    std::fclose(fp);
  }
  // Debian builds abseil without NDEBUG, so every absl::Mutex gRPC takes
  // runs the deadlock detector (a graph update per lock, ~3 % of the
  // manager's CPU under gRPC load). It checks gRPC's own locking, which is
  // not ours to debug in production.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  grpc::ServerBuilder builder;
  auto host = o.bind.find(':') != std::string::npos ? "[" + o.bind + "]" : o.bind;
  builder.AddListeningPort(host + ":" + std::to_string(o.port), creds, &p->port);
  builder.RegisterAsyncGenericService(&p->service);
  p->cq = builder.AddCompletionQueue();
  builder.SetMaxReceiveMessageSize(static_cast<int>(o.max_message_bytes));
  // gRPC's own memory (connection buffers, queued frames) is bounded: under
  // pressure it shrinks buffers, then closes connections, instead of
  // growing without end for one peer's stream or reset storm.
  grpc::ResourceQuota quota{"actor-host-grpc-door"};
  quota.Resize(std::max<std::size_t>(std::size_t{256} << 20, 16 * o.max_message_bytes));
  builder.SetResourceQuota(quota);
  builder.SetMaxSendMessageSize(-1);
  // A connection's streams are capped (gRPC advertises 2^32-1 by default):
  // one connection could otherwise queue calls without end.
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS,
                             static_cast<int>(o.max_streams_per_connection));
  // Requests come uncompressed only: gRPC 1.51 inflates a whole message
  // before it checks the size, so 1 MB of gzip cost 1 GB. A compressed
  // request fails with UNIMPLEMENTED (the algorithm is disabled); responses
  // are not compressed either.
  builder.AddChannelArgument(GRPC_COMPRESSION_CHANNEL_ENABLED_ALGORITHMS_BITSET,
                             1 << GRPC_COMPRESS_NONE);
  p->grpc_server = builder.BuildAndStart();
  if (!p->grpc_server || p->port == 0) {
    error = "cannot listen on " + host + ":" + std::to_string(o.port);
    if (p->grpc_server)
      p->grpc_server->Shutdown();
    p->cq->Shutdown();
    void* tag = nullptr;
    bool ok = false;
    while (p->cq->Next(&tag, &ok)) {
    }
    return nullptr;
  }
  p->door->wakeups.bind(p->cq.get());
  for (int i = 0; i < impl::calls_ahead; ++i)
    p->request_call();
  p->poller = std::thread{[raw = p.get()] { raw->poll(); }};
  return std::unique_ptr<server>{new server(std::move(p))};
}

std::uint16_t server::port() const {
  return static_cast<std::uint16_t>(impl_->port);
}

std::size_t server::open_calls() const {
  return impl_->door->open_calls.load();
}

void server::set_catalog(std::shared_ptr<const catalog> c) {
  impl_->door->publish(std::move(c));
  detail::notify_health_watches(impl_->door);
}

void server::shutdown(std::chrono::milliseconds grace) {
  if (!impl_->grpc_server)
    return;
  impl_->door->serving = false;
  detail::notify_health_watches(impl_->door);
  // Runs in flight may finish within the grace; then everything still open
  // (reflection and health streams at once) gets CANCELLED, and the
  // reactors of runs cancel them.
  if (!impl_->door->wait_for_actions(std::chrono::steady_clock::now() + grace)) {
    // Told why and their runs cancelled, rather than torn down with the
    // connection (which the client sees as INTERNAL).
    spdlog::info("gRPC: calls still running after the drain time are cancelled");
    impl_->door->abort_actions(
      {grpc::StatusCode::CANCELLED, std::string{wire::drain_cancel_message}});
    impl_->door->wait_for_actions(std::chrono::steady_clock::now() + std::chrono::seconds(2));
  }
  {
    std::lock_guard<std::mutex> guard{impl_->accept_mtx};
    impl_->accepting = false;
  }
  impl_->grpc_server->Shutdown(std::chrono::system_clock::now());
  // Every call is cancelled now; its reactor ends on the poller. The queue
  // may only shut once none is left to start an operation on it.
  while (!impl_->live.wait_for_none(std::chrono::steady_clock::now() + std::chrono::seconds(5)))
    spdlog::warn("gRPC: still waiting for calls to end before the listener closes");
  impl_->grpc_server->Wait();
  impl_->cq->Shutdown();
  impl_->poller.join();
  impl_->grpc_server.reset();
}

} // namespace actor_host::grpc_door
