#include "actors/manager/manager_impl.hpp"

namespace actor_host {

std::string manager::impl::start_traces() {
  auto& d = *this;
  if (!d.opts.otlp_endpoint.empty() && d.opts.trace_store.empty())
    return "otlp_endpoint: spans reach the collector through the trace store; set trace_store "
           "too (--trace-store FILE)";
  if (!d.opts.trace_store.empty()) {
    std::string err;
    if (d.opts.trace_store_default)
      err = traces::make_store_folder(d.opts.trace_store);
    // A store of the layout before is migrated here, before the manager
    // listens: said in the log, before and after.
    auto note = [](const std::string& text) { spdlog::info("trace store: {}", text); };
    auto store = err.empty() ? traces::trace_store::open(d.opts.trace_store,
                                                         d.opts.trace_retention, err, note)
                             : nullptr;
    if (!store && d.opts.trace_store_default) {
      // Not asked for: a read-only project is no reason not to start.
      obs::global().trace_store_unavailable.store(1, std::memory_order_relaxed);
      spdlog::warn("No trace store: the default one ({}) cannot be used: {}; runs are not traced "
                   "(set --trace-store FILE, or --trace-store none to say so)",
                   d.opts.trace_store, err);
      d.opts.trace_store.clear();
      if (!d.opts.otlp_endpoint.empty())
        return "otlp_endpoint: spans reach the collector through the trace store, which "
               "cannot be opened: " + err;
      return {};
    }
    if (!store)
      return "trace store: " + err;
    caf::actor exporter;
    if (!d.opts.otlp_endpoint.empty()) {
      auto u = wire::parse_url(d.opts.otlp_endpoint);
      if (!u || u->scheme != "http")
        return "otlp_endpoint: '" + d.opts.otlp_endpoint
               + "' is not an http:// URL (OTLP/HTTP JSON, e.g. http://collector:4318)";
      span_exporter_options eo;
      eo.max_queued = 1024;
      eo.path = "/v1/traces";
      auto base = d.opts.otlp_endpoint;
      while (!base.empty() && base.back() == '/')
        base.pop_back();
      exporter = d.spawn_child(span_exporter, base, http_span_poster(d.io), eo);
      spdlog::info("Spans are exported to the OpenTelemetry collector at {}/v1/traces", base);
    }
    // SQLite waits on the disk: the keeper gets a thread of its own.
    d.traces = d.sys.spawn<caf::detached>(trace_keeper,
                                         std::shared_ptr<traces::trace_store>{std::move(store)},
                                         exporter);
    caf::anon_send(d.supervisor, adopt_atom_v, d.traces);
    d.route_spans = make_route_span_queue(
      d.traces, [&d](auto fun, route_span_queue_ptr q) { return d.spawn_child(fun, std::move(q)); });
    // Reads on a connection and a thread of their own: a filtered listing
    // that scans for seconds no longer holds up the stores behind it.
    std::string why;
    if (auto reads = traces::trace_store::open(d.opts.trace_store, d.opts.trace_retention, why)) {
      auto reader = d.sys.spawn<caf::detached>(
        trace_reader, std::shared_ptr<traces::trace_store>{std::move(reads)});
      caf::anon_send(d.supervisor, adopt_atom_v, reader);
      caf::anon_send(d.traces, trace_reader_atom_v, reader);
    } else {
      spdlog::warn("trace store: no reader connection ({}); listings run on the writer's thread",
                   why);
    }
  }
  return {};
}

// Reflection V1 runtimes (Genkit apps started the V1 way, GENKIT_ENV=dev) are
// found through their runtime files and reached through a link that speaks
// V1 to them and V2 to the runtime connection above it: the rest of the
// manager sees one kind of runtime.
void manager::impl::start_v1_discovery(const connection_options& base,
                                       const std::string& telemetry_url) {
  v1_discovery_options o;
  o.runtimes_dir = registry::runtimes_directory(opts.project_root);
  o.own_ports = {reflection.port(), api.port(), workers.port()};
  if (opts.worker_rbac_port)
    o.own_ports.push_back(rbac_workers.port());
  if (grpc)
    o.own_ports.push_back(grpc->port());
  o.connect = [spawn = spawner(), dir = directory, io = &io, base, telemetry_url,
               policy = opts.policy, cap = opts.max_frame_bytes](const registry::runtime_file& f) {
    net::v1_link_options lo;
    lo.runtime_id = f.id;
    lo.url = f.reflection_server_url;
    lo.register_params = registry::runtime_file_json(f);
    lo.telemetry_url = telemetry_url;
    lo.request_timeout = std::chrono::duration_cast<std::chrono::milliseconds>(
      policy.request_timeout);
    lo.max_answer_bytes = cap;
    lo.max_exchanges = std::max<std::size_t>(policy.max_calls_per_caller, 1);
    auto link = net::v1_runtime_link::make(*io, std::move(lo));
    auto copts = base;
    copts.reflection_url = f.reflection_server_url;
    copts.protocol = "v1";
    copts.telemetry_url.clear(); // V1 runtimes hear of it through /api/notify
    auto t = with_read_window(link, policy.max_unread_frames);
    auto conn = spawn(runtime_connection, t, dir, copts);
    link->start(std::make_shared<frame_bridge>(conn, t));
    return v1_connection{caf::actor_cast<caf::actor>(conn), link};
  };
  spdlog::info("Watching {} for Reflection V1 runtimes", o.runtimes_dir);
  // It reads the disk: a thread of its own.
  caf::anon_send(supervisor, adopt_atom_v, sys.spawn<caf::detached>(v1_discovery, std::move(o)));
}

} // namespace actor_host
