#include "bench/wsraw.hpp"

#include "wire/url.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include <algorithm>
#include <cstring>
#include <unordered_map>

namespace bench {

bool split_ws_url(const std::string& url, std::string& host, std::uint16_t& port,
                  std::string& path) {
  auto u = actor_host::wire::parse_url(url);
  if (!u || u->scheme != "ws")
    return false;
  host = u->host;
  port = static_cast<std::uint16_t>(std::stoi(u->port));
  path = u->target;
  return true;
}

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;

// -- loop ---------------------------------------------------------------------

struct loop::impl {
  asio::io_context ioc{1};
  std::uint64_t next_timer = 1;
  std::unordered_map<std::uint64_t, std::unique_ptr<asio::steady_timer>> timers;
};

loop::loop() : impl_(std::make_unique<impl>()) {}
loop::~loop() = default;

void loop::run_for(std::chrono::nanoseconds limit) {
  impl_->ioc.restart();
  auto guard = asio::make_work_guard(impl_->ioc);
  impl_->ioc.run_for(limit);
}

void loop::stop() {
  impl_->ioc.stop();
}

std::uint64_t loop::after(std::chrono::nanoseconds d, std::function<void()> f) {
  auto id = impl_->next_timer++;
  auto t = std::make_unique<asio::steady_timer>(impl_->ioc, d);
  auto* raw = t.get();
  impl_->timers.emplace(id, std::move(t));
  raw->async_wait([this, id, f = std::move(f)](error_code ec) {
    impl_->timers.erase(id);
    if (!ec)
      f();
  });
  return id;
}

void loop::cancel(std::uint64_t timer_id) {
  if (auto i = impl_->timers.find(timer_id); i != impl_->timers.end())
    i->second->cancel();
}

void loop::post(std::function<void()> f) {
  asio::post(impl_->ioc, std::move(f));
}

// -- frames -------------------------------------------------------------------

void append_client_frame(std::string& out, std::initializer_list<std::string_view> parts) {
  std::size_t n = 0;
  for (auto p : parts)
    n += p.size();
  char h[14];
  std::size_t hl = 0;
  h[hl++] = static_cast<char>(0x81); // FIN + text
  if (n <= 125) {
    h[hl++] = static_cast<char>(0x80 | n);
  } else if (n <= 0xffff) {
    h[hl++] = static_cast<char>(0x80 | 126);
    h[hl++] = static_cast<char>((n >> 8) & 0xff);
    h[hl++] = static_cast<char>(n & 0xff);
  } else {
    h[hl++] = static_cast<char>(0x80 | 127);
    for (int i = 7; i >= 0; --i)
      h[hl++] = static_cast<char>((static_cast<std::uint64_t>(n) >> (8 * i)) & 0xff);
  }
  for (int i = 0; i < 4; ++i) // mask key 0: payload bytes unchanged
    h[hl++] = 0;
  out.append(h, hl);
  for (auto p : parts)
    out.append(p.data(), p.size());
}

// -- connection ---------------------------------------------------------------

struct ws_conn::impl : std::enable_shared_from_this<ws_conn::impl> {
  impl(loop& l, handlers h, std::size_t read_buffer)
    : socket(l.get().ioc), h(std::move(h)), cap(std::max<std::size_t>(read_buffer, 8192)) {
    buf.reset(new char[cap]);
  }

  tcp::socket socket;
  handlers h;
  std::string host;
  std::string path;
  // read side
  std::size_t cap;
  std::unique_ptr<char[]> buf;
  std::size_t len = 0;
  bool upgraded = false;
  std::string fragments; // continuation frames (rare)
  bool dispatching = false;
  // write side
  std::string out;
  std::string wbuf;
  bool writing = false;
  bool closed = false;

  // Never clears `h` from inside a handler (it may be the one running);
  // handlers are dropped when the last pending operation completes.
  void fail(const std::string& why) {
    if (closed)
      return;
    closed = true;
    error_code ignored;
    socket.close(ignored);
    if (auto f = std::move(h.on_close))
      f(why);
  }

  void start(std::uint16_t port) {
    error_code ec;
    auto addr = asio::ip::make_address(host == "localhost" ? "127.0.0.1" : host, ec);
    if (ec)
      return asio::post(socket.get_executor(),
                        [self = shared_from_this()] { self->fail("bad host " + self->host); });
    socket.async_connect(tcp::endpoint{addr, port}, [self = shared_from_this()](error_code ec) {
      if (ec)
        return self->fail("connect: " + ec.message());
      error_code ignored;
      self->socket.set_option(tcp::no_delay{true}, ignored);
      self->out = "GET " + self->path + " HTTP/1.1\r\nHost: " + self->host
                  + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    "Sec-WebSocket-Key: YmVuY2gtY2xpZW50LWtleQ==\r\n"
                    "Sec-WebSocket-Version: 13\r\nUser-Agent: actor-host-bench\r\n\r\n";
      self->flush();
      self->do_read();
    });
  }

  void do_read() {
    if (closed)
      return;
    if (cap - len < read_padding + 4096) {
      // A frame bigger than the buffer: grow it.
      auto ncap = cap * 2;
      std::unique_ptr<char[]> nb{new char[ncap]};
      std::memcpy(nb.get(), buf.get(), len);
      buf = std::move(nb);
      cap = ncap;
    }
    socket.async_read_some(asio::buffer(buf.get() + len, cap - len - read_padding),
                           [self = shared_from_this()](error_code ec, std::size_t n) {
                             if (ec) {
                               self->fail(ec == asio::error::eof ? "closed by peer"
                                                                 : ec.message());
                               self->h = {}; // no handler is running here
                               return;
                             }
                             self->len += n;
                             self->on_bytes();
                           });
  }

