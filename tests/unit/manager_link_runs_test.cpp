#define CAF_SUITE manager_link_runs

// The manager_link suite continued: bidi input, request ids reused, cancels
// racing the last chunk, runs that end badly, output schemas.

#include "manager_link_fixture.hpp"

using namespace actor_host;
using namespace actor_host::testing;
using namespace std::chrono_literals;

CAF_TEST_FIXTURE_SCOPE(manager_link_runs_tests, link_fixture)

// -- bidi input ---------------------------------------------------------------------

CAF_TEST(bidi input right behind runAction is kept in order and ends at endInputStream) {
  auto t = connect_registered();
  // Everything is on the wire before the link reads any of it.
  post(R"({"jsonrpc":"2.0","method":"runAction","params":{"key":"/flow/collect","streamInput":true},"id":"5"})");
  post(R"({"jsonrpc":"2.0","method":"sendInputStreamChunk","params":{"requestId":"5","chunk":1}})");
  post(R"({"jsonrpc":"2.0","method":"sendInputStreamChunk","params":{"requestId":"5","chunk":2}})");
  post(R"({"jsonrpc":"2.0","method":"endInputStream","params":{"requestId":"5"}})");
  post(R"({"jsonrpc":"2.0","method":"sendInputStreamChunk","params":{"requestId":"5","chunk":3}})");
  sched.run();
  CAF_CHECK_EQUAL(reply_to(t, R"("5")"), "<no reply>");
  finish_handlers();
  auto reply = reply_to(t, R"("5")");
  CAF_CHECK_EQUAL(member(reply, {"result", "result"}), "[1,2]");
  CAF_CHECK_EQUAL(member(reply, {"error"}), "<missing>");
  // runActionState came first, with the trace id the result reports.
  CAF_REQUIRE_GREATER_OR_EQUAL(t->size(), 2u);
  CAF_CHECK_EQUAL(member_str(t->frame(0), {"method"}), "runActionState");
  CAF_CHECK_EQUAL(member(t->frame(0), {"params", "requestId"}), R"("5")");
  CAF_CHECK_EQUAL(member(t->frame(0), {"params", "state", "traceId"}),
                  member(reply, {"result", "telemetry", "traceId"}));
  check_runs_gone();
}

CAF_TEST(a dropped link ends open inputs) {
  auto t = connect_registered();
  post(R"({"jsonrpc":"2.0","method":"runAction","params":{"key":"/flow/collect","streamInput":true},"id":"6"})");
  post(R"({"jsonrpc":"2.0","method":"sendInputStreamChunk","params":{"requestId":"6","chunk":"a"}})");
  sched.run();
  auto& runs = link_state().runs;
  CAF_REQUIRE_EQUAL(runs.size(), 1u);
  auto bidi = runs.begin()->second.bidi;
  CAF_REQUIRE(bidi);
  auto queue = deref<caf::stateful_actor<bidi_session_state>>(bidi).state.queue;
  CAF_REQUIRE(queue);
  CAF_CHECK(!queue->ended());
  closed();
  CAF_CHECK(queue->ended());
  // The run outlives the link; its answer has nowhere to go.
  finish_handlers();
  CAF_CHECK_EQUAL(reply_to(t, R"("6")"), "<no reply>");
  check_runs_gone();
}

// -- bidi_session on its own ----------------------------------------------------

