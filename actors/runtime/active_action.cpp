#include "actors/runtime/active_action.hpp"

#include "actions/program_action.hpp"
#include "actors/common/span_exporter.hpp"
#include "schema/json_schema.hpp"
#include "traces/run_span.hpp"
#include "wire/jsonrpc.hpp"
#include "wire/secure_random.hpp"
#include "wire/status_error.hpp"

#include <boost/json.hpp>
#include "obs/log.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <string_view>
#include <typeinfo>

namespace actor_host {

namespace json = boost::json;
namespace rpc = wire::jsonrpc;
using wire::status_code;

std::string make_trace_id() {
  return wire::secure_random_hex(16);
}

std::string root_span_id(const std::string& trace_id) {
  return trace_id.substr(0, 16);
}

std::string run_failure(status_code code, const std::string& message, const std::string& trace_id,
                        const std::string& stack, const std::string& stderr_tail) {
  // details carry what helps a person; Genkit's tools show them as they are.
  return wire::status_error(code, message,
                                {{"stack", stack}, {"traceId", trace_id}, {"stderr", stderr_tail}});
}

active_action_state::~active_action_state() {
  // Normally the run has answered and its session is down by now. If the run
  // was ended from outside, the handler's thread must not run on for nobody,
  // and the input queue must end so the handler never waits on it.
  if (!answered && req.cancel)
    req.cancel->trigger();
  if (bidi)
    caf::anon_send_exit(bidi, caf::exit_reason::user_shutdown);
}

namespace {

using self_ptr = caf::stateful_actor<active_action_state>*;

/// `raw` (empty: null) read with the system's depth limit; `ec` says why not.
json::value parse_value(const std::string& raw, json::error_code& ec) {
  if (raw.empty())
    return nullptr;
  json::parse_options deep;
  deep.max_depth = wire::jsonrpc::max_json_depth;
  return json::parse(raw, ec, {}, deep);
}

/// For what validate_input has already accepted.
json::value parse_or_null(const std::string& raw) {
  json::error_code ec;
  auto v = parse_value(raw, ec);
  return ec ? json::value{} : v;
}

/// The one check of a value against one of the action's compiled schemas,
/// for the input before the run and the output after it: empty when `v`
/// conforms (or there is no schema), else ajv-worded "<path>: <reason>"s.
std::vector<std::string> schema_errors(const std::shared_ptr<const schema::json_schema>& schema,
                                       const json::value& v) {
  std::vector<std::string> errors;
  if (schema && !schema->validate(v, errors) && errors.empty())
    errors.emplace_back("(root): does not match the schema");
  return errors;
}

std::string join(const std::vector<std::string>& xs, std::string_view sep) {
  std::string out;
  for (auto& x : xs)
    out += (out.empty() ? "" : std::string{sep}) + x;
  return out;
}

// The handler's context: lives on the executor thread; chunks go to the
// owning active_action as messages, in call order. Numbers are written the
// way JavaScript writes them (17, not 1.7E1), as Genkit peers expect to read.
class run_context : public actions::action_context {
public:
  run_context(const run_request& req, std::string trace_id, caf::actor owner)
    : input_(parse_or_null(req.input)), init_(parse_or_null(req.init)),
      context_(parse_or_null(req.context)), trace_id_(std::move(trace_id)),
      streaming_(req.stream), owner_(std::move(owner)), cancel_(req.cancel),
      inputs_(req.inputs) {
  }

