#define CAF_SUITE program_action_stop

#include <caf/test/unit_test.hpp>

#include "program_action_fixture.hpp"

// Programs as actions (actions/program_action.*): stopping a child (cancel, the
// grace, timeout) and bidi input. Real child processes on
// real pipes; the fixture bounds every wait by `patience`.

using namespace program_action_testing;

// -- stopping -----------------------------------------------------------------

CAF_TEST(cancel stops the child and its group) {
  // The child reports the pid of a grandchild in the same group, then waits.
  auto action = make_program_action(sh("sleeper", R"(sleep 30 & echo "{\"chunk\": $!}"; wait)"));
  pa_context ctx;
  auto done = run_async(action, ctx);
  CAF_REQUIRE(ctx.wait_chunks(1));
  auto child = last_program_pid();
  auto grandchild = ctx.first_chunk_pid();
  CAF_REQUIRE(grandchild > 0);
  auto start = clock_type::now();
  ctx.cancel_.trigger();
  CAF_REQUIRE(done.wait_for(patience) == std::future_status::ready);
  auto out = done.get();
  auto took = ms_since(start);
  CAF_CHECK(out.action_failed);
  CAF_CHECK_EQUAL(out.code, static_cast<int>(status_code::cancelled));
  CAF_CHECK_EQUAL(out.message, "Action was cancelled");
  // sh and sleep die on SIGTERM: well within the 2 s grace.
  CAF_CHECK_LESS(took, 1500);
  CAF_CHECK(reaped(child));
  CAF_CHECK(exits_within(grandchild, 5s));
}

CAF_TEST(a child ignoring TERM is killed after the grace) {
  // `trap '' TERM` is inherited by sleep, so the whole group ignores TERM.
  auto spec = sh("stubborn", R"(trap '' TERM; echo '{"chunk": "started"}'; sleep 30)");
  spec.kill_grace = 200ms;
  auto action = make_program_action(spec);
  pa_context ctx;
  auto done = run_async(action, ctx);
  CAF_REQUIRE(ctx.wait_chunks(1));
  auto child = last_program_pid();
  auto start = clock_type::now();
  ctx.cancel_.trigger();
  CAF_REQUIRE(done.wait_for(patience) == std::future_status::ready);
  auto out = done.get();
  auto took = ms_since(start);
  CAF_CHECK_EQUAL(out.code, static_cast<int>(status_code::cancelled));
  CAF_CHECK_GREATER_OR_EQUAL(took, 200);
  CAF_CHECK_LESS(took, 2000);
  CAF_CHECK(reaped(child));
}

CAF_TEST(timeout stops the child) {
  auto spec = sh("slow", "echo 'about to sleep' >&2; sleep 30");
  spec.timeout = 300ms;
  auto action = make_program_action(spec);
  pa_context ctx;
  auto start = clock_type::now();
  auto out = run(action, ctx);
  auto took = ms_since(start);
  CAF_CHECK(out.action_failed);
  CAF_CHECK_EQUAL(out.code, static_cast<int>(status_code::deadline_exceeded));
  CAF_CHECK_EQUAL(out.message, "program action slow timed out after 300 ms");
  CAF_CHECK_EQUAL(out.stderr_tail, "about to sleep\n");
  CAF_CHECK_GREATER_OR_EQUAL(took, 300);
  CAF_CHECK_LESS(took, 2500);
  CAF_CHECK(reaped(last_program_pid()));
}

CAF_TEST(an exception in the handler still kills and reaps the child) {
  auto action = make_program_action(sh("orphan", R"(echo '{"chunk": 1}'; exec sleep 30)"));
  pa_context ctx;
  ctx.throw_on_chunk = true;
  auto out = run(action, ctx);
  CAF_CHECK_EQUAL(out.other, "send_chunk failed on purpose");
  CAF_CHECK(reaped(last_program_pid()));
}

// -- bidi ---------------------------------------------------------------------

CAF_TEST(bidi input streams through the node example) {
  program_spec spec;
  spec.name = "upper";
  spec.bidi = true;
  spec.command = {"node", examples_dir() + "/actions/upper.mjs"};
  auto action = make_program_action(spec);
  pa_context ctx{nullptr, true};
  auto* inputs = static_cast<pa_inputs*>(ctx.inputs());
  auto done = run_async(action, ctx);
  // Each chunk is answered while the input is still open: the program sees
  // lines as they arrive, not at end-of-input.
  inputs->push(json::value("ab"));
  CAF_REQUIRE(ctx.wait_chunks(1));
  CAF_CHECK_EQUAL(ctx.chunks_text(), R"({"upper":"AB"})");
  inputs->push(json::parse(R"({"text":"cd"})"));
  CAF_REQUIRE(ctx.wait_chunks(2));
  inputs->end();
  CAF_REQUIRE(done.wait_for(patience) == std::future_status::ready);
  auto out = done.get();
  CAF_REQUIRE(out.result.has_value());
  CAF_CHECK_EQUAL(json::serialize(*out.result), R"({"lines":2})");
  CAF_CHECK_EQUAL(ctx.chunks_text(), R"({"upper":"AB"},{"upper":"CD"})");
}

CAF_TEST(bidi init arrives in the environment) {
  auto spec = sh("init", R"(n=0; while IFS= read -r line; do n=$((n+1)); done
    printf '{"result": {"init": %s, "lines": %d}}\n' "$ACTOR_HOST_INIT" "$n")");
  spec.bidi = true;
  auto action = make_program_action(spec);
  pa_context ctx{nullptr, true};
  ctx.init_ = json::parse(R"({"lang":"en"})");
  auto* inputs = static_cast<pa_inputs*>(ctx.inputs());
  for (int i = 0; i < 3; ++i)
    inputs->push(json::value(i));
  inputs->end();
  auto out = run(action, ctx);
  CAF_REQUIRE(out.result.has_value());
  CAF_CHECK_EQUAL(json::serialize(*out.result), R"({"init":{"lang":"en"},"lines":3})");
}

CAF_TEST(bidi input without a pollable fd still flows) {
  // fake::run_context's input stream has no fd: the loop falls back to
  // looking for input every few milliseconds.
  auto spec = sh("count", R"(n=0
    while IFS= read -r line; do echo "{\"chunk\": $line}"; n=$((n+1)); done
    echo "{\"result\": $n}")");
  spec.bidi = true;
  auto action = make_program_action(spec);
  fake::run_context ctx;
  ctx.feed({json::value("a"), json::value(2)});
  auto out = run(action, ctx);
  CAF_REQUIRE(out.result.has_value());
  CAF_CHECK_EQUAL(json::serialize(*out.result), "2");
  CAF_REQUIRE_EQUAL(ctx.chunks.size(), 2u);
  CAF_CHECK_EQUAL(json::serialize(ctx.chunks[0]), R"("a")");
}

// -- concurrency limit --------------------------------------------------------

CAF_TEST(max_concurrency 1 serialises runs) {
  temp_dir dir;
  // Each run logs start and end around a short sleep of its own; with two
  // runs in parallel the log would read start,start,end,end.
  auto spec = sh("serial", "echo start >> " + dir.path + "/log; sleep 0.2; echo end >> "
                             + dir.path + "/log; echo '{\"result\": 1}'");
  spec.max_concurrency = 1;
  auto action = make_program_action(spec);
  auto copy = action; // handler copies share the limit
  pa_context ctx1;
  pa_context ctx2;
  auto first = run_async(action, ctx1);
  auto second = run_async(copy, ctx2);
  CAF_REQUIRE(first.wait_for(patience) == std::future_status::ready);
  CAF_REQUIRE(second.wait_for(patience) == std::future_status::ready);
  CAF_CHECK(first.get().result.has_value());
  CAF_CHECK(second.get().result.has_value());
  CAF_CHECK_EQUAL(dir.read("log"), "start\nend\nstart\nend\n");
}

CAF_TEST(waiting for a slot honours cancel) {
  temp_dir dir;
  auto spec = sh("hog", "echo run >> " + dir.path + "/log; echo '{\"chunk\": 1}'; exec sleep 30");
  spec.max_concurrency = 1;
  auto action = make_program_action(spec);
  pa_context holder;
  auto held = run_async(action, holder);
  CAF_REQUIRE(holder.wait_chunks(1));
  // A second run waits for the slot; cancelling it ends the wait.
  pa_context waiter;
  waiter.cancel_.trigger();
  auto out = run(action, waiter);
  CAF_CHECK_EQUAL(out.code, static_cast<int>(status_code::cancelled));
  pa_context cancel_later;
  auto waiting = run_async(action, cancel_later);
  // Nothing else may start while the slot is held.
  CAF_CHECK(waiting.wait_for(0ms) != std::future_status::ready);
  cancel_later.cancel_.trigger();
  CAF_REQUIRE(waiting.wait_for(patience) == std::future_status::ready);
  CAF_CHECK_EQUAL(waiting.get().code, static_cast<int>(status_code::cancelled));
  holder.cancel_.trigger();
  CAF_REQUIRE(held.wait_for(patience) == std::future_status::ready);
  CAF_CHECK_EQUAL(held.get().code, static_cast<int>(status_code::cancelled));
  CAF_CHECK_EQUAL(dir.read("log"), "run\n");
}