CAF_TEST(bidi_session drops input after the end and fails the run on a bad chunk) {
  actions::cancel_flag cancel;
  // Input after the end is dropped.
  {
    auto q = std::make_shared<actions::input_queue>(cancel);
    auto s = sys.spawn(bidi_session, q, nullptr, std::size_t{0});
    caf::anon_send(s, input_atom_v, std::string{"1"});
    caf::anon_send(s, input_atom_v, std::string{R"({"x":2})"});
    caf::anon_send(s, end_input_atom_v);
    caf::anon_send(s, input_atom_v, std::string{"3"});
    sched.run();
    bool ended = false;
    auto a = q->try_next(ended);
    CAF_REQUIRE(a);
    CAF_CHECK_EQUAL(boost::json::serialize(*a), "1");
    auto b = q->try_next(ended);
    CAF_REQUIRE(b);
    CAF_CHECK_EQUAL(boost::json::serialize(*b), R"({"x":2})");
    auto c = q->try_next(ended);
    CAF_CHECK(!c);
    CAF_CHECK(ended);
    stop(s);
  }
  // A chunk that fails the schema tells the run and ends the queue.
  {
    actions::action_catalog cat;
    actions::action_descriptor d;
    d.type = "flow";
    d.name = "typed";
    d.input_schema = R"({"type":"number"})";
    d.handler = [](actions::action_context& ctx) { return ctx.input(); };
    cat.add(std::move(d));
    auto schema = cat.find("/flow/typed")->input_validator;
    CAF_REQUIRE(schema);
    auto q = std::make_shared<actions::input_queue>(cancel);
    auto s = sys.spawn(bidi_session, q, schema, std::size_t{0});
    auto errors = std::make_shared<std::vector<std::string>>();
    auto run = sys.spawn([errors](caf::event_based_actor*) -> caf::behavior {
      return {[errors](input_error_atom, const std::string& msg) { errors->push_back(msg); }};
    });
    sched.run();
    caf::anon_send(s, run);
    caf::anon_send(s, input_atom_v, std::string{"1"});
    sched.run();
    caf::anon_send(s, input_atom_v, std::string{R"("not a number")"});
    caf::anon_send(s, input_atom_v, std::string{"2"});
    sched.run();
    CAF_REQUIRE_EQUAL(errors->size(), 1u);
    CAF_CHECK(contains(errors->front(), "INVALID_ARGUMENT"));
    CAF_CHECK(q->ended());
    bool ended = false;
    auto a = q->try_next(ended);
    CAF_REQUIRE(a);
    CAF_CHECK_EQUAL(boost::json::serialize(*a), "1");
    CAF_CHECK(!q->try_next(ended));
    CAF_CHECK(ended);
    stop(s);
    stop(run);
  }
  CAF_CHECK_EQUAL(live(actor_kind::bidi_session), bidis_at_start);
}

// -- request id reuse ---------------------------------------------------------------

CAF_TEST(a reused request id stops the old bidi session and routes input to the new run) {
  auto t = connect_registered();
  auto& runs = link_state().runs;
  post(R"({"jsonrpc":"2.0","method":"runAction","params":{"key":"/flow/collect","streamInput":true},"id":"7"})");
  post(R"({"jsonrpc":"2.0","method":"sendInputStreamChunk","params":{"requestId":"7","chunk":"old"}})");
  sched.run();
  CAF_REQUIRE_EQUAL(runs.size(), 1u);
  auto old_bidi = runs.begin()->second.bidi;
  auto old_action = runs.begin()->second.action;
  CAF_REQUIRE(old_bidi);
  auto old_queue = deref<caf::stateful_actor<bidi_session_state>>(old_bidi).state.queue;
  CAF_REQUIRE(old_queue);
  CAF_CHECK(!old_queue->ended());
  CAF_CHECK_EQUAL(live(actor_kind::bidi_session), bidis_at_start + 1);
  // The manager restarted its counter: same id, second run, first still going.
  post(R"({"jsonrpc":"2.0","method":"runAction","params":{"key":"/flow/collect","streamInput":true},"id":"7"})");
  sched.run();
  CAF_CHECK(old_queue->ended());
  CAF_REQUIRE_EQUAL(runs.size(), 1u);
  auto new_bidi = runs.begin()->second.bidi;
  CAF_REQUIRE(new_bidi);
  CAF_CHECK(new_bidi != old_bidi);
  CAF_CHECK(runs.begin()->second.action != old_action);
  auto new_queue = deref<caf::stateful_actor<bidi_session_state>>(new_bidi).state.queue;
  CAF_REQUIRE(new_queue);
  CAF_CHECK(new_queue != old_queue);
  CAF_CHECK(!new_queue->ended());
  CAF_CHECK_EQUAL(live(actor_kind::bidi_session), bidis_at_start + 1);
  CAF_CHECK_EQUAL(live(actor_kind::active_action), actions_at_start + 2);
  // Input for "7" now belongs to the new run only.
  post(R"({"jsonrpc":"2.0","method":"sendInputStreamChunk","params":{"requestId":"7","chunk":"new1"}})");
  post(R"({"jsonrpc":"2.0","method":"sendInputStreamChunk","params":{"requestId":"7","chunk":"new2"}})");
  post(R"({"jsonrpc":"2.0","method":"endInputStream","params":{"requestId":"7"}})");
  sched.run();
  CAF_CHECK(new_queue->ended());
  CAF_CHECK_EQUAL(reply_to(t, R"("7")"), "<no reply>");
  finish_handlers();
  // Two runActionState frames (old run first), two final responses.
  std::vector<std::string> traces;
  std::vector<std::string> finals;
  for (auto& f : t->frames()) {
    if (member_str(f, {"method"}) == "runActionState") {
      CAF_CHECK_EQUAL(member(f, {"params", "requestId"}), R"("7")");
      traces.push_back(member(f, {"params", "state", "traceId"}));
    } else if (member(f, {"id"}) == R"("7")") {
      finals.push_back(f);
    }
  }
  CAF_REQUIRE_EQUAL(traces.size(), 2u);
  CAF_REQUIRE_EQUAL(finals.size(), 2u);
  CAF_CHECK_NOT_EQUAL(traces[0], traces[1]);
  std::size_t seen = 0;
  for (auto& f : finals) {
    CAF_CHECK_EQUAL(member(f, {"error"}), "<missing>");
    auto trace = member(f, {"result", "telemetry", "traceId"});
    if (trace == traces[0]) {
      ++seen;
      CAF_CHECK_EQUAL(member(f, {"result", "result"}), R"(["old"])");
    } else if (trace == traces[1]) {
      ++seen;
      CAF_CHECK_EQUAL(member(f, {"result", "result"}), R"(["new1","new2"])");
    } else {
      CAF_FAIL("final response with an unknown trace id: " << f);
    }
  }
  CAF_CHECK_EQUAL(seen, 2u);
  check_runs_gone();
}

