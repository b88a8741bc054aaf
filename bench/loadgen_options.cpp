#include "bench/loadgen_options.hpp"

#include "bench/flags.hpp"
#include "bench/wsraw.hpp"

#include <cstdio>
#include <cstdlib>

namespace bench {

namespace {

void usage() {
  std::fprintf(stderr, "usage: bench_load --url ws://HOST:PORT/api/ws|http://HOST:PORT --scenario "
                       "echo|open|stream|bidi|cancel|burst [--callers N] [--inflight K] "
                       "[--seconds S] [--warmup W] [--rate R] [--stream-n N] "
                       "[--runtime-id ID [--runtimes M]] [--runtime-name SERVICE] "
                       "[--system NAME] [--round I] [--watch NAME=PID]...\n");
}

} // namespace

bool parse_load_options(int argc, char** argv, load_options& o) {
  std::string url;
  auto watch = [&o](const std::string& v) {
    auto eq = v.find('=');
    if (eq == std::string::npos) {
      std::fprintf(stderr, "--watch NAME=PID\n");
      return false;
    }
    o.watch.emplace_back(v.substr(0, eq), std::atoi(v.c_str() + eq + 1));
    return true;
  };
  if (!read_flags(argc, argv,
                  {{"--url", &url},
                   {"--scenario", &o.scenario},
                   {"--callers", &o.callers},
                   {"--inflight", &o.inflight},
                   {"--seconds", &o.seconds},
                   {"--warmup", &o.warmup},
                   {"--rate", &o.rate},
                   {"--stream-n", &o.stream_n},
                   {"--drain-timeout", &o.drain_timeout},
                   {"--max-inflight", &o.max_inflight},
                   {"--system", &o.system},
                   {"--round", &o.round},
                   {"--runtime-id", &o.runtime_id},
                   {"--runtime-name", &o.runtime_name},
                   {"--runtimes", &o.runtimes},
                   {"--watch", watch}}))
    return false;
  static const char* scenarios[] = {"echo", "open", "stream", "bidi", "cancel", "burst"};
  bool known = false;
  for (auto* s : scenarios)
    known |= o.scenario == s;
  // http://HOST:PORT selects the HTTP mode (/api/runAction, /api/streamAction).
  if (url.rfind("http://", 0) == 0) {
    o.http = true;
    url = "ws://" + url.substr(7);
  }
  if (url.empty() || !split_ws_url(url, o.host, o.port, o.path) || !known || o.callers < 1
      || o.inflight < 1 || o.seconds <= 0) {
    usage();
    return false;
  }
  return true;
}

std::string runtime_id_param(const load_options& o, std::uint64_t k) {
  std::string name = o.runtime_name.empty() ? "" : R"(,"runtimeName":")" + o.runtime_name + '"';
  if (o.runtime_id.empty())
    return name;
  if (o.runtimes <= 0)
    return R"(,"runtimeId":")" + o.runtime_id + '"' + name;
  return R"(,"runtimeId":")" + o.runtime_id + '-'
         + std::to_string(k % static_cast<std::uint64_t>(o.runtimes)) + '"' + name;
}

} // namespace bench
