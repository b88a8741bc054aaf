#define CAF_SUITE precedence

#include <caf/test/unit_test.hpp>

#include "config/precedence.hpp"
#include "config/runtime_config.hpp"

#include <cstdlib>

using namespace actor_host::config;

namespace {

layer_value given(const char* value, const char* source) {
  return setting_value{value, source};
}

} // namespace

CAF_TEST(a flag beats the environment beats the file beats the default) {
  setting_value fallback{"d", "default"};
  auto file = given("f", "host.yaml:3");
  auto env = given("e", "env X");
  auto flag = given("g", "flag --x");
  {
    // CAF_CHECK_EQUAL binds references: copy out of the temporary first.
    std::string got = effective_value(fallback, {}, {}, {}).source;
    CAF_CHECK_EQUAL(got, "default");
  }
  {
    // CAF_CHECK_EQUAL binds references: copy out of the temporary first.
    std::string got = effective_value(fallback, file, {}, {}).value;
    CAF_CHECK_EQUAL(got, "f");
  }
  {
    // CAF_CHECK_EQUAL binds references: copy out of the temporary first.
    std::string got = effective_value(fallback, file, env, {}).value;
    CAF_CHECK_EQUAL(got, "e");
  }
  {
    // CAF_CHECK_EQUAL binds references: copy out of the temporary first.
    std::string got = effective_value(fallback, file, env, flag).value;
    CAF_CHECK_EQUAL(got, "g");
  }
  {
    // CAF_CHECK_EQUAL binds references: copy out of the temporary first.
    std::string got = effective_value(fallback, {}, {}, flag).source;
    CAF_CHECK_EQUAL(got, "flag --x");
  }
  {
    // CAF_CHECK_EQUAL binds references: copy out of the temporary first.
    std::string got = effective_value(fallback, file, {}, flag).value;
    CAF_CHECK_EQUAL(got, "g");
  }
  // A layer that gives "" still wins: only nullopt means "not given".
  {
    // CAF_CHECK_EQUAL binds references: copy out of the temporary first.
    std::string got = effective_value(fallback, file, given("", "env X"), {}).value;
    CAF_CHECK_EQUAL(got, "");
  }
}

CAF_TEST(empty values count as not given where a layer says so) {
  std::map<std::string, std::string> env{{"A", "1"}, {"EMPTY", ""}};
  {
    // CAF_CHECK_EQUAL binds references: copy out of the temporary first.
    std::string got = env_value(env, "A", true)->source;
    CAF_CHECK_EQUAL(got, "env A");
  }
  CAF_CHECK(!env_value(env, "MISSING", false));
  CAF_CHECK(!env_value(env, "EMPTY", true));
  CAF_REQUIRE(env_value(env, "EMPTY", false));
  {
    // CAF_CHECK_EQUAL binds references: copy out of the temporary first.
    std::string got = env_value(env, "EMPTY", false)->value;
    CAF_CHECK_EQUAL(got, "");
  }
  CAF_CHECK(!non_empty("", "flag --x"));
  {
    // CAF_CHECK_EQUAL binds references: copy out of the temporary first.
    std::string got = non_empty("v", "flag --x")->source;
    CAF_CHECK_EQUAL(got, "flag --x");
  }
}

CAF_TEST(the link of the runtime role follows the same rule) {
  runtime_config file;
  file.manager_url = "ws://file:1";
  file.id = "file-id";
  file.name = "file-name";
  std::map<std::string, std::string> env{{"GENKIT_REFLECTION_V2_SERVER", "ws://env:2"},
                                         {"GENKIT_RUNTIME_ID", ""},
                                         {"ACTOR_HOST_TLS_CA_FILE", "/env/ca.pem"}};
  auto link = resolve_runtime_link({}, env, file);
  CAF_CHECK_EQUAL(link.manager_url, "ws://env:2");
  CAF_CHECK_EQUAL(link.id, "file-id"); // an empty variable is not given
  CAF_CHECK_EQUAL(link.name, "file-name");
  CAF_CHECK_EQUAL(link.tls_ca_file, "/env/ca.pem");
  link = resolve_runtime_link({"ws://flag:3", "flag-id", "flag-name", "/flag/ca.pem"}, env, file);
  CAF_CHECK_EQUAL(link.manager_url, "ws://flag:3");
  CAF_CHECK_EQUAL(link.id, "flag-id");
  CAF_CHECK_EQUAL(link.name, "flag-name");
  CAF_CHECK_EQUAL(link.tls_ca_file, "/flag/ca.pem");
  link = resolve_runtime_link({}, {}, runtime_config{});
  CAF_CHECK_EQUAL(link.manager_url, "");
  CAF_CHECK_EQUAL(link.id, "");
  CAF_CHECK_EQUAL(link.name, "");
  CAF_CHECK_EQUAL(link.tls_ca_file, "");
}

CAF_TEST(the process environment is read by prefix) {
  ::setenv("ACTOR_HOST_PRECEDENCE_TEST", "x=y", 1);
  auto env = process_environment("ACTOR_HOST_PRECEDENCE_");
  CAF_CHECK_EQUAL(env.size(), 1u);
  CAF_CHECK_EQUAL(env["ACTOR_HOST_PRECEDENCE_TEST"], "x=y");
  CAF_CHECK_EQUAL(process_environment().count("ACTOR_HOST_PRECEDENCE_TEST"), 1u);
  ::unsetenv("ACTOR_HOST_PRECEDENCE_TEST");
}
