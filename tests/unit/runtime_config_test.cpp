#define CAF_SUITE runtime_config

#include <caf/test/unit_test.hpp>

#include "config/runtime_config.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

using namespace actor_host::config;
using namespace std::chrono_literals;

namespace {

/// A scratch directory holding a config file and whatever it points at.
struct config_dir {
  config_dir() {
    char tmpl[] = "/tmp/runtime_config_test.XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~config_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string write(const std::string& name, const std::string& text) const {
    auto file = path + "/" + name;
    std::filesystem::create_directories(std::filesystem::path{file}.parent_path());
    std::ofstream{file} << text;
    return file;
  }
  std::string path;
};

/// Parses `text` as if it were /cfg/runtime.yaml; returns the error or "".
std::string error_of(const std::string& text) {
  runtime_config cfg;
  std::string error;
  if (parse_runtime_config(text, "runtime.yaml", "/tmp", cfg, error))
    return "";
  return error;
}

} // namespace

CAF_TEST(a valid config) {
  config_dir dir;
  dir.write("bin/tool.sh", "#!/bin/sh\n");
  std::filesystem::permissions(dir.path + "/bin/tool.sh", std::filesystem::perms::owner_all);
  std::filesystem::create_directories(dir.path + "/work");
  auto file = dir.write("runtime.yaml", R"(
manager: ws://127.0.0.1:3200
id: rt-1
name: demo
actions:
  - name: wordcount
    description: counts words
    command: [python3, actions/wordcount.py]
    inputSchema:
      type: object
      properties:
        text: {type: string, maxLength: 100}
        strict: {const: true}
        quoted: {const: '42'}
      required: [text]
    metadata: '{"owner": "team"}'
    timeout: 30s
    maxConcurrency: 4
  - name: tool
    type: tool
    command: bin/tool.sh
    args: [--flag, two words]
    env:
      PORT: 8080
      MODE: fast
    cwd: work
    bidi: true
    timeout: 250
    killGrace: 500ms
  - name: wordcount
    type: tool
    command: [/bin/true]
)");
  runtime_config cfg;
  std::string error;
  CAF_REQUIRE(load_runtime_config(file, cfg, error));
  CAF_CHECK_EQUAL(error, "");
  CAF_CHECK_EQUAL(cfg.manager_url.value_or(""), "ws://127.0.0.1:3200");
  CAF_CHECK_EQUAL(cfg.id.value_or(""), "rt-1");
  CAF_CHECK_EQUAL(cfg.name.value_or(""), "demo");
  CAF_REQUIRE_EQUAL(cfg.actions.size(), 3u);
  auto& wc = cfg.actions[0];
  CAF_CHECK_EQUAL(wc.name, "wordcount");
  CAF_CHECK_EQUAL(wc.type, "flow");
  CAF_CHECK_EQUAL(wc.description, "counts words");
  // A program without '/' stays a PATH lookup; its arguments are untouched
  // and resolve against cwd, which defaults to the config's directory.
  CAF_CHECK_EQUAL(wc.command.size(), 2u);
  CAF_CHECK_EQUAL(wc.command[0], "python3");
  CAF_CHECK_EQUAL(wc.command[1], "actions/wordcount.py");
  CAF_CHECK_EQUAL(wc.cwd, dir.path);
  CAF_CHECK_EQUAL(wc.input_schema,
                  R"({"type":"object","properties":{"text":{"type":"string","maxLength":100},)"
                  R"("strict":{"const":true},"quoted":{"const":"42"}},"required":["text"]})");
  CAF_CHECK_EQUAL(wc.metadata, R"({"owner":"team"})");
  CAF_CHECK_EQUAL(wc.timeout.count(), 30000);
  CAF_CHECK_EQUAL(wc.max_concurrency, 4u);
  CAF_CHECK_EQUAL(wc.kill_grace.count(), 2000);
  CAF_CHECK(!wc.bidi);
  auto& tool = cfg.actions[1];
  CAF_CHECK_EQUAL(tool.type, "tool");
  CAF_REQUIRE_EQUAL(tool.command.size(), 3u);
  CAF_CHECK_EQUAL(tool.command[0], dir.path + "/bin/tool.sh");
  CAF_CHECK_EQUAL(tool.command[2], "two words");
  CAF_CHECK_EQUAL(tool.env.at("PORT"), "8080");
  CAF_CHECK_EQUAL(tool.env.at("MODE"), "fast");
  CAF_CHECK_EQUAL(tool.cwd, dir.path + "/work");
  CAF_CHECK(tool.bidi);
  CAF_CHECK_EQUAL(tool.timeout.count(), 250);
  CAF_CHECK_EQUAL(tool.kill_grace.count(), 500);
  // Same name, other type: another key, so no clash.
  CAF_CHECK_EQUAL(cfg.actions[2].type, "tool");
}

CAF_TEST(the shipped example loads) {
  auto root = std::filesystem::path{ACTOR_HOST_SOURCE_DIR};
  runtime_config cfg;
  std::string error;
  CAF_REQUIRE(load_runtime_config((root / "examples/runtime.yaml").string(), cfg, error));
  CAF_CHECK_EQUAL(error, "");
  CAF_REQUIRE_EQUAL(cfg.actions.size(), 3u);
  CAF_CHECK_EQUAL(cfg.actions[1].name, "upper");
  CAF_CHECK(cfg.actions[1].bidi);
}