// -- cancel racing the last chunk ---------------------------------------------------

CAF_TEST(cancel racing the last chunk keeps the wire order and answers once) {
  // A link of its own, with actions that stream and then finish.
  auto start_tail = std::make_shared<gate>(); // "tail" starts streaming
  auto start_last = std::make_shared<gate>(); // "last" starts streaming
  auto sent = std::make_shared<gate>();   // "tail" has sent its last chunk
  auto finish = std::make_shared<gate>(); // "tail" may finish
  struct opener {
    std::vector<gate_ptr> gates;
    ~opener() {
      for (auto& g : gates)
        g->open();
    }
  } open_at_exit{{start_tail, start_last, sent, finish}};
  auto cat = std::make_shared<actions::action_catalog>();
  {
    actions::action_descriptor last;
    last.type = "flow";
    last.name = "last";
    last.handler = [start_last](actions::action_context& ctx) -> boost::json::value {
      start_last->wait();
      ctx.send_chunk(1);
      ctx.send_chunk(2);
      return "done";
    };
    cat->add(std::move(last));
    actions::action_descriptor tail;
    tail.type = "flow";
    tail.name = "tail";
    tail.handler = [start_tail, sent, finish](actions::action_context& ctx) -> boost::json::value {
      start_tail->wait();
      ctx.send_chunk(1);
      ctx.send_chunk(2);
      sent->open();
      finish->wait();
      if (ctx.cancel().cancelled())
        throw actions::action_error(wire::status_code::cancelled, "Action was cancelled");
      return "done";
    };
    cat->add(std::move(tail));
  }
  link_options opts;
  opts.runtime_id = "rt-race";
  opts.name = "race runtime";
  opts.pid = 4243;
  opts.manager_urls = {"ws://localhost:4100"};
  auto l = sys.spawn(manager_link, std::move(opts), actions::catalog_ptr{cat},
                     [](const caf::actor&, const std::string&) {});
  sched.run();
  auto t = make_fake_transport("127.0.0.1:4100");
  caf::anon_send(l, connected_atom_v, net::transport_ptr{t});
  sched.run();
  CAF_REQUIRE_EQUAL(t->size(), 1u);
  t->clear();
  auto& lst = deref<caf::stateful_actor<manager_link_state>>(l).state;
  auto post_to = [&](std::string text) { caf::anon_send(l, frame_atom_v, std::move(text)); };
  auto trace_of = [&](const std::string& rid) {
    for (auto& f : t->frames())
      if (member_str(f, {"method"}) == "runActionState"
          && member(f, {"params", "requestId"}) == rid)
        return member_str(f, {"params", "state", "traceId"});
    return std::string{"<no trace>"};
  };
  // Frames for request `rid`: runActionState, streamChunk..., one final response.
  auto check_wire_order = [&](const std::string& rid) {
    std::vector<std::string> kinds;
    for (auto& f : t->frames()) {
      auto method = member_str(f, {"method"});
      if ((method == "runActionState" || method == "streamChunk")
          && member(f, {"params", "requestId"}) == rid)
        kinds.push_back(method);
      else if (method == "<missing>" && member(f, {"id"}) == rid)
        kinds.push_back("final");
    }
    CAF_MESSAGE("frames for " << rid << ": " << caf::deep_to_string(kinds));
    CAF_REQUIRE_EQUAL(kinds.size(), 4u);
    CAF_CHECK_EQUAL(kinds[0], "runActionState");
    CAF_CHECK_EQUAL(kinds[1], "streamChunk");
    CAF_CHECK_EQUAL(kinds[2], "streamChunk");
    CAF_CHECK_EQUAL(kinds[3], "final");
    std::vector<std::string> chunks;
    for (auto& f : t->frames())
      if (member_str(f, {"method"}) == "streamChunk" && member(f, {"params", "requestId"}) == rid)
        chunks.push_back(member(f, {"params", "chunk"}));
    CAF_CHECK_EQUAL(chunks, (std::vector<std::string>{"1", "2"}));
    auto final_frame = reply_to(t, rid);
    auto err = member(final_frame, {"error"});
    if (err == "<missing>") {
      CAF_CHECK_EQUAL(member(final_frame, {"result", "result"}), R"("done")");
    } else {
      CAF_CHECK_EQUAL(member(final_frame, {"error", "data", "code"}), "1");
    }
  };
  auto cancel_reply_ok = [&](const std::string& cid) {
    auto r = reply_to(t, cid);
    if (member(r, {"error"}) == "<missing>")
      return member_str(r, {"result", "message"}) == "Action cancelled";
    return member(r, {"error", "code"}) == "-32602"
           && member_str(r, {"error", "message"}) == "Action not found or already completed";
  };
  // 1. "tail": sends its last chunk and parks; the cancel arrives while the
  //    chunks are still queued in the run; the handler then sees the cancel.
  post_to(R"({"jsonrpc":"2.0","method":"runAction","params":{"key":"/flow/tail","stream":true},"id":"11"})");
  sched.run();
  auto tail_trace = trace_of(R"("11")");
  CAF_REQUIRE_NOT_EQUAL(tail_trace, "<no trace>");
  start_tail->open();
  sent->wait(); // the handler thread sends nothing more until `finish` opens
  post_to(R"({"jsonrpc":"2.0","method":"cancelAction","params":{"traceId":")" + tail_trace
          + R"("},"id":"12"})");
  sched.run();
  CAF_CHECK(cancel_reply_ok(R"("12")"));
  finish->open();
  sys.await_detached_threads();
  sched.run();
  // 2. "last": both chunks and the result are queued in the run when the
  //    cancel arrives.
  post_to(R"({"jsonrpc":"2.0","method":"runAction","params":{"key":"/flow/last","stream":true},"id":"21"})");
  sched.run();
  auto last_trace = trace_of(R"("21")");
  CAF_REQUIRE_NOT_EQUAL(last_trace, "<no trace>");
  start_last->open();
  sys.await_detached_threads();
  post_to(R"({"jsonrpc":"2.0","method":"cancelAction","params":{"traceId":")" + last_trace
          + R"("},"id":"22"})");
  sched.run();
  CAF_CHECK(cancel_reply_ok(R"("22")"));
  check_wire_order(R"("11")");
  check_wire_order(R"("21")");
  // Cancelling again: the runs are gone.
  auto frames_before = t->size();
  post_to(R"({"jsonrpc":"2.0","method":"cancelAction","params":{"traceId":")" + tail_trace
          + R"("},"id":"13"})");
  post_to(R"({"jsonrpc":"2.0","method":"cancelAction","params":{"traceId":")" + last_trace
          + R"("},"id":"23"})");
  sched.run();
  CAF_REQUIRE_EQUAL(t->size(), frames_before + 2);
  for (auto cid : {R"("13")", R"("23")"}) {
    auto r = reply_to(t, cid);
    CAF_CHECK_EQUAL(member(r, {"error", "code"}), "-32602");
    CAF_CHECK_EQUAL(member_str(r, {"error", "message"}), "Action not found or already completed");
  }
  // Nothing more for either request after its final response.
  check_wire_order(R"("11")");
  check_wire_order(R"("21")");
  CAF_CHECK(lst.runs.empty());
  CAF_CHECK(lst.by_trace.empty());
  CAF_CHECK_EQUAL(live(actor_kind::active_action), actions_at_start);
  caf::anon_send_exit(l, caf::exit_reason::kill);
  sched.run();
}

