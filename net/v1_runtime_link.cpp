#include "net/v1_runtime_link.hpp"

#include "net/detail/beast_names.hpp"
#include "net/http_client.hpp"
#include "net/io_runtime.hpp"
#include "registry/runtime_info.hpp"
#include "wire/jsonrpc.hpp"
#include "wire/reflection_v1_bridge.hpp"
#include "wire/status_error.hpp"
#include "wire/url.hpp"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include <spdlog/spdlog.h>

#include <map>

namespace actor_host::net {

namespace rpc = wire::jsonrpc;

namespace {

// The id of the `register` request the link makes on the runtime's behalf.
constexpr std::string_view register_id = R"("v1-register")";

class link_impl final : public v1_runtime_link, public std::enable_shared_from_this<link_impl> {
public:
  link_impl(io_runtime& io, v1_link_options opts)
    : strand_(asio::make_strand(io.context())), opts_(std::move(opts)), health_(strand_) {
  }

  void start(frame_handler_ptr handler) override {
    asio::dispatch(strand_, [self = shared_from_this(), handler = std::move(handler)]() mutable {
      self->handler_ = std::move(handler);
      self->check_health(true);
    });
  }

  void send_text(std::string frame) override {
    asio::dispatch(strand_, [self = shared_from_this(), frame = std::move(frame)]() mutable {
      self->on_manager_frame(frame);
    });
  }

  void send_binary(std::string) override {
  }

  void pause_reading() override {
    asio::dispatch(strand_, [self = shared_from_this()] {
      self->paused_ = true;
      for (auto& [id, r] : self->runs_)
        r.ex->pause_reading();
    });
  }

  void resume_reading() override {
    asio::dispatch(strand_, [self = shared_from_this()] {
      self->paused_ = false;
      for (auto& [id, r] : self->runs_)
        r.ex->resume_reading();
    });
  }

  void close(std::uint16_t, std::string reason) override {
    asio::dispatch(strand_, [self = shared_from_this(), reason = std::move(reason)] {
      self->shut("closed by the manager (" + reason + ")", true);
    });
  }

  const std::string& peer() const override {
    return opts_.url;
  }

  void ping(std::function<void()> on_pong) override {
    asio::dispatch(strand_, [self = shared_from_this(), on_pong = std::move(on_pong)]() mutable {
      if (self->closed_)
        return;
      self->get_health([on_pong = std::move(on_pong)](const wire::expected<void>& health) {
        if (health)
          on_pong();
      });
    });
  }

private:
  // One request in flight, by its raw V2 id.
  struct exchange {
    wire::v1::http_plan plan;
    std::shared_ptr<http_exchange> ex;
    int status = 0;
    std::string trace;   // X-Genkit-Trace-Id
    std::string pending; // the body, or a stream's record not yet complete
    std::shared_ptr<asio::steady_timer> grace; // after a cancel
  };

  void deliver(std::string frame) {
    if (!closed_ && handler_)
      handler_->on_text(std::move(frame));
  }

  // `runtime_alive`: it still answers, so the runs it started are cancelled
  // there too (a V1 runtime keeps running an action whose client left).
  void shut(const std::string& reason, bool runtime_alive = false) {
    if (std::exchange(closed_, true))
      return;
    health_.cancel();
    for (auto& [id, r] : runs_) {
      if (runtime_alive && r.plan.what == wire::v1::http_plan::kind::run && !r.trace.empty()
          && !r.grace)
        tell_cancel(r.trace);
      r.ex->cancel();
      if (r.grace)
        r.grace->cancel();
    }
    runs_.clear();
    if (auto h = std::exchange(handler_, nullptr))
      h->on_closed(reason);
  }

  // Healthy as Genkit's CLI judges: a 200, or an error other than not
  // reaching the server (a busy runtime that answers late is not gone).
  // `done` takes a wire::expected<void>: healthy, or why not.
  template <class Done>
  void get_health(Done done) {
    http_request_spec spec;
    spec.url = wire::with_query(opts_.url + "/api/__health", "id", opts_.runtime_id);
    spec.timeout = opts_.request_timeout;
    spec.max_body_bytes = 64 * 1024;
    auto status = std::make_shared<int>(0);
    http_handlers h;
    h.on_head = [status](http_answer_head head) { *status = head.status; };
    h.on_end = [status, done = std::move(done)](http_end end) mutable {
      if (*status != 0 ? *status == 200 : end.reached)
        return done(wire::expected<void>{});
      done(wire::unexpected{*status != 0 ? "HTTP " + std::to_string(*status)
                                             : std::move(end.error)});
    };
    http_fetch(strand_, std::move(spec), std::move(h));
  }