  const json::value& input() const override {
    return input_;
  }
  const json::value& init() const override {
    return init_;
  }
  const json::value& context() const override {
    return context_;
  }
  const std::string& trace_id() const override {
    return trace_id_;
  }
  bool streaming() const override {
    return streaming_;
  }
  void send_chunk(json::value chunk) override {
    if (streaming_)
      caf::anon_send(owner_, run_chunk_atom_v, schema::json_stringify(chunk));
  }
  actions::input_stream* inputs() override {
    return inputs_.get();
  }
  const actions::cancel_signal& cancel() const override {
    return *cancel_;
  }

private:
  json::value input_;
  json::value init_;
  json::value context_;
  std::string trace_id_;
  bool streaming_;
  caf::actor owner_;
  std::shared_ptr<actions::cancel_flag> cancel_;
  std::shared_ptr<actions::input_queue> inputs_;
};

// Runs the handler to completion on a detached (own-thread) actor and
// reports (result_atom, ok, raw) to the owner. Never throws.
void execute(caf::blocking_actor*, caf::actor owner, run_request req, std::string trace_id) {
  auto key = req.action->key();
  // Everything the handler logs on this thread names the run.
  obs::scoped_log_fields fields{{.trace_id = trace_id, .action = key}};
  std::string outcome;
  bool ok = false;
  try {
    run_context ctx{req, trace_id, owner};
    auto result = req.action->handler(ctx);
    // A result that breaks the action's own contract is the action's fault,
    // not the caller's: INTERNAL, naming what to fix.
    if (auto errors = schema_errors(req.action->output_validator, result); !errors.empty())
      throw actions::action_error(status_code::internal,
                                   "output of " + key + " does not match its outputSchema: "
                                     + join(errors, "; "));
    outcome = R"({"result":)" + schema::json_stringify(result) + R"(,"telemetry":{"traceId":")" + trace_id
              + R"("}})";
    ok = true;
  } catch (const actions::program_error& e) {
    outcome = run_failure(e.code(), e.what(), trace_id,
                          std::string{"program_error: "} + e.what() + "\n    at " + key,
                          e.stderr_tail());
  } catch (const actions::action_error& e) {
    outcome = run_failure(e.code(), e.what(), trace_id,
                          std::string{"action_error: "} + e.what() + "\n    at " + key);
  } catch (const std::exception& e) {
    outcome = run_failure(status_code::internal, e.what(), trace_id,
                          std::string{typeid(e).name()} + ": " + e.what() + "\n    at " + key);
  } catch (...) {
    outcome = run_failure(status_code::internal, "unknown exception", trace_id,
                          "unknown exception\n    at " + key);
  }
  spdlog::debug("run of {} {}", key, ok ? "succeeded" : "failed");
  caf::anon_send(owner, result_atom_v, ok, std::move(outcome));
}

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
           std::chrono::system_clock::now().time_since_epoch())
    .count();
}

/// The run's span, for the exporter: only runs whose trace began have one.
void export_span(self_ptr self, bool ok, const std::string& raw) {
  auto& st = self->state;
  if (!st.req.spans || st.trace_id.empty())
    return;
  traces::run_span s;
  s.trace_id = st.trace_id;
  s.span_id = root_span_id(st.trace_id);
  s.action_type = st.req.action->type;
  s.name = st.req.action->name;
  s.input = st.req.input;
  s.ok = ok;
  s.start_ms = st.started_ms;
  s.end_ms = now_ms();
  auto copy = raw;
  if (ok) {
    std::string_view result;
    if (rpc::find_members(copy, {"result"}, &result))
      s.output = std::string{result};
  } else {
    std::string_view data;
    std::string message;
    if (rpc::find_members(copy, {"data"}, &data) && !data.empty()) {
      std::string_view m;
      if (rpc::find_members(copy, data, {"message"}, &m))
        rpc::string_value(m, message);
    }
    s.error_message = message.empty() ? std::string{"run failed"} : message;
  }
  self->send(st.req.spans, span_atom_v, traces::trace_data_json(s));
}

/// Sends the final answer, once.
void answer(self_ptr self, bool ok, std::string raw) {
  auto& st = self->state;
  st.answered = true;
  export_span(self, ok, raw);
  self->send(st.link, action_done_atom_v, st.req.request_id, ok, std::move(raw));
}