// -- runs that end badly ---------------------------------------------------------

CAF_TEST(a run that dies without answering gets an INTERNAL error and takes its bidi session) {
  auto t = connect_registered();
  post(R"({"jsonrpc":"2.0","method":"runAction","params":{"key":"/flow/collect","streamInput":true},"id":"31"})");
  sched.run();
  auto& runs = link_state().runs;
  CAF_REQUIRE_EQUAL(runs.size(), 1u);
  auto action = runs.begin()->second.action;
  auto bidi = runs.begin()->second.bidi;
  auto queue = deref<caf::stateful_actor<bidi_session_state>>(bidi).state.queue;
  t->clear();
  stop(action, caf::exit_reason::unhandled_exception);
  auto reply = reply_to(t, R"("31")");
  CAF_CHECK_EQUAL(member(reply, {"error", "code"}), "-32000");
  CAF_CHECK_EQUAL(member(reply, {"error", "data", "code"}), "13");
  CAF_CHECK(contains(member_str(reply, {"error", "message"}),
                     "run of /flow/collect ended unexpectedly"));
  // The handler's input ended with the session; the link lives on.
  CAF_CHECK(queue->ended());
  check_runs_gone();
  CAF_CHECK_EQUAL(live(actor_kind::manager_link), links_at_start + 1);
  finish_handlers();
  CAF_CHECK_EQUAL(t->size(), 1u); // nothing from the abandoned handler
}

