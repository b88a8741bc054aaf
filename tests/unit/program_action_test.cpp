#define CAF_SUITE program_action

#include <caf/test/unit_test.hpp>

#include "actions/program_action.hpp"

#include "fake_action_context.hpp"

#include <boost/json.hpp>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

using namespace actor_host::actions;
using actor_host::wire::status_code;
using namespace std::chrono_literals;
namespace json = boost::json;

namespace {

using clock_type = std::chrono::steady_clock;

// Upper bound for anything the tests wait on, so a bug fails a check
// instead of hanging the suite.
constexpr auto patience = 10s;

// -- a fake action_context (own names: other suites have their own fakes) ----

/// Cancellation on an eventfd, triggered by the test.
class pa_cancel final : public cancel_signal {
public:
  pa_cancel() : fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  }
  ~pa_cancel() override {
    ::close(fd_);
  }

  void trigger() {
    flag_ = true;
    std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(fd_, &one, sizeof one);
  }

  bool cancelled() const override {
    return flag_;
  }

  bool wait_for(std::chrono::milliseconds d) const override {
    pollfd p{fd_, POLLIN, 0};
    ::poll(&p, 1, static_cast<int>(d.count()));
    return flag_;
  }

  int fd() const override {
    return fd_;
  }

private:
  int fd_;
  std::atomic<bool> flag_{false};
};

/// Bidi input fed by the test. The eventfd is readable exactly while a
/// chunk or the end is queued.
class pa_inputs final : public input_stream {
public:
  pa_inputs() : fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  }
  ~pa_inputs() override {
    ::close(fd_);
  }

  void push(json::value v) {
    std::lock_guard guard{mx_};
    queue_.push_back(std::move(v));
    signal();
  }

  void end() {
    std::lock_guard guard{mx_};
    ended_ = true;
    signal();
  }

  std::optional<json::value> next() override {
    for (;;) {
      bool ended = false;
      if (auto v = try_next(ended))
        return v;
      if (ended)
        return std::nullopt;
      pollfd p{fd_, POLLIN, 0};
      ::poll(&p, 1, -1);
    }
  }

  std::optional<json::value> try_next(bool& ended) override {
    std::lock_guard guard{mx_};
    ended = false;
    if (!queue_.empty()) {
      auto v = std::move(queue_.front());
      queue_.pop_front();
      if (queue_.empty() && !ended_)
        drain();
      return v;
    }
    ended = ended_;
    return std::nullopt;
  }

  int fd() const override {
    return fd_;
  }

private:
  void signal() {
    std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(fd_, &one, sizeof one);
  }
  void drain() {
    std::uint64_t count = 0;
    [[maybe_unused]] auto n = ::read(fd_, &count, sizeof count);
  }

  int fd_;
  std::mutex mx_;
  std::deque<json::value> queue_;
  bool ended_ = false;
};

class pa_context final : public action_context {
public:
  explicit pa_context(json::value input = nullptr, bool bidi = false) : input_(std::move(input)) {
    if (bidi)
      inputs_.emplace();
  }

  const json::value& input() const override {
    return input_;
  }
  const json::value& init() const override {
    return init_;
  }
  const json::value& context() const override {
    return null_;
  }
  const std::string& trace_id() const override {
    return trace_id_;
  }
  bool streaming() const override {
    return true;
  }

  void send_chunk(json::value chunk) override {
    {
      std::lock_guard guard{mx_};
      chunks_.push_back(std::move(chunk));
    }
    cv_.notify_all();
    if (throw_on_chunk)
      throw std::runtime_error("send_chunk failed on purpose");
  }

  input_stream* inputs() override {
    return inputs_ ? &*inputs_ : nullptr;
  }

  const cancel_signal& cancel() const override {
    return cancel_;
  }

  /// Waits until `n` chunks arrived; false after `patience`.
  bool wait_chunks(std::size_t n) {
    std::unique_lock guard{mx_};
    return cv_.wait_for(guard, patience, [&] { return chunks_.size() >= n; });
  }

  /// The chunks so far as compact JSON, comma-separated.
  std::string chunks_text() {
    std::lock_guard guard{mx_};
    std::string out;
    for (auto& c : chunks_)
      out += (out.empty() ? "" : ",") + json::serialize(c);
    return out;
  }

  /// The pid a child reported as its first chunk (a number).
  pid_t first_chunk_pid() {
    std::lock_guard guard{mx_};
    return chunks_.empty() || !chunks_.front().is_int64()
             ? 0
             : static_cast<pid_t>(chunks_.front().as_int64());
  }

  pa_cancel cancel_;
  json::value init_;
  bool throw_on_chunk = false;

private:
  json::value input_;
  json::value null_;
  std::string trace_id_ = "trace-1";
  std::optional<pa_inputs> inputs_;
  std::mutex mx_;
  std::condition_variable cv_;
  std::vector<json::value> chunks_;
};

// -- running handlers ---------------------------------------------------------

struct outcome {
  std::optional<json::value> result;
  bool action_failed = false;
  bool program_failed = false; // thrown as program_error
  int code = -1;
  std::string message;
  std::string stderr_tail;
  std::string other; // what() of any other exception
};

outcome run(const action_descriptor& action, action_context& ctx) {
  outcome out;
  try {
    out.result = action.handler(ctx);
  } catch (const program_error& e) {
    out.action_failed = out.program_failed = true;
    out.code = static_cast<int>(e.code());
    out.message = e.what();
    out.stderr_tail = e.stderr_tail();
  } catch (const action_error& e) {
    out.action_failed = true;
    out.code = static_cast<int>(e.code());
    out.message = e.what();
  } catch (const std::exception& e) {
    out.other = e.what();
  }
  return out;
}

std::future<outcome> run_async(const action_descriptor& action, action_context& ctx) {
  return std::async(std::launch::async, [&action, &ctx] { return run(action, ctx); });
}

std::int64_t ms_since(clock_type::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - start).count();
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

program_spec sh(std::string name, std::string script) {
  program_spec spec;
  spec.name = std::move(name);
  spec.command = {"/bin/sh", "-c", std::move(script)};
  return spec;
}

std::string examples_dir() {
  return (std::filesystem::path{ACTOR_HOST_SOURCE_DIR} / "examples").lexically_normal().string();
}

/// True once `pid` is gone (exited and reaped, or a zombie of another
/// parent): a pidfd of any process polls readable when it exits.
bool exits_within(pid_t pid, std::chrono::milliseconds limit) {
  int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0)
    return errno == ESRCH;
  pollfd p{fd, POLLIN, 0};
  bool gone = ::poll(&p, 1, static_cast<int>(limit.count())) == 1;
  ::close(fd);
  return gone;
}

bool reaped(pid_t pid) {
  return pid > 0 && ::kill(pid, 0) == -1 && errno == ESRCH;
}

struct temp_dir {
  temp_dir() {
    char tmpl[] = "/tmp/program_action_test.XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string read(const std::string& name) const {
    std::ifstream in{path + "/" + name};
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  std::string path;
};

} // namespace

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
