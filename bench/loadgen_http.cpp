#include "bench/loadgen_http.hpp"

#include "bench/loadgen_result.hpp"
#include "bench/measure.hpp"
#include "registry/runtime_info.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <unistd.h>
#include <vector>

namespace bench {

namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;
using namespace std::chrono_literals;

using phase = load_phase;

// Where the response parser of one connection is. The parser is hand-written
// (status line, Content-Length or chunked, nothing else) because the load
// generator must cost far less CPU than what it measures.
enum class rstate { head, body_length, chunk_size, chunk_data, chunk_crlf, trailer };

bool iequals_prefix(std::string_view line, std::string_view name) {
  if (line.size() < name.size())
    return false;
  for (std::size_t i = 0; i < name.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(line[i])) != name[i])
      return false;
  return true;
}

std::string trim(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t'))
    v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t' || v.back() == '\r'))
    v.remove_suffix(1);
  return std::string{v};
}

struct http_load;

struct slot {
  http_load* g = nullptr;
  tcp::socket sock;
  std::string req;          // the request being written
  std::string rbuf;         // received, not yet parsed
  std::size_t rbegin = 0;   // parse position in rbuf
  rstate st = rstate::head;
  std::size_t remaining = 0; // body bytes (length) / chunk bytes left
  int status = 0;
  bool busy = false;        // a request is out
  bool is_cancel = false;   // a cancelAction of one stream (end_streams), not a call
  bool cancel_sent = false; // stream: cancelAction sent for it
  std::string trace;        // stream: X-Genkit-Trace-Id of its response, to cancel it by
  std::string body;         // echo: whole body; stream: current partial line
  std::string last;         // stream: the final result line, if newline-terminated
  std::uint64_t seq = 0;
  long got = 0;             // stream chunks seen
  bench::clock::time_point t0;
  explicit slot(asio::io_context& io) : sock(io) {}
};

struct http_load : load_run {
  const load_options& o;
  asio::io_context io;
  std::vector<std::unique_ptr<slot>> slots;
  std::vector<std::unique_ptr<slot>> cancels; // end_streams' connections
  asio::steady_timer timer{io};
  std::size_t connected = 0;
  long inflight = 0;
  std::string head_prefix; // request line + headers up to Content-Length
  bool stream = false;

  explicit http_load(const load_options& opts) : o(opts) {
    stream = o.scenario == "stream";
    head_prefix = std::string{"POST "} + (stream ? "/api/streamAction" : "/api/runAction")
                  + " HTTP/1.1\r\nHost: " + o.host + ":" + std::to_string(o.port)
                  + "\r\nContent-Type: application/json\r\nContent-Length: ";
  }