/// After the answer: the run ends once its bidi session is down, so that its
/// parent sees the whole subtree gone when it sees the run gone.
void finish(self_ptr self) {
  auto& st = self->state;
  if (!st.bidi)
    return self->quit();
  self->send_exit(st.bidi, caf::exit_reason::user_shutdown);
  self->become(st.draining);
}

bool validate_input(self_ptr self) {
  auto& req = self->state.req;
  // Input the runtime cannot read is refused, with or without a schema (it
  // used to run as null): the manager passed it, so only its depth can be
  // the reason.
  for (const auto* raw : {&req.input, &req.init, &req.context}) {
    json::error_code ec;
    parse_value(*raw, ec);
    if (!ec)
      continue;
    auto what = raw == &req.input ? "input" : raw == &req.init ? "init" : "context";
    auto message = std::string{"INVALID_ARGUMENT: "} + what + " is nested deeper than "
                   + std::to_string(wire::jsonrpc::max_json_depth) + " levels or not JSON ("
                   + ec.message() + ")";
    answer(self, false,
           run_failure(status_code::invalid_argument, message, {}, "action_error: " + message));
    return false;
  }
  auto& schema = req.action->input_validator;
  if (!schema || req.inputs)
    return true; // bidi runs validate each chunk instead
  auto input = parse_or_null(req.input);
  auto errors = schema_errors(schema, input);
  if (errors.empty())
    return true;
  auto message = "INVALID_ARGUMENT: "
                 + schema::schema_error_message(errors, input, req.action->input_schema);
  // Before the trace starts, as in Genkit: no runActionState, no traceId.
  answer(self, false,
         run_failure(status_code::invalid_argument, message, {}, "action_error: " + message));
  return false;
}

} // namespace

caf::behavior active_action(caf::stateful_actor<active_action_state>* self, run_request req,
                            caf::actor link, caf::actor bidi) {
  auto& st = self->state;
  st.req = std::move(req);
  st.link = std::move(link);
  st.bidi = std::move(bidi);
  if (st.bidi)
    self->monitor(st.bidi);
  self->set_down_handler([self](caf::down_msg& dm) {
    auto& st = self->state;
    if (!st.bidi || dm.source != st.bidi.address())
      return;
    // Ended early (the link dropped it for a reused request id): its queue has
    // ended, the handler just reads no more input.
    st.bidi = nullptr;
    if (st.answered)
      self->quit();
  });
  st.draining = caf::behavior{
    // Only the session's down message matters now.
    [](cancel_atom) {},
    [](input_error_atom, const std::string&) {},
  };
  st.running = caf::behavior{
    [self](run_chunk_atom, std::string& raw) {
      auto& st = self->state;
      self->send(st.link, action_chunk_atom_v, st.req.request_id, std::move(raw));
    },
    [self](result_atom, bool ok, std::string& raw) {
      auto& st = self->state;
      if (st.input_error) {
        ok = false;
        // The message starts with its status name (bidi_session).
        auto name = std::string_view{*st.input_error}.substr(0, st.input_error->find(':'));
        auto code = wire::status_from_name(name).value_or(status_code::invalid_argument);
        raw = run_failure(code, *st.input_error, st.trace_id,
                          "action_error: " + *st.input_error);
      }
      answer(self, ok, std::move(raw));
      finish(self);
    },
    [self](cancel_atom) { self->state.req.cancel->trigger(); },
    [self](input_error_atom, std::string& message) {
      auto& st = self->state;
      if (!st.input_error)
        st.input_error = std::move(message);
      st.req.cancel->trigger();
    },
  };
  if (!validate_input(self)) {
    // Never a bidi run (those validate each chunk), so nothing to wait for.
    self->quit();
    return {};
  }
  st.trace_id = make_trace_id();
  st.started_ms = now_ms();
  self->send(st.link, action_trace_atom_v, st.req.request_id, st.trace_id);
  self->spawn<caf::detached>(execute, caf::actor{self}, st.req, st.trace_id);
  return st.running;
}

} // namespace actor_host
