#include "actors/common/span_exporter.hpp"

#include <spdlog/spdlog.h>

namespace actor_host {

namespace {

using self_ptr = caf::stateful_actor<span_exporter_state>*;

bool worth_a_line(std::uint64_t n) {
  return n == 1 || n % 100 == 0;
}

void pump(self_ptr self) {
  auto& st = self->state;
  while (st.in_flight < st.limits.max_in_flight && !st.queued.empty()) {
    ++st.in_flight;
    auto body = std::move(st.queued.front());
    st.queued.pop_front();
    st.post(st.url + st.limits.path, std::move(body),
            [hdl = caf::actor{self}](net::post_outcome o) {
              caf::anon_send(hdl, span_sent_atom_v, o.status, std::move(o.error));
            });
  }
}

} // namespace

caf::behavior span_exporter(caf::stateful_actor<span_exporter_state>* self, std::string url,
                            span_poster post, span_exporter_options limits) {
  auto& st = self->state;
  st.url = std::move(url);
  st.pinned = !st.url.empty();
  st.post = std::move(post);
  st.limits = limits;
  return {
    [self](span_atom, std::string& trace_data) {
      auto& st = self->state;
      if (st.url.empty())
        return;
      if (st.queued.size() >= st.limits.max_queued) {
        if (worth_a_line(++st.dropped))
          spdlog::warn("span export to {} falls behind: {} span(s) dropped so far ({} waiting)",
                       st.url, st.dropped, st.queued.size());
        return;
      }
      st.queued.push_back(std::move(trace_data));
      pump(self);
    },
    [self](span_target_atom, std::string& url) {
      auto& st = self->state;
      if (st.pinned || url == st.url)
        return;
      spdlog::info("spans go to the telemetry server {}", url.empty() ? "(none)" : url);
      st.url = std::move(url);
      if (st.url.empty())
        st.queued.clear();
    },
    [self](span_sent_atom, int status, std::string& error) {
      auto& st = self->state;
      --st.in_flight;
      if (status >= 200 && status < 300) {
        ++st.sent;
      } else if (worth_a_line(++st.failed)) {
        spdlog::warn("span export to {} failed ({} so far): {}", st.url, st.failed,
                     error.empty() ? "HTTP " + std::to_string(status) : error);
      }
      pump(self);
    },
  };
}

span_poster http_span_poster(net::io_runtime& io) {
  return [&io](const std::string& url, std::string body,
               std::function<void(net::post_outcome)> done) {
    net::http_post(io, url, std::move(body), "application/json", std::chrono::seconds(10),
                   std::move(done));
  };
}

} // namespace actor_host
