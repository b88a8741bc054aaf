#define CAF_SUITE host_config

#include <caf/test/unit_test.hpp>

#include "config/host_config.hpp"
#include "config/service_reload.hpp"

#include <string>

using namespace actor_host::config;
using namespace std::chrono_literals;

namespace {

std::string error_of(const std::string& text) {
  host_config cfg;
  std::string err;
  if (parse_host_config(text, "/cfg/host.yaml", "/cfg", cfg, err))
    return {};
  return err;
}

host_config parse_ok(const std::string& text) {
  host_config cfg;
  std::string err;
  if (!parse_host_config(text, "/cfg/host.yaml", "/cfg", cfg, err))
    CAF_FAIL("unexpected error: " << err);
  return cfg;
}

} // namespace

CAF_TEST(a full config parses with defaults filled in) {
  auto cfg = parse_ok(R"(manager:
  port: 3100
  drain_timeout: 2s
services:
  - name: demo
    command: [actor-host, --role, runtime, --demo]
  - name: app
    command: [node, index.js]
    runtime_id: app-1
    cwd: app
    env: {A: "1"}
    restart: always
    backoff: 100ms
    max_backoff: 1s
    max_restarts: 0
    ready_timeout: 5s
    stop_grace: 1s
    register: false
)");
  CAF_REQUIRE_EQUAL(cfg.services.size(), 2u);
  auto& demo = cfg.services[0];
  CAF_CHECK_EQUAL(demo.runtime_id, "demo");
  CAF_CHECK(demo.restart == restart_mode::on_failure);
  CAF_CHECK(demo.backoff == 500ms);
  CAF_CHECK(demo.registers);
  auto& app = cfg.services[1];
  CAF_CHECK_EQUAL(app.runtime_id, "app-1");
  CAF_CHECK_EQUAL(app.cwd, "/cfg/app");
  CAF_CHECK_EQUAL(app.env.at("A"), "1");
  CAF_CHECK(app.restart == restart_mode::always);
  CAF_CHECK(app.max_backoff == 1s);
  CAF_CHECK_EQUAL(app.max_restarts, 0u);
  CAF_CHECK(!app.registers);
  CAF_CHECK_EQUAL(cfg.manager.at("port").value, "3100");
  CAF_CHECK_EQUAL(cfg.manager.at("port").source, "/cfg/host.yaml:2");
}

CAF_TEST(replicas expand into children of one service) {
  auto cfg = parse_ok(R"(services:
  - name: orders
    command: [node, app.js]
    replicas: 3
    max_inflight_per_runtime: 4
  - name: solo
    command: [node, solo.js]
)");
  CAF_REQUIRE_EQUAL(cfg.services.size(), 4u);
  for (int k = 1; k <= 3; ++k) {
    auto& c = cfg.services[k - 1];
    CAF_CHECK_EQUAL(c.name, "orders-" + std::to_string(k));
    CAF_CHECK_EQUAL(c.runtime_id, "orders-" + std::to_string(k));
    CAF_CHECK_EQUAL(c.service, "orders");
    CAF_CHECK(c.max_inflight_per_runtime == std::optional<std::uint64_t>{4});
  }
  CAF_CHECK_EQUAL(cfg.services[3].service, "");
  CAF_CHECK_EQUAL(cfg.services[3].runtime_id, "solo");
  CAF_CHECK_EQUAL(error_of("services:\n  - name: x\n    command: [a]\n    replicas: 0\n"),
                  "/cfg/host.yaml:4:15: 'replicas' must be from 1 to 256");
  // The numbered ids must not collide with another service's.
  auto e = error_of("services:\n  - name: x\n    command: [a]\n    replicas: 2\n"
                    "  - name: y\n    runtime_id: x-2\n    command: [a]\n");
  CAF_CHECK(e.find("duplicate runtime_id 'x-2'") != std::string::npos);
}

CAF_TEST(broken configs are refused with the line and the reason) {
  CAF_CHECK_EQUAL(error_of("services:\n  - name: x\n    command: [a]\n    restart: sometimes\n"),
                  "/cfg/host.yaml:4:14: bad restart 'sometimes': expected never, on-failure or "
                  "always");
  auto e = error_of("manager:\n  prot: 3100\n");
  CAF_CHECK(e.rfind("/cfg/host.yaml:2:3: unknown key 'prot' in manager", 0) == 0);
  CAF_CHECK_EQUAL(error_of("manager:\n  port: 70000\n"),
                  "/cfg/host.yaml:2:9: bad port '70000': expected a port number 0-65535");
  CAF_CHECK_EQUAL(error_of("manager:\n  log_format: xml\n"),
                  "/cfg/host.yaml:2:15: bad log_format 'xml': expected one of text,json");
  CAF_CHECK_EQUAL(error_of("services:\n  - command: [a]\n"), "/cfg/host.yaml:2:5: service has no 'name'");
  CAF_CHECK_EQUAL(error_of("services:\n  - name: a\n    command: \"node app.js\"\n"),
                  "/cfg/host.yaml:3:14: 'command' must be a list (argv, no shell): e.g. [node, "
                  "app.js]");
  CAF_CHECK_EQUAL(
    error_of("services:\n  - name: a\n    command: [x]\n  - name: a\n    command: [y]\n"),
    "/cfg/host.yaml:4:5: duplicate service name 'a'");
  CAF_CHECK_EQUAL(error_of("services:\n  - name: a\n    command: [x]\n    runtime_id: r\n  - "
                           "name: b\n    command: [y]\n    runtime_id: r\n"),
                  "/cfg/host.yaml:5:5: duplicate runtime_id 'r'");
  CAF_CHECK_EQUAL(error_of("services:\n  - name: a\n    command: [x]\n    backoff: soon\n"),
                  "/cfg/host.yaml:4:14: bad backoff 'soon': expected e.g. 250ms, 30s, 2m, 1h or "
                  "a number of milliseconds");
  CAF_CHECK(error_of("manager: [\n").find("/cfg/host.yaml:") == 0);
}