  void on_bytes() {
    std::size_t pos = 0;
    if (!upgraded) {
      std::string_view v{buf.get(), len};
      auto end = v.find("\r\n\r\n");
      if (end == std::string_view::npos) {
        if (len > 16384)
          return fail("handshake response too long");
        return do_read();
      }
      auto status = v.substr(0, v.find("\r\n"));
      if (status.find(" 101") == std::string_view::npos)
        return fail("upgrade refused: " + std::string{status});
      upgraded = true;
      pos = end + 4;
      if (h.on_open)
        h.on_open();
      if (closed)
        return;
    }
    dispatching = true;
    auto self = shared_from_this(); // handlers may drop the last handle
    while (!closed && len - pos >= 2) {
      auto* p = reinterpret_cast<unsigned char*>(buf.get() + pos);
      bool fin = p[0] & 0x80;
      int opcode = p[0] & 0x0f;
      bool masked = p[1] & 0x80;
      std::uint64_t n = p[1] & 0x7f;
      std::size_t hl = 2;
      if (n == 126) {
        if (len - pos < 4)
          break;
        n = (std::uint64_t{p[2]} << 8) | p[3];
        hl = 4;
      } else if (n == 127) {
        if (len - pos < 10)
          break;
        n = 0;
        for (int i = 0; i < 8; ++i)
          n = (n << 8) | p[2 + i];
        hl = 10;
      }
      std::size_t mask_at = hl;
      if (masked)
        hl += 4;
      if (len - pos < hl + n) {
        // Incomplete: make sure the whole frame fits once it arrives.
        while (cap - read_padding - 4096 < hl + n) {
          auto ncap = cap * 2;
          std::unique_ptr<char[]> nb{new char[ncap]};
          std::memcpy(nb.get(), buf.get(), len);
          buf = std::move(nb);
          cap = ncap;
        }
        break;
      }
      char* payload = buf.get() + pos + hl;
      if (masked)
        for (std::uint64_t i = 0; i < n; ++i)
          payload[i] ^= static_cast<char>(p[mask_at + (i & 3)]);
      std::string_view body{payload, static_cast<std::size_t>(n)};
      pos += hl + n;
      switch (opcode) {
        case 0x1:
        case 0x2:
        case 0x0:
          if (fin && opcode != 0x0) {
            if (h.on_text)
              h.on_text(body);
          } else {
            fragments.append(body);
            if (fin) {
              fragments.reserve(fragments.size() + read_padding);
              std::string msg = std::move(fragments);
              fragments.clear();
              msg.reserve(msg.size() + read_padding);
              if (h.on_text)
                h.on_text(msg);
            }
          }
          break;
        case 0x8:
          fail("closed by peer (close frame)");
          break;
        case 0x9: { // ping -> pong with the same payload
          std::string pong;
          pong += static_cast<char>(0x8a);
          pong += static_cast<char>(0x80 | n);
          pong.append(4, '\0');
          pong.append(body);
          out += pong;
          break;
        }
        default:
          break; // pong
      }
    }
    dispatching = false;
    if (closed)
      return;
    std::memmove(buf.get(), buf.get() + pos, len - pos);
    len -= pos;
    flush();
    do_read();
  }

  void flush() {
    if (writing || closed || out.empty())
      return;
    writing = true;
    wbuf.swap(out);
    asio::async_write(socket, asio::buffer(wbuf),
                      [self = shared_from_this()](error_code ec, std::size_t) {
                        self->writing = false;
                        self->wbuf.clear();
                        if (ec)
                          return self->fail("write: " + ec.message());
                        if (self->out.empty() && self->h.on_drain) {
                          self->dispatching = true;
                          self->h.on_drain();
                          self->dispatching = false;
                        }
                        self->flush();
                      });
  }
};

ws_conn::ws_conn(std::shared_ptr<impl> p) : impl_(std::move(p)) {}

ws_conn::~ws_conn() {
  close();
}

std::shared_ptr<ws_conn> ws_conn::connect(loop& l, std::string host, std::uint16_t port,
                                          std::string path, handlers h,
                                          std::size_t read_buffer) {
  auto p = std::make_shared<impl>(l, std::move(h), read_buffer);
  p->host = std::move(host);
  p->path = path.empty() ? "/" : std::move(path);
  p->start(port);
  return std::make_shared<ws_conn>(std::move(p));
}

void ws_conn::send_parts(std::initializer_list<std::string_view> parts) {
  auto& d = *impl_;
  if (d.closed || !d.upgraded) // callers send from on_open on
    return;
  append_client_frame(d.out, parts);
  if (!d.dispatching)
    d.flush();
}

std::size_t ws_conn::backlog() const {
  return impl_->out.size() + impl_->wbuf.size();
}

bool ws_conn::is_open() const {
  return !impl_->closed && impl_->upgraded;
}

void ws_conn::close() {
  if (impl_ && !impl_->closed) {
    impl_->closed = true;
    error_code ignored;
    impl_->socket.close(ignored);
  }
}

} // namespace bench
