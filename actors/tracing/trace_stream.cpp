#include "actors/tracing/trace_stream.hpp"

#include "actors/tracing/trace_keeper.hpp"
#include "wire/jsonrpc.hpp"
#include "wire/status_error.hpp"

namespace actor_host {

namespace {

std::string framed(trace_stream_format f, const std::string& json) {
  return f == trace_stream_format::sse ? "data: " + json + "\n\n" : json + "\n";
}

} // namespace

void start_trace_stream(caf::actor_system& sys, const caf::actor& keeper, std::string trace_id,
                        net::http_responder_ptr res, trace_stream_format format) {
  sys.spawn([keeper, trace_id = std::move(trace_id), res = std::move(res),
             format](caf::event_based_actor* self) -> caf::behavior {
    // The client leaving ends the stream (and the keeper's watch with it).
    res->on_abort([hdl = caf::actor{self}] {
      caf::anon_send_exit(hdl, caf::exit_reason::user_shutdown);
    });
    self->monitor(keeper);
    self->set_down_handler([self, res](caf::down_msg&) {
      res->finish();
      self->quit();
    });
    // No timer: the keeper answers at once, and CAF bounces the request if
    // it is gone (call_path.hpp, answered_in_handler).
    self->request(keeper, caf::infinite, trace_watch_atom_v, trace_id, caf::actor{self})
      .then(
        [self, res, trace_id, format](bool accepted, std::string& snapshot) {
          if (!accepted) {
            res->respond(503, "application/json",
                         R"({"error":)"
                           + wire::status_json(wire::status_code::resource_exhausted,
                                                   "too many trace streams are open (at most "
                                                     + std::to_string(max_trace_watchers) + ")")
                           + "}");
            return self->quit();
          }
          if (format == trace_stream_format::sse)
            res->start_stream(200, "text/event-stream",
                              {{"Cache-Control", "no-cache"}, {"X-Accel-Buffering", "no"}});
          else
            res->start_stream(200, "text/plain", {{"X-Genkit-Trace-Id", trace_id}});
          if (!snapshot.empty())
            res->write(framed(format, snapshot));
        },
        [self, res](caf::error&) {
          res->finish();
          self->quit();
        });
    return {
      [res, format](trace_event_atom, const std::string& event) {
        res->write(framed(format, event));
      },
    };
  });
}

} // namespace actor_host
