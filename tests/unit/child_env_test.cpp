#define CAF_SUITE child_env

#include <caf/test/unit_test.hpp>

#include "proc/spawn.hpp"
#include "config/host_config.hpp"

#include <string>

using namespace actor_host;

namespace {

const proc::environment parent{
  {"PATH", "/usr/bin:/bin"},
  {"HOME", "/home/op"},
  {"LANG", "C.UTF-8"},
  {"LC_TIME", "de_DE.UTF-8"},
  {"TZ", "UTC"},
  {"GEMINI_API_KEY", "key"},
  {"AWS_ACCESS_KEY_ID", "id"},
  {"AWS_SECRET_ACCESS_KEY", "secret"},
  {"HTTPS_PROXY", "http://user:pw@proxy:3128"},
  {"ACTOR_HOST_AUTH_TOKEN", "manager-token"},
  {"ACTOR_HOST_AUTH_TOKEN_FILE", "/etc/actor-host/token"},
  {"ACTOR_HOST_LOG_LEVEL", "debug"},
};

std::string names(const proc::environment& env) {
  std::string out;
  for (auto& [k, v] : env)
    out += (out.empty() ? "" : " ") + k;
  return out;
}

config::service_spec service_of(const std::string& extra) {
  config::host_config cfg;
  std::string err;
  if (!config::parse_host_config("services:\n  - name: s\n    command: [x]\n" + extra,
                                   "/cfg/host.yaml", "/cfg", cfg, err))
    CAF_FAIL("unexpected error: " << err);
  return cfg.services.at(0);
}

std::string error_of(const std::string& extra) {
  config::host_config cfg;
  std::string err;
  if (config::parse_host_config("services:\n  - name: s\n    command: [x]\n" + extra,
                                  "/cfg/host.yaml", "/cfg", cfg, err))
    return {};
  return err;
}

} // namespace

CAF_TEST(by default a child keeps only what a program needs to run) {
  auto env = proc::filter_environment(parent, {});
  CAF_CHECK_EQUAL(names(env), "HOME LANG LC_TIME PATH TZ");
  CAF_CHECK_EQUAL(env.at("PATH"), "/usr/bin:/bin");
}

CAF_TEST(named variables and prefixes are kept on top of the defaults) {
  auto env = proc::filter_environment(parent, {.names = {"GEMINI_API_KEY", "AWS_*"}});
  CAF_CHECK_EQUAL(names(env),
                  "AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY GEMINI_API_KEY HOME LANG LC_TIME PATH TZ");
}

CAF_TEST(the manager secrets pass only when named exactly) {
  auto all = proc::filter_environment(parent, {.all = true, .names = {}});
  CAF_CHECK_EQUAL(all.count("ACTOR_HOST_AUTH_TOKEN"), 0u);
  CAF_CHECK_EQUAL(all.count("ACTOR_HOST_AUTH_TOKEN_FILE"), 0u);
  CAF_CHECK_EQUAL(all.count("ACTOR_HOST_LOG_LEVEL"), 1u);
  CAF_CHECK_EQUAL(all.count("HTTPS_PROXY"), 1u);
  CAF_CHECK_EQUAL(all.size(), parent.size() - 2);
  auto prefixed = proc::filter_environment(parent, {.names = {"ACTOR_HOST_*"}});
  CAF_CHECK_EQUAL(prefixed.count("ACTOR_HOST_AUTH_TOKEN"), 0u);
  CAF_CHECK_EQUAL(prefixed.count("ACTOR_HOST_LOG_LEVEL"), 1u);
  auto named = proc::filter_environment(parent, {.names = {"ACTOR_HOST_AUTH_TOKEN"}});
  CAF_CHECK_EQUAL(named.at("ACTOR_HOST_AUTH_TOKEN"), "manager-token");
  CAF_CHECK_EQUAL(named.count("ACTOR_HOST_AUTH_TOKEN_FILE"), 0u);
}

CAF_TEST(inherit_env in the host config) {
  auto plain = service_of("");
  CAF_CHECK_EQUAL(plain.inherit_env_all, false);
  CAF_CHECK(plain.inherit_env.empty());
  CAF_CHECK_EQUAL(service_of("    inherit_env: true\n").inherit_env_all, true);
  CAF_CHECK_EQUAL(service_of("    inherit_env: false\n").inherit_env_all, false);
  auto listed = service_of("    inherit_env: [GEMINI_API_KEY, AWS_*]\n");
  CAF_CHECK_EQUAL(listed.inherit_env_all, false);
  CAF_REQUIRE_EQUAL(listed.inherit_env.size(), 2u);
  CAF_CHECK_EQUAL(listed.inherit_env[1], "AWS_*");
  CAF_CHECK_EQUAL(error_of("    inherit_env: [BAD-NAME]\n"),
                  "/cfg/host.yaml:4:18: bad variable name 'BAD-NAME' in inherit_env (a name, or "
                  "a prefix and '*')");
  CAF_CHECK_EQUAL(error_of("    inherit_env: yes please\n"),
                  "/cfg/host.yaml:4:18: 'inherit_env' must be true, false or a list of variable "
                  "names");
}
