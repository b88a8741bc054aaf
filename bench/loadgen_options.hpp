#pragma once

// bench_load's command line.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace bench {

struct load_options {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  std::string path = "/api/ws";
  bool http = false; // --url http://HOST:PORT: the tools server's HTTP routes
  std::string scenario = "echo";
  int callers = 1;
  int inflight = 1;
  double seconds = 3;
  double warmup = 1;
  double rate = 1000;
  long stream_n = 10000;
  double drain_timeout = 10;
  long max_inflight = 20000;
  std::string system = "?";
  int round = 0;
  std::string runtime_id; // optional runtimeId param
  std::string runtime_name; // optional runtimeName param (a service: balanced over its replicas)
  int runtimes = 0;       // > 0: runtimeId = runtime_id-(k mod runtimes), round robin
  std::vector<std::pair<std::string, int>> watch;
};

/// Reads `--name value` pairs into `o`; on a bad or missing option prints
/// the usage to stderr and returns false.
bool parse_load_options(int argc, char** argv, load_options& o);

/// The `,"runtimeId":...` parameter of call number `k`: none, runtime_id,
/// or with `runtimes` > 0 runtime_id-(k mod runtimes), the names
/// `bench_fake_runtime --prefix ID --n M` gives its runtimes; then
/// `,"runtimeName":...` when runtime_name is set.
std::string runtime_id_param(const load_options& o, std::uint64_t k);

} // namespace bench
