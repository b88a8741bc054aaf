#define CAF_SUITE program_action

#include <caf/test/unit_test.hpp>

#include "program_action_fixture.hpp"

// Programs as actions (actions/program_action.*): what a run gives back
// (results, chunks, errors, its environment). Real child processes on real
// pipes; the fixture bounds every wait by `patience`.

using namespace program_action_testing;


// -- results, chunks, errors --------------------------------------------------

CAF_TEST(chunks arrive in order before the result) {
  auto action = make_program_action(sh("chunks", R"(
    IFS= read -r line
    echo '{"chunk": 1}'
    echo '{"chunk": {"two": 2}}'
    echo '{"result": "ignored, a later result wins"}'
    echo '{"chunk": 3}'
    printf '{"result": %s}\n' "$line"
  )"));
  CAF_CHECK_EQUAL(action.key(), "/flow/chunks");
  pa_context ctx{json::parse(R"({"a":[1,2]})")};
  auto out = run(action, ctx);
  CAF_REQUIRE(out.result.has_value());
  CAF_CHECK_EQUAL(json::serialize(*out.result), R"({"a":[1,2]})");
  CAF_CHECK_EQUAL(ctx.chunks_text(), R"(1,{"two":2},3)");
}

CAF_TEST(python example streams words) {
  program_spec spec;
  spec.name = "wordcount";
  spec.command = {"python3", examples_dir() + "/actions/wordcount.py"};
  auto action = make_program_action(spec);
  pa_context ctx{json::parse(R"({"text":"to be  or\nnot"})")};
  auto out = run(action, ctx);
  CAF_REQUIRE(out.result.has_value());
  CAF_CHECK_EQUAL(json::serialize(*out.result), R"({"words":4})");
  CAF_CHECK_EQUAL(ctx.chunks_text(),
                  R"({"word":"to"},{"word":"be"},{"word":"or"},{"word":"not"})");
}

CAF_TEST(a line split across writes is one line) {
  auto action = make_program_action(sh("split", R"(
    printf '{"chu'; sleep 0.1; printf 'nk": 5}\n{"res'; sleep 0.1; printf 'ult": 6}')"));
  pa_context ctx;
  auto out = run(action, ctx);
  CAF_REQUIRE(out.result.has_value());
  CAF_CHECK_EQUAL(json::serialize(*out.result), "6");
  CAF_CHECK_EQUAL(ctx.chunks_text(), "5");
}

CAF_TEST(exit 0 without a result line gives null) {
  auto action = make_program_action(sh("quiet", "echo diagnostics >&2; exit 0"));
  pa_context ctx;
  auto out = run(action, ctx);
  CAF_REQUIRE(out.result.has_value());
  CAF_CHECK(out.result->is_null());
}

CAF_TEST(an error line becomes its status) {
  program_spec spec;
  spec.name = "check";
  spec.command = {"/bin/sh", examples_dir() + "/actions/check.sh"};
  auto action = make_program_action(spec);
  pa_context ctx{json::value("missing")};
  auto out = run(action, ctx);
  CAF_CHECK(out.action_failed);
  CAF_CHECK_EQUAL(out.code, static_cast<int>(status_code::not_found));
  CAF_CHECK_EQUAL(out.message, "nothing called missing");
  // A numeric status works too, and the error line wins over exit 0.
  auto numeric = make_program_action(
    sh("numeric", R"(echo '{"error": {"status": 7, "message": "no"}}'; exit 0)"));
  pa_context ctx2;
  auto out2 = run(numeric, ctx2);
  CAF_CHECK_EQUAL(out2.code, static_cast<int>(status_code::permission_denied));
  CAF_CHECK_EQUAL(out2.message, "no");
}

CAF_TEST(non-zero exit carries the stderr tail) {
  program_spec spec;
  spec.name = "check";
  spec.command = {"/bin/sh", examples_dir() + "/actions/check.sh"};
  auto action = make_program_action(spec);
  pa_context ctx{json::value("crash")};
  auto out = run(action, ctx);
  CAF_CHECK(out.program_failed);
  CAF_CHECK_EQUAL(out.code, static_cast<int>(status_code::internal));
  CAF_CHECK_EQUAL(out.message, "program exited with status 3");
  CAF_CHECK_EQUAL(out.stderr_tail, "check.sh: crashing on purpose\n");
  // A result line does not rescue a failing exit.
  auto late = make_program_action(sh("late", R"(echo '{"result": 1}'; exit 1)"));
  pa_context ctx2;
  CAF_CHECK_EQUAL(run(late, ctx2).message, "program exited with status 1");
}

CAF_TEST(the stderr tail is bounded) {
  // 20000 bytes of 'x' then a marker: only the last 8 KiB are kept.
  auto action = make_program_action(
    sh("noisy", R"(head -c 20000 /dev/zero | tr '\0' x >&2; echo END >&2; exit 2)"));
  pa_context ctx;
  auto out = run(action, ctx);
  CAF_CHECK(out.program_failed);
  CAF_CHECK_EQUAL(out.stderr_tail.size(), 8u * 1024u);
  CAF_CHECK(contains(out.stderr_tail, "xxxEND\n"));
}

CAF_TEST(death by signal is reported) {
  auto action = make_program_action(sh("suicide", "echo bye >&2; kill -9 $$"));
  pa_context ctx;
  auto out = run(action, ctx);
  CAF_CHECK(out.program_failed);
  CAF_CHECK_EQUAL(out.message, "program killed by signal 9 (SIGKILL)");
  CAF_CHECK_EQUAL(out.stderr_tail, "bye\n");
}

CAF_TEST(a stdout line outside the protocol fails the run) {
  auto action = make_program_action(
    sh("chatty", R"(echo '{"chunk": 1}'; echo hello; echo '{"result": 2}')"));
  pa_context ctx;
  auto out = run(action, ctx);
  CAF_CHECK(out.program_failed);
  CAF_CHECK_EQUAL(out.code, static_cast<int>(status_code::internal));
  CAF_CHECK(contains(out.message, "stdout line 2"));
  CAF_CHECK(contains(out.message, "hello"));
  CAF_CHECK_EQUAL(ctx.chunks_text(), "1");
  // Two keys in one object are a violation as well.
  auto two = make_program_action(sh("two", R"(echo '{"chunk": 1, "result": 2}')"));
  pa_context ctx2;
  CAF_CHECK(contains(run(two, ctx2).message, "not a protocol message"));
}

CAF_TEST(a program that cannot start is an internal error) {
  program_spec spec;
  spec.name = "missing";
  spec.command = {"/nonexistent/program"};
  auto out = [&] {
    auto action = make_program_action(spec);
    pa_context ctx;
    return run(action, ctx);
  }();
  CAF_CHECK(out.program_failed);
  CAF_CHECK_EQUAL(out.code, static_cast<int>(status_code::internal));
  CAF_CHECK(contains(out.message, "No such file or directory"));
  spec.command = {"no-such-program-anywhere"};
  auto action = make_program_action(spec);
  pa_context ctx;
  CAF_CHECK(contains(run(action, ctx).message, "not found in PATH"));
  spec.command = {"/bin/true"};
  spec.cwd = "/nonexistent/dir";
  auto action2 = make_program_action(spec);
  pa_context ctx2;
  CAF_CHECK(contains(run(action2, ctx2).message, "chdir"));
}

CAF_TEST(env and cwd reach the child) {
  auto spec = sh("env", R"sh(printf '{"result": "%s|%s|%s|%s"}\n' \
    "$GREETING" "$(pwd)" "$ACTOR_HOST_ACTION" "$ACTOR_HOST_TRACE_ID")sh");
  spec.env = {{"GREETING", "hello"}};
  spec.cwd = "/tmp";
  auto action = make_program_action(spec);
  pa_context ctx;
  auto out = run(action, ctx);
  CAF_REQUIRE(out.result.has_value());
  CAF_CHECK_EQUAL(json::serialize(*out.result), R"("hello|/tmp|env|trace-1")");
}

CAF_TEST(a child that stops reading stdin does not hurt the runtime) {
  // 4 MiB of input to a child that never reads it: the write fails with
  // EPIPE (SIGPIPE is not ignored in this test binary) and the run goes on.
  auto action = make_program_action(sh("deaf", R"(exec 0<&-; echo '{"result": "ok"}')"));
  pa_context ctx{json::value(std::string(4 * 1024 * 1024, 'a'))};
  auto out = run(action, ctx);
  CAF_REQUIRE(out.result.has_value());
  CAF_CHECK_EQUAL(json::serialize(*out.result), R"("ok")");
}