  // -- requests ---------------------------------------------------------------------
  void send(slot& s) {
    std::string body;
    std::string rt = o.runtime_id.empty() ? "" : R"(,"runtimeId":")" + o.runtime_id + '"';
    ++s.seq;
    if (stream)
      body = R"({"key":"/flow/streamCount","input":{"n":)" + std::to_string(o.stream_n) + "}" + rt
             + "}";
    else
      body = R"({"key":"/flow/echo","input":{"i":)" + std::to_string(s.seq) + R"(,"s":"hello"})"
             + rt + "}";
    s.req = head_prefix + std::to_string(body.size()) + "\r\n\r\n" + body;
    s.busy = true;
    s.got = 0;
    s.trace.clear();
    s.body.clear();
    s.last.clear();
    s.t0 = bench::clock::now();
    ++inflight;
    if (ph == phase::measure)
      ++w.sent_measure;
    asio::async_write(s.sock, asio::buffer(s.req), [this, &s](error_code ec, std::size_t) {
      if (ec)
        lost(s, "write: " + ec.message());
    });
  }

  void lost(slot& s, const std::string& why) {
    if (!s.sock.is_open())
      return;
    error_code ignored;
    s.sock.close(ignored);
    if (close_reason.empty())
      close_reason = why;
    if (s.busy) {
      s.busy = false;
      --inflight; // that call will not complete
    }
    if (ph == phase::connecting)
      io.stop();
    else if (ph == phase::drain && inflight == 0)
      finish();
  }

  // -- responses --------------------------------------------------------------------
  void read(slot& s) {
    if (s.rbegin > 0 && s.rbegin == s.rbuf.size()) {
      s.rbuf.clear();
      s.rbegin = 0;
    } else if (s.rbegin > 64 * 1024) {
      s.rbuf.erase(0, s.rbegin);
      s.rbegin = 0;
    }
    auto old = s.rbuf.size();
    s.rbuf.resize(old + 64 * 1024);
    s.sock.async_read_some(asio::buffer(s.rbuf.data() + old, 64 * 1024),
                           [this, &s, old](error_code ec, std::size_t n) {
                             s.rbuf.resize(old + n);
                             if (!s.sock.is_open())
                               return; // closed by us (drop, a cancel's end): nothing more to read
                             if (ec)
                               return lost(s, "read: " + ec.message());
                             if (!parse(s))
                               return lost(s, "bad HTTP response");
                             if (s.sock.is_open())
                               read(s);
                           });
  }

  /// Hands on what `in` holds of the body's `s.remaining` bytes; false
  /// when nothing has arrived yet.
  bool take_body(slot& s, std::string_view in) {
    auto n = std::min(in.size(), s.remaining);
    if (n == 0)
      return false;
    on_body(s, in.substr(0, n));
    s.rbegin += n;
    s.remaining -= n;
    return true;
  }

  // Consumes what rbuf holds; false on a malformed response.
  bool parse(slot& s) {
    for (;;) {
      std::string_view in{s.rbuf.data() + s.rbegin, s.rbuf.size() - s.rbegin};
      switch (s.st) {
        case rstate::head: {
          auto end = in.find("\r\n\r\n");
          if (end == std::string_view::npos)
            return in.size() < 64 * 1024;
          auto head = in.substr(0, end + 2);
          s.rbegin += end + 4;
          if (head.size() < 12 || head.substr(0, 5) != "HTTP/")
            return false;
          s.status = std::atoi(std::string{head.substr(9, 3)}.c_str());
          bool chunked = false;
          long length = -1;
          for (std::size_t p = head.find("\r\n") + 2; p < head.size();) {
            auto e = head.find("\r\n", p);
            auto line = head.substr(p, e - p);
            if (iequals_prefix(line, "content-length:"))
              length = std::atol(std::string{line.substr(15)}.c_str());
            else if (iequals_prefix(line, "transfer-encoding:")
                     && line.find("chunked") != std::string_view::npos)
              chunked = true;
            else if (stream && !s.is_cancel && iequals_prefix(line, "x-genkit-trace-id:"))
              s.trace = trim(line.substr(18));
            p = e + 2;
          }
          if (stream && !s.is_cancel && ph == phase::drain && s.busy && !s.cancel_sent)
            end_stream(s); // sent just before the window ended
          if (!s.sock.is_open())
            return true;
          if (chunked) {
            s.st = rstate::chunk_size;
          } else if (length >= 0) {
            s.st = rstate::body_length;
            s.remaining = static_cast<std::size_t>(length);
            if (length == 0)
              complete(s);
          } else {
            return false; // read-to-close bodies: not from these servers
          }
          break;
        }
        case rstate::body_length:
          if (!take_body(s, in))
            return true;
          if (s.remaining == 0)
            complete(s);
          break;
        case rstate::chunk_size: {
          auto e = in.find("\r\n");
          if (e == std::string_view::npos)
            return in.size() < 1024;
          std::size_t n = 0;
          auto r = std::from_chars(in.data(), in.data() + e, n, 16);
          if (r.ec != std::errc{})
            return false;
          s.rbegin += e + 2;
          s.remaining = n;
          s.st = n == 0 ? rstate::trailer : rstate::chunk_data;
          break;
        }
        case rstate::chunk_data: {
          if (!take_body(s, in))
            return true;
          if (s.remaining == 0)
            s.st = rstate::chunk_crlf;
          break;
        }
        case rstate::chunk_crlf:
          if (in.size() < 2)
            return true;
          if (in.substr(0, 2) != "\r\n")
            return false;
          s.rbegin += 2;
          s.st = rstate::chunk_size;
          break;
        case rstate::trailer: {
          auto e = in.find("\r\n");
          if (e == std::string_view::npos)
            return true;
          s.rbegin += e + 2;
          if (e == 0)
            complete(s); // blank line: end of the trailer
          break;
        }
      }
      if (s.rbegin == s.rbuf.size() || !s.sock.is_open())
        return true; // all parsed, or a cancel's connection closed on its answer
    }
  }

  void on_body(slot& s, std::string_view piece) {
    if (!stream || s.is_cancel) {
      s.body.append(piece);
      return;
    }
    // Newline-delimited chunks, then the final result (or error): the tools
    // server writes it without a newline (it stays in s.body), actor-host
    // with one (kept in s.last).
    for (;;) {
      auto nl = piece.find('\n');
      if (nl == std::string_view::npos) {
        s.body.append(piece);
        return;
      }
      if (s.body.empty()) {
        on_line(s, piece.substr(0, nl));
      } else {
        s.body.append(piece.substr(0, nl));
        on_line(s, s.body);
        s.body.clear();
      }
      piece.remove_prefix(nl + 1);
    }
  }

  void on_line(slot& s, std::string_view line) {
    if (line.rfind("{\"result\"", 0) == 0 || line.rfind("{\"error\"", 0) == 0)
      s.last.assign(line);
    else
      on_chunk(s, line);
  }

  void on_chunk(slot& s, std::string_view line) {
    auto p = line.find("\"i\":");
    long k = -1;
    if (p != std::string_view::npos)
      std::from_chars(line.data() + p + 4, line.data() + line.size(), k);
    count_chunk(k, s.got, s.t0);
  }

  void complete(slot& s) {
    s.st = rstate::head;
    if (!s.busy)
      return error("response without a request");
    s.busy = false;
    --inflight;
    std::string_view b{s.body.empty() ? s.last : s.body};
    if (s.is_cancel) {
      // Refused only if the stream ended first (its own answer says how);
      // the drain waits for the stream either way.
      if ((s.status != 200 || b.rfind("{\"error\"", 0) == 0)
          && b.find("already completed") == std::string_view::npos)
        error("stream cancel failed: " + std::to_string(s.status) + " "
              + std::string{b.substr(0, 200)});
      error_code ignored;
      s.sock.close(ignored);
    } else if (s.cancel_sent && b.rfind("{\"error\"", 0) == 0
               && b.find("cancel") != std::string_view::npos) {
      // Cancelled at the end of the window: its chunks so far were counted.
    } else if (s.status != 200 || b.rfind("{\"error\"", 0) == 0) {
      error((stream ? "stream failed: " : "echo failed: ") + std::to_string(s.status) + " "
            + std::string{b.substr(0, 200)});
    } else if (stream) {
      auto pat = "\"count\":" + std::to_string(o.stream_n);
      auto p = b.find(pat);
      auto after = p == std::string_view::npos ? 'x' : b[p + pat.size()];
      if (p == std::string_view::npos || (after >= '0' && after <= '9'))
        error("stream failed: " + std::string{b.substr(0, 200)});
      else if (s.got != o.stream_n)
        error("stream ended after " + std::to_string(s.got) + " chunks");
    } else {
      auto pat = "\"i\":" + std::to_string(s.seq) + ",";
      if (b.find(pat) == std::string_view::npos)
        error("echo mismatch: " + std::string{b.substr(0, 200)});
      else if (ph == phase::measure) {
        ++w.done_ops;
        w.lat.add(us_since(s.t0));
      }
    }
    if (issuing())
      send(s);
    else if (ph == phase::drain && inflight == 0)
      finish();
  }

  // -- phases -----------------------------------------------------------------------
  void snapshot(bool start) {
    read_cpu(o, start);
    (start ? w.t_measure : w.t_end) = bench::clock::now();
  }

  template <class F>
  void after(double seconds, F f) {
    timer.expires_after(std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double>(seconds)));
    timer.async_wait([f](error_code ec) {
      if (!ec)
        f();
    });
  }

  void begin() {
    ph = o.warmup > 0 ? phase::warmup : phase::measure;
    if (ph == phase::measure)
      snapshot(true);
    for (auto& s : slots)
      send(*s);
    auto measure_for = [this] { after(o.seconds, [this] { end_measure(); }); };
    if (o.warmup > 0)
      after(o.warmup, [this, measure_for] {
        ph = phase::measure;
        snapshot(true);
        measure_for();
      });
    else
      measure_for();
  }

  void end_measure() {
    snapshot(false); // the window's end (clock, CPU) before anything is closed
    ph = phase::drain;
    end_streams();
    if (inflight == 0)
      return finish();
    after(o.drain_timeout, [this] { io.stop(); });
  }

  // Streams still running when the window ends are cancelled the way the Genkit
  // tools API lets a client cancel one: POST /api/cancelAction {traceId} (its
  // tRPC route, which actor-host's HTTP door serves too) with the trace id of
  // the response's X-Genkit-Trace-Id header (one whose response head has not
  // come yet, when it comes), on a connection of its own. The drain then waits
  // for the cancels' answers and for the streams to end; a stream counts as
  // ended well if it completed (all --stream-n chunks) or ended with the
  // cancellation error after our cancel, as in the WebSocket mode; echo calls in
  // flight still drain. Waiting for the rest of --stream-n chunks instead takes
  // a slow system longer than any fixed drain timeout (ours-http streamed 4 x
  // 200,000 chunks at ~32,000 chunks/s under load: "drain timed out"). Closing
  // the stream's connection would not do: actor-host's HTTP door cancels the run
  // of a client that leaves, but the tools server (tools-common 1.43) does not,
  // and its run would go on unread, loading the next phase. Nothing after the
  // window is counted, so what is measured stays the chunks received inside it.
  void end_streams() {
    if (!stream)
      return;
    for (auto& s : slots)
      if (s->busy && !s->cancel_sent && (!s->trace.empty() || s->st != rstate::head))
        end_stream(*s);
  }

  // One stream: cancelled by its trace id, or, if its response came without
  // one (or with one unfit to send back), dropped (its connection closed: the only other way an HTTP client
  // ends a call).
  void end_stream(slot& s) {
    // The header's text goes into our request body: only an id's characters.
    if (!actor_host::registry::valid_trace_id(s.trace)) {
      error_code ignored;
      s.sock.close(ignored);
      s.busy = false;
      --inflight;
      if (inflight == 0)
        finish();
      return;
    }
    s.cancel_sent = true;
    cancels.push_back(std::make_unique<slot>(io));
    auto& c = *cancels.back();
    c.is_cancel = true;
    c.busy = true;
    ++inflight;
    auto body = R"({"traceId":")" + s.trace + "\"}";
    c.req = "POST /api/cancelAction HTTP/1.1\r\nHost: " + o.host + ":" + std::to_string(o.port)
            + "\r\nContent-Type: application/json\r\nContent-Length: "
            + std::to_string(body.size()) + "\r\n\r\n" + body;
    tcp::endpoint ep{asio::ip::make_address(o.host), o.port};
    c.sock.async_connect(ep, [this, &c](error_code ec) {
      if (ec)
        return lost(c, "cancel connect: " + ec.message());
      c.sock.set_option(tcp::no_delay(true));
      read(c);
      asio::async_write(c.sock, asio::buffer(c.req), [this, &c](error_code ec, std::size_t) {
        if (ec)
          lost(c, "cancel write: " + ec.message());
      });
    });
  }

  void finish() {
    ph = phase::done;
    io.stop();
  }

  void connect_all() {
    tcp::endpoint ep{asio::ip::make_address(o.host), o.port};
    auto n = static_cast<std::size_t>(o.callers) * static_cast<std::size_t>(o.inflight);
    for (std::size_t i = 0; i < n; ++i) {
      slots.push_back(std::make_unique<slot>(io));
      auto& s = *slots.back();
      s.sock.async_connect(ep, [this, &s](error_code ec) {
        if (ec)
          return lost(s, "connect: " + ec.message());
        s.sock.set_option(tcp::no_delay(true));
        read(s);
        if (++connected == slots.size())
          begin();
      });
    }
  }
};

} // namespace

int run_http_load(const load_options& o) {
  if (o.scenario != "echo" && o.scenario != "stream") {
    std::fprintf(stderr, "bench_load: over HTTP only echo and stream are measured\n");
    return 2;
  }
  http_load g{o};
  g.connect_all();
  g.io.run_for(run_time_bound(o));
  if (g.ph == phase::measure)
    g.snapshot(false); // run_for ran out
  return g.print_result(o, g.close_reason.empty(), g.inflight);
}

} // namespace bench