CAF_TEST(an unknown key names its line and the key) {
  auto error = error_of(R"(name: demo
actions:
  - name: a
    comand: [/bin/true]
)");
  CAF_CHECK_EQUAL(error, "runtime.yaml:4:5: unknown key 'comand' in action (did you mean "
                         "'command'?)");
  error = error_of("managr: ws://x\n");
  CAF_CHECK_EQUAL(error, "runtime.yaml:1:1: unknown key 'managr' in runtime config (did you "
                         "mean 'manager'?)");
  error = error_of("actions:\n  - name: a\n    command: [/bin/true]\n    colour: red\n");
  CAF_CHECK(error.rfind("runtime.yaml:4:5: unknown key 'colour' in action (expected one of: name",
                        0)
            == 0);
}

CAF_TEST(missing name or command) {
  CAF_CHECK_EQUAL(error_of("actions:\n  - name: a\n    timeout: 1s\n"),
                  "runtime.yaml:2:5: action 'a' has no 'command'");
  CAF_CHECK_EQUAL(error_of("actions:\n  - command: [/bin/true]\n"),
                  "runtime.yaml:2:5: action without 'name'");
  CAF_CHECK_EQUAL(error_of("actions:\n  - name: a\n    command: []\n"),
                  "runtime.yaml:3:14: 'command' must name a program");
  CAF_CHECK_EQUAL(error_of("actions:\n  - name: a\n    command: python3 x.py\n"),
                  "runtime.yaml:3:14: 'command' string contains whitespace; no shell splits "
                  "it: write a list [program, arg, ...] or use 'args'");
}

CAF_TEST(bad timeout) {
  CAF_CHECK_EQUAL(error_of("actions:\n  - name: a\n    command: [/bin/true]\n    timeout: 5 sec\n"),
                  "runtime.yaml:4:14: bad timeout '5 sec': expected e.g. 250ms, 30s, 2m, 1h or "
                  "a number of milliseconds");
  CAF_CHECK(error_of("actions:\n  - name: a\n    command: [/bin/true]\n    timeout: -1\n")
              .rfind("runtime.yaml:4:14: bad timeout '-1'", 0)
            == 0);
  CAF_CHECK(error_of("actions:\n  - name: a\n    command: [/bin/true]\n    killGrace: 1.5s\n")
              .rfind("runtime.yaml:4:16: bad killGrace '1.5s'", 0)
            == 0);
  CAF_CHECK_EQUAL(error_of("actions:\n  - name: a\n    command: [/bin/true]\n    timeout: 2m\n"),
                  "");
}

CAF_TEST(other mistakes are errors too) {
  // Duplicate action.
  CAF_CHECK_EQUAL(error_of("actions:\n  - name: a\n    command: [/bin/true]\n"
                           "  - name: a\n    command: [/bin/false]\n"),
                  "runtime.yaml:4:5: duplicate action /flow/a (first at line 2)");
  // Duplicate key in one mapping.
  CAF_CHECK_EQUAL(error_of("actions:\n  - name: a\n    name: b\n    command: [/bin/true]\n"),
                  "runtime.yaml:3:5: duplicate key 'name' (first at line 2)");
  // Wrong types.
  CAF_CHECK_EQUAL(error_of("actions:\n  - name: a\n    command: [/bin/true]\n    bidi: yes\n"),
                  "runtime.yaml:4:11: 'bidi' must be true or false");
  CAF_CHECK_EQUAL(
    error_of("actions:\n  - name: a\n    command: [/bin/true]\n    inputSchema: '{nope'\n"),
    "runtime.yaml:4:18: 'inputSchema' is not valid JSON: syntax error");
  CAF_CHECK_EQUAL(
    error_of("actions:\n  - name: a\n    command: [/bin/true]\n    maxConcurrency: many\n"),
    "runtime.yaml:4:21: 'maxConcurrency' must be a non-negative integer");
  CAF_CHECK_EQUAL(error_of("actions: {a: 1}\n"), "runtime.yaml:1:10: 'actions' must be a list");
  CAF_CHECK_EQUAL(error_of("manager: not a url\n"),
                  "runtime.yaml:1:10: 'manager' is not a ws://, wss://, http:// or https:// URL: "
                  "not a url");
  // A relative program path must exist next to the config.
  CAF_CHECK_EQUAL(error_of("actions:\n  - name: a\n    command: [./nope.sh]\n"),
                  "runtime.yaml:3:14: program '/tmp/nope.sh' not found");
  // YAML syntax errors keep their position.
  CAF_CHECK_EQUAL(error_of("actions: [\n"), "runtime.yaml:2:1: end of sequence flow not found");
  // Unreadable file.
  runtime_config cfg;
  std::string error;
  CAF_CHECK(!load_runtime_config("/nonexistent/runtime.yaml", cfg, error));
  CAF_CHECK_EQUAL(error, "/nonexistent/runtime.yaml: cannot open: No such file or directory");
}