CAF_TEST(precedence is defaults then file then environment then flags) {
  auto cfg = parse_ok("manager:\n  port: 3100\n  http_port: 4200\n  bind: 0.0.0.0\n");
  std::map<std::string, setting_value> out;
  std::string err;
  CAF_REQUIRE(resolve_settings(cfg, {{"ACTOR_HOST_HTTP_PORT", "4300"}, {"ACTOR_HOST_PORT", "3101"}},
                               {{"port", "3102"}}, out, err));
  CAF_CHECK_EQUAL(out.at("port").value, "3102");
  CAF_CHECK_EQUAL(out.at("port").source, "flag --port");
  CAF_CHECK_EQUAL(out.at("http_port").value, "4300");
  CAF_CHECK_EQUAL(out.at("http_port").source, "env ACTOR_HOST_HTTP_PORT");
  CAF_CHECK_EQUAL(out.at("bind").value, "0.0.0.0");
  CAF_CHECK_EQUAL(out.at("bind").source, "/cfg/host.yaml:4");
  CAF_CHECK_EQUAL(out.at("drain_timeout").value, "15s");
  CAF_CHECK_EQUAL(out.at("drain_timeout").source, "default");
  // A bad value names where it came from.
  CAF_CHECK(!resolve_settings(cfg, {{"ACTOR_HOST_DRAIN_TIMEOUT", "forever"}}, {}, out, err));
  CAF_CHECK_EQUAL(err, "env ACTOR_HOST_DRAIN_TIMEOUT: bad drain_timeout 'forever': expected "
                       "e.g. 250ms, 30s, 2m, 1h or a number of milliseconds");
  CAF_CHECK(!resolve_settings(cfg, {}, {{"request_timeout", "0"}}, out, err));
  CAF_CHECK_EQUAL(err, "flag --request-timeout: bad request_timeout '0': must be more than 0");
}

CAF_TEST(the cluster section maps to the cluster settings) {
  auto cfg = parse_ok(R"(cluster:
  port: 7301
  node_name: a
  seeds: [10.0.0.1:7300, "seed.example:7300"]
  heartbeat_timeout: 3s
)");
  CAF_CHECK_EQUAL(cfg.manager.at("cluster_port").value, "7301");
  CAF_CHECK_EQUAL(cfg.manager.at("node_name").value, "a");
  CAF_CHECK_EQUAL(cfg.manager.at("cluster_seeds").value, "10.0.0.1:7300,seed.example:7300");
  CAF_CHECK_EQUAL(cfg.manager.at("cluster_heartbeat_timeout").value, "3s");
  CAF_CHECK_EQUAL(cfg.manager.at("cluster_port").source, "/cfg/host.yaml:2");
  std::map<std::string, setting_value> out;
  std::string err;
  CAF_REQUIRE(resolve_settings(cfg, {{"ACTOR_HOST_NODE_NAME", "b"}},
                               {{"cluster_seeds", "x:1"}}, out, err));
  CAF_CHECK_EQUAL(out.at("node_name").value, "b");
  CAF_CHECK_EQUAL(out.at("cluster_seeds").value, "x:1");
  CAF_CHECK_EQUAL(out.at("cluster_port").value, "7301");
  // Cluster keys live under cluster:, manager keys under manager:.
  CAF_CHECK(error_of("cluster:\n  http_port: 1\n").find("unknown key 'http_port' in cluster")
            != std::string::npos);
  CAF_CHECK(error_of("manager:\n  cluster_port: 1\n").find("unknown key 'cluster_port'")
            != std::string::npos);
  CAF_CHECK(error_of("cluster:\n  port: 70000\n") != "");
  CAF_CHECK(error_of("cluster:\n  seeds: [{a: 1}]\n").find("host:port") != std::string::npos);
}

CAF_TEST(a reload restarts the children whose spec changed and leaves what needs a manager restart) {
  auto spec = [](const std::string& name, std::vector<std::string> command) {
    service_spec s;
    s.name = name;
    s.runtime_id = name;
    s.command = std::move(command);
    return s;
  };
  std::vector<service_spec> running{spec("a-1", {"app", "v1"}), spec("a-2", {"app", "v1"}),
                                            spec("b", {"b"}), spec("gone", {"g"})};
  auto next = running;
  next[0].command[1] = "v2";
  next[1].command[1] = "v2";
  next[2].env["X"] = "1";
  next.pop_back();                   // gone: no longer configured
  next.push_back(spec("new", {"n"})); // added
  auto plan = plan_service_reload(running, next);
  CAF_CHECK_EQUAL(plan.changed, (std::vector<std::size_t>{0, 1, 2}));
  CAF_REQUIRE_EQUAL(plan.not_applied.size(), 2u);
  CAF_CHECK(plan.not_applied[0].find("gone is no longer configured") != std::string::npos);
  CAF_CHECK(plan.not_applied[1].find("new is new") != std::string::npos);
  // Unchanged: nothing to do. A new runtime id is not a restart's to apply.
  CAF_CHECK(plan_service_reload(running, running).changed.empty());
  auto renamed = running;
  renamed[2].runtime_id = "b2";
  plan = plan_service_reload(running, renamed);
  CAF_CHECK(plan.changed.empty());
  CAF_REQUIRE_EQUAL(plan.not_applied.size(), 1u);
  CAF_CHECK(plan.not_applied[0].find("new runtime id") != std::string::npos);
}
