// bench_relay: the practical limit for routing Reflection V2 calls — a bare
// Beast relay with no actors and no JSON beyond the ids.
//
//   bench_relay [--bind 127.0.0.1] [--port 0] [--http-port 0] [--io-threads 1]
//
// It uses the same transport as actor-host (net::server, the same WebSocket
// sessions and write queues): runtimes dial --port and `register` (answered
// with {}); callers use ws://HOST:<http-port>/api/ws with the same JSON-RPC
// frames as actor-host's /api/ws. A caller request is forwarded to the most
// recently registered runtime with its id replaced by a relay id; responses
// come back by that id, runActionState/streamChunk by params.requestId, and a
// caller's sendInputStreamChunk/endInputStream go out by the same mapping.
// Locating an id is the only parsing done (simdjson On Demand, everything
// else is skipped); frames are spliced, never re-serialised.
//
// Prints {"relay":true,"runtime_port":P,"api_port":H,"pid":N} once listening;
// SIGINT/SIGTERM stop it.
#include "bench/frame_scan.hpp"
#include "net/io_runtime.hpp"
#include "net/server.hpp"
#include "wire/json_raw.hpp"

#include <spdlog/spdlog.h>

#include <atomic>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <pthread.h>
#include <string>
#include <string_view>
#include <unistd.h>
#include <unordered_map>

namespace {

namespace net = actor_host::net;
namespace wire = actor_host::wire;
namespace od = bench::od;

// Where the routing ids sit in a frame (offsets into it).
struct ids {
  std::string_view method;
  std::size_t id_pos = 0, id_len = 0;
  bool has_id = false;
  std::size_t rid_pos = 0, rid_len = 0;
  bool has_rid = false;
};

bool routed_by_request_id(std::string_view m) {
  return m == "streamChunk" || m == "runActionState" || m == "sendInputStreamChunk"
         || m == "endInputStream";
}

// `frame` has simdjson's padding as spare capacity (ws_session reserves it).
bool locate(std::string& frame, ids& out) {
  if (frame.capacity() < frame.size() + simdjson::SIMDJSON_PADDING)
    frame.reserve(frame.size() + simdjson::SIMDJSON_PADDING);
  const char* base = frame.data();
  // Where a raw id token sits in the frame.
  auto place = [base](od::value& v, std::size_t& pos, std::size_t& len) {
    auto tok = wire::json_raw::trim(v.raw_json_token());
    pos = static_cast<std::size_t>(tok.data() - base);
    len = tok.size();
  };
  auto on_param = [&](std::string_view k, od::value& v) {
    // The first requestId routes; later members are walked past, not read.
    if (k == "requestId" && !out.has_rid) {
      place(v, out.rid_pos, out.rid_len);
      out.has_rid = true;
    }
    return true;
  };
  return bench::scan_frame(frame.data(), frame.size(), frame.capacity(),
                           [&](std::string_view k, od::value& v) {
                             if (k == "method")
                               return !v.get_string().get(out.method);
                             if (k == "id") {
                               place(v, out.id_pos, out.id_len);
                               out.has_id = true;
                             } else if (k == "params" && routed_by_request_id(out.method))
                               return bench::for_each_member_if_object(v, on_param);
                             return true;
                           });
}

std::string splice(const std::string& frame, std::size_t pos, std::size_t len, std::string_view with) {
  std::string s;
  s.reserve(frame.size() - len + with.size());
  s.append(frame, 0, pos);
  s.append(with);
  s.append(frame, pos + len, std::string::npos);
  return s;
}

class caller_side;

struct relay_state {
  std::mutex mu;
  net::transport_ptr runtime; // the most recently registered runtime
  std::uint64_t next_id = 1;
  struct route {
    std::weak_ptr<caller_side> caller;
    std::string caller_id; // raw JSON
  };
  std::unordered_map<std::uint64_t, route> routes;
  std::atomic<long> runtimes{0};
};

// Either end of a relayed call: its connection and the relay's shared
// routes; it reads each frame's routing ids and hands them to on_frame.
class relay_side : public net::frame_handler {
public:
  relay_side(relay_state& st, net::transport_ptr t) : st_(st), t_(std::move(t)) {}

  void on_text(std::string frame) override {
    ids x;
    if (locate(frame, x))
      on_frame(frame, x);
  }

protected:
  virtual void on_frame(const std::string& frame, const ids& x) = 0;

  relay_state& st_;
  net::transport_ptr t_;
};

class caller_side : public relay_side, public std::enable_shared_from_this<caller_side> {
public:
  using relay_side::relay_side;