  void check_health(bool first) {
    if (closed_)
      return;
    get_health([self = shared_from_this(), first](const wire::expected<void>& health) {
      if (self->closed_)
        return;
      if (!health)
        return self->shut(first ? "no Reflection V1 server answers at " + self->opts_.url + " ("
                                    + health.error() + ")"
                                : "health check failed (" + health.error() + ")");
      if (first)
        self->deliver(rpc::request("register", self->opts_.register_params, register_id));
      self->health_.expires_after(self->opts_.health_interval);
      self->health_.async_wait([self](error_code ec) {
        if (!ec)
          self->check_health(false);
      });
    });
  }

  void notify_runtime() {
    if (opts_.telemetry_url.empty())
      return;
    http_request_spec spec;
    spec.post = true;
    spec.url = opts_.url + "/api/notify";
    spec.body = R"({"telemetryServerUrl":)" + rpc::quote(opts_.telemetry_url)
                + R"(,"reflectionApiSpecVersion":1})";
    spec.timeout = opts_.request_timeout;
    spec.max_body_bytes = 64 * 1024;
    http_handlers h;
    h.on_end = [id = opts_.runtime_id](http_end end) {
      if (!end.error.empty())
        spdlog::warn("runtime {}: telling it the telemetry server failed: {}", id, end.error);
    };
    http_fetch(strand_, std::move(spec), std::move(h));
  }

  // Fire and forget: the link is going, the answer changes nothing.
  void tell_cancel(const std::string& trace) {
    http_request_spec spec;
    spec.post = true;
    spec.url = opts_.url + "/api/cancelAction";
    spec.body = R"({"traceId":)" + rpc::quote(trace) + "}";
    spec.timeout = opts_.request_timeout;
    spec.max_body_bytes = 64 * 1024;
    http_handlers h;
    h.on_end = [id = opts_.runtime_id, trace](http_end end) {
      if (!end.error.empty())
        spdlog::debug("runtime {}: cancelling run {} as its link closed failed: {}", id, trace,
                      end.error);
    };
    http_fetch(strand_, std::move(spec), std::move(h));
  }

  void on_manager_frame(std::string& frame) {
    if (closed_)
      return;
    rpc::message m;
    rpc::decode_error err;
    if (!rpc::decode(frame, m, err))
      return; // the manager's own frames: cannot happen
    if (m.kind == rpc::kind::response) {
      if (m.id != register_id)
        return;
      if (!m.error.empty())
        return shut("register refused: " + m.error, true);
      return notify_runtime();
    }
    auto plan = wire::v1::plan_request(m.method, std::move(m.params));
    if (m.kind == rpc::kind::notification)
      return; // bidi input: V1 runs never take it (refused at their start)
    if (!plan.refusal.empty())
      return deliver(rpc::error_response(m.id, plan.refusal));
    if (plan.what == wire::v1::http_plan::kind::none)
      return deliver(rpc::error_response(
        m.id, rpc::error_object(rpc::code::method_not_found, "Method not found: " + m.method)));
    if (runs_.size() >= opts_.max_exchanges)
      return deliver(rpc::error_response(
        m.id, wire::status_error(wire::status_code::resource_exhausted,
                                     "runtime " + opts_.runtime_id + " has "
                                       + std::to_string(runs_.size())
                                       + " requests in flight (the cap)")));
    if (plan.what == wire::v1::http_plan::kind::cancel)
      arm_cancel_grace(plan.body);
    begin(std::move(m.id), std::move(plan));
  }

  void begin(std::string id, wire::v1::http_plan plan) {
    http_request_spec spec;
    spec.post = plan.post;
    spec.url = opts_.url + plan.target;
    spec.body = plan.body;
    spec.hops = plan.hops + 1;
    bool run = plan.what == wire::v1::http_plan::kind::run;
    // A run takes as long as it takes: its deadline is the caller's, kept by
    // the connection, which cancels it.
    spec.timeout = run ? std::chrono::milliseconds{0} : opts_.request_timeout;
    spec.max_body_bytes = run && plan.stream ? 0 : opts_.max_answer_bytes;
    auto self = shared_from_this();
    http_handlers h;
    h.on_head = [self, id](http_answer_head head) { self->on_head(id, head); };
    h.on_data = [self, id](std::string_view piece) { self->on_data(id, piece); };
    h.on_end = [self, id](http_end end) { self->on_end(id, std::move(end)); };
    auto& r = runs_[id];
    r.plan = std::move(plan);
    r.ex = http_fetch(strand_, std::move(spec), std::move(h));
    if (paused_)
      r.ex->pause_reading();
  }