// -- output schema -----------------------------------------------------------------

CAF_TEST(a result that matches the output schema is sent as it is) {
  auto t = connect_registered();
  post(R"({"jsonrpc":"2.0","method":"runAction","params":{"key":"/flow/shaped","input":{"total":17}},"id":"41"})");
  sched.run();
  finish_handlers();
  auto reply = reply_to(t, R"("41")");
  CAF_CHECK_EQUAL(member(reply, {"error"}), "<missing>");
  CAF_CHECK_EQUAL(member(reply, {"result", "result"}), R"({"total":17})");
  check_runs_gone();
}

CAF_TEST(a result that breaks the output schema fails the run with INTERNAL) {
  auto t = connect_registered();
  post(R"({"jsonrpc":"2.0","method":"runAction","params":{"key":"/flow/shaped","input":{"total":"17"}},"id":"42"})");
  post(R"({"jsonrpc":"2.0","method":"runAction","params":{"key":"/flow/shaped","input":[1]},"id":"43"})");
  sched.run();
  finish_handlers();
  auto wrong_type = reply_to(t, R"("42")");
  CAF_CHECK_EQUAL(member(wrong_type, {"result"}), "<missing>");
  CAF_CHECK_EQUAL(member(wrong_type, {"error", "code"}), "-32000");
  CAF_CHECK_EQUAL(member(wrong_type, {"error", "data", "code"}), "13");
  CAF_CHECK_EQUAL(member_str(wrong_type, {"error", "message"}),
                  "output of /flow/shaped does not match its outputSchema: total: must be number");
  CAF_CHECK_EQUAL(member_str(wrong_type, {"error", "data", "message"}),
                  member_str(wrong_type, {"error", "message"}));
  // The trace had started: the error names it, like any failed run.
  CAF_CHECK_NOT_EQUAL(member(wrong_type, {"error", "data", "details", "traceId"}), "<missing>");
  auto not_object = reply_to(t, R"("43")");
  CAF_CHECK_EQUAL(member(not_object, {"error", "data", "code"}), "13");
  CAF_CHECK_EQUAL(member_str(not_object, {"error", "message"}),
                  "output of /flow/shaped does not match its outputSchema: (root): must be object");
  check_runs_gone();
}

CAF_TEST(an output schema that does not compile is refused when the action is added) {
  actions::action_catalog cat;
  actions::action_descriptor d;
  d.type = "flow";
  d.name = "broken";
  d.output_schema = "{not json";
  d.handler = [](actions::action_context& ctx) { return ctx.input(); };
  std::string refused;
  try {
    cat.add(std::move(d));
  } catch (const std::invalid_argument& e) {
    refused = e.what();
  }
  CAF_MESSAGE("add() said: " << refused);
  CAF_CHECK(contains(refused, "output schema of /flow/broken does not compile"));
  CAF_CHECK(cat.find("/flow/broken") == nullptr);
}

CAF_TEST_FIXTURE_SCOPE_END()