  void on_frame(const std::string& frame, const ids& x) override {
    if (!x.method.empty() && x.has_id) {
      net::transport_ptr rt;
      std::string wire;
      {
        std::lock_guard lock{st_.mu};
        rt = st_.runtime;
        if (rt) {
          auto n = st_.next_id++;
          wire = '"' + std::to_string(n) + '"';
          std::string caller_id = frame.substr(x.id_pos, x.id_len);
          by_caller_id_[caller_id] = n;
          st_.routes.emplace(n, relay_state::route{weak_from_this(), std::move(caller_id)});
        }
      }
      if (!rt) {
        t_->send_text(R"({"jsonrpc":"2.0","error":{"code":-32000,"message":"no runtime"},"id":)"
                      + frame.substr(x.id_pos, x.id_len) + "}");
        return;
      }
      rt->send_text(splice(frame, x.id_pos, x.id_len, wire));
      return;
    }
    if (x.has_rid) { // bidi input notifications
      net::transport_ptr rt;
      std::string wire;
      {
        std::lock_guard lock{st_.mu};
        auto i = by_caller_id_.find(frame.substr(x.rid_pos, x.rid_len));
        if (i == by_caller_id_.end())
          return;
        rt = st_.runtime;
        wire = '"' + std::to_string(i->second) + '"';
      }
      if (rt)
        rt->send_text(splice(frame, x.rid_pos, x.rid_len, wire));
    }
  }

  void on_closed(std::string) override {}

  void send(std::string frame) { t_->send_text(std::move(frame)); }

  // Under st_.mu.
  void forget(const std::string& caller_id) { by_caller_id_.erase(caller_id); }

private:
  std::unordered_map<std::string, std::uint64_t> by_caller_id_;
};

class runtime_side : public relay_side {
public:
  using relay_side::relay_side;

  void on_frame(const std::string& frame, const ids& x) override {
    if (x.method == "register") {
      {
        std::lock_guard lock{st_.mu};
        st_.runtime = t_;
      }
      if (!registered_) {
        registered_ = true;
        ++st_.runtimes;
      }
      if (x.has_id)
        t_->send_text(R"({"jsonrpc":"2.0","result":{},"id":)" + frame.substr(x.id_pos, x.id_len) + "}");
      return;
    }
    bool response = x.method.empty() && x.has_id;
    if (!response && !x.has_rid)
      return;
    auto pos = response ? x.id_pos : x.rid_pos;
    auto len = response ? x.id_len : x.rid_len;
    // Relay ids are "<n>".
    std::uint64_t n = 0;
    if (len < 3 || std::from_chars(frame.data() + pos + 1, frame.data() + pos + len - 1, n).ec != std::errc{})
      return;
    std::shared_ptr<caller_side> caller;
    std::string caller_id;
    {
      std::lock_guard lock{st_.mu};
      auto i = st_.routes.find(n);
      if (i == st_.routes.end())
        return;
      caller = i->second.caller.lock();
      caller_id = i->second.caller_id;
      if (response) {
        if (caller)
          caller->forget(caller_id);
        st_.routes.erase(i);
      }
    }
    if (caller)
      caller->send(splice(frame, pos, len, caller_id));
  }

  void on_closed(std::string) override {
    std::lock_guard lock{st_.mu};
    if (st_.runtime == t_)
      st_.runtime = nullptr;
    if (registered_)
      --st_.runtimes;
    t_ = nullptr; // break the session <-> handler cycle
  }

private:
  bool registered_ = false;
};

} // namespace

int main(int argc, char** argv) {
  std::string bind = "127.0.0.1";
  int port = 0, http_port = 0, io_threads = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--bind")
      bind = argv[i + 1];
    else if (k == "--port")
      port = std::atoi(argv[i + 1]);
    else if (k == "--http-port")
      http_port = std::atoi(argv[i + 1]);
    else if (k == "--io-threads")
      io_threads = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: bench_relay [--bind A] [--port P] [--http-port H] [--io-threads N]\n");
      return 2;
    }
  }
  spdlog::set_level(spdlog::level::warn);
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  relay_state st;
  net::io_runtime io{static_cast<unsigned>(io_threads < 1 ? 1 : io_threads)};
  net::server_options ro;
  ro.bind = bind;
  ro.port = static_cast<std::uint16_t>(port);
  // No cap of its own: the memory pass connects 10,000 runtimes, and the
  // descriptor limit is what bench/run.sh raises.
  ro.max_connections = std::size_t{1} << 20;
  net::server_options ao = ro;
  ao.port = static_cast<std::uint16_t>(http_port);
  net::server runtimes{io, ro};
  net::server api{io, ao};
  runtimes.on_websocket("", [&st](net::transport_ptr t) -> net::frame_handler_ptr {
    return std::make_shared<runtime_side>(st, std::move(t));
  });
  api.on_websocket("/api/ws", [&st](net::transport_ptr t) -> net::frame_handler_ptr {
    return std::make_shared<caller_side>(st, std::move(t));
  });
  if (auto e = runtimes.listen(); !e.empty()) {
    std::fprintf(stderr, "bench_relay: %s\n", e.c_str());
    return 1;
  }
  if (auto e = api.listen(); !e.empty()) {
    std::fprintf(stderr, "bench_relay: %s\n", e.c_str());
    return 1;
  }
  io.start();
  std::printf("{\"relay\":true,\"runtime_port\":%u,\"api_port\":%u,\"pid\":%d}\n", runtimes.port(),
              api.port(), static_cast<int>(getpid()));
  std::fflush(stdout);
  int sig = 0;
  sigwait(&signals, &sig);
  runtimes.stop_accepting();
  api.stop_accepting();
  io.stop(500);
  return 0;
}