  exchange* find(const std::string& id) {
    auto i = runs_.find(id);
    return i == runs_.end() ? nullptr : &i->second;
  }

  void on_head(const std::string& id, const http_answer_head& head) {
    auto* r = find(id);
    if (!r)
      return;
    r->status = head.status;
    if (r->plan.what != wire::v1::http_plan::kind::run || head.status != 200)
      return;
    // It is matched against cancels and written into a log line: only a
    // well-formed id is kept (the connection checks it again).
    auto trace = head.field("x-genkit-trace-id");
    if (registry::valid_trace_id(trace)) {
      r->trace = std::string{trace};
      deliver(wire::v1::run_state_frame(id, r->trace));
    } else if (!trace.empty()) {
      spdlog::warn("runtime {} sent an invalid X-Genkit-Trace-Id ({} bytes); ignored",
                   opts_.runtime_id, trace.size());
    }
  }

  void on_data(const std::string& id, std::string_view piece) {
    auto* r = find(id);
    if (!r)
      return;
    r->pending.append(piece);
    if (r->plan.stream && r->status == 200) {
      // NDJSON: every complete line is a chunk; the last record has no newline.
      std::size_t start = 0;
      for (auto nl = r->pending.find('\n'); nl != std::string::npos;
           nl = r->pending.find('\n', start)) {
        auto line = std::string_view{r->pending}.substr(start, nl - start);
        if (auto f = wire::v1::chunk_frame(id, line); !f.empty())
          deliver(std::move(f));
        else if (!line.empty())
          spdlog::debug("runtime {}: a stream line that is not JSON was dropped", opts_.runtime_id);
        start = nl + 1;
      }
      r->pending.erase(0, start);
    }
    if (r->pending.size() > opts_.max_answer_bytes)
      fail(id, "a record of its answer is over " + std::to_string(opts_.max_answer_bytes)
                 + " bytes");
  }

  void on_end(const std::string& id, http_end end) {
    auto* r = find(id);
    if (!r)
      return;
    if (!end.error.empty())
      return fail(id, end.error);
    auto frame = wire::v1::answer_frame(r->plan, id, r->status, std::move(r->pending), r->trace);
    finish(id);
    deliver(std::move(frame));
  }

  void fail(const std::string& id, const std::string& reason) {
    finish(id);
    deliver(wire::v1::failure_frame(id, opts_.runtime_id, reason));
  }

  void finish(const std::string& id) {
    if (auto i = runs_.find(id); i != runs_.end()) {
      i->second.ex->cancel();
      if (i->second.grace)
        i->second.grace->cancel();
      runs_.erase(i);
    }
  }

  // A run being cancelled answers CANCELLED within the grace, or is ended
  // here: a V1 runtime that ignores the cancel must not hold a socket forever.
  void arm_cancel_grace(const std::string& cancel_body) {
    std::string trace;
    auto m = rpc::split_object(cancel_body);
    auto* raw_trace = m ? m->find("traceId") : nullptr;
    if (!raw_trace || !rpc::string_value(*raw_trace, trace))
      return;
    for (auto& [id, r] : runs_) {
      if (r.plan.what != wire::v1::http_plan::kind::run || r.trace != trace || r.grace)
        continue;
      r.grace = std::make_shared<asio::steady_timer>(strand_, opts_.cancel_grace);
      r.grace->async_wait([self = shared_from_this(), id = id](error_code ec) {
        if (ec || !self->find(id))
          return;
        spdlog::warn("runtime {}: run {} did not end within {} ms of its cancel; ended here",
                     self->opts_.runtime_id, self->find(id)->trace,
                     self->opts_.cancel_grace.count());
        self->finish(id);
        self->deliver(rpc::error_response(
          id, wire::status_error(wire::status_code::cancelled, "Action was cancelled")));
      });
    }
  }

  asio::strand<asio::io_context::executor_type> strand_;
  v1_link_options opts_;
  asio::steady_timer health_;
  frame_handler_ptr handler_;
  std::map<std::string, exchange> runs_;
  bool closed_ = false;
  bool paused_ = false;
};

} // namespace

std::shared_ptr<v1_runtime_link> v1_runtime_link::make(io_runtime& io, v1_link_options opts) {
  return std::make_shared<link_impl>(io, std::move(opts));
}

} // namespace actor_host::net
