#pragma once

// Private to net/: the server side of a plain (not TLS) WebSocket after Beast
// has read the upgrade request, frames read and written on the socket itself
// (lean_ws_session.cpp: the handshake's answer, reading, writing;
// lean_ws_closing.cpp: the close handshake, probes and the keep-alive timer).

#include "net/detail/message_reader.hpp"
#include "net/detail/ws_frame_reader.hpp"
#include "net/detail/ws_session.hpp"
#include "net/detail/ws_writer.hpp"
#include "net/liveness.hpp"

#include <boost/asio/basic_waitable_timer.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace actor_host::net::detail {

class lean_ws_session : public transport,
                        public pingable,
                        public detail::ws_frame_sink,
                        public detail::ws_writer<lean_ws_session>,
                        public std::enable_shared_from_this<lean_ws_session> {
  friend class detail::ws_writer<lean_ws_session>;

  using tcp = boost::asio::ip::tcp;
  using error_code = boost::system::error_code;
  using socket_type = flex_stream::socket_type;
  using timer_type = boost::asio::basic_waitable_timer<
    std::chrono::steady_clock, boost::asio::wait_traits<std::chrono::steady_clock>, io_strand>;

public:
  static constexpr std::uint8_t op_close = 0x8;
  static constexpr std::uint8_t op_ping = 0x9;
  static constexpr std::uint8_t op_pong = 0xA;
  // One wake-up reads at most this many times this much, then lets the
  // other connections of the I/O thread have their turn.
  static constexpr std::size_t scratch_bytes = 64 * 1024;
  static constexpr int reads_per_wakeup = 4;
  // How long our close frame waits for the peer's (Beast's handshake timeout).
  static constexpr std::chrono::seconds close_timeout{30};
  // Pongs that may wait unwritten at once; pings past them go unanswered.
  static constexpr int max_pongs_queued = 8;

  lean_ws_session(socket_type&& s, connection_slot slot, ws_limits limits,
                  std::shared_ptr<socket_counters> counters, std::string peer)
    : ws_writer(limits.max_write_queue_bytes, std::move(counters)), sock_(std::move(s)),
      strand_(sock_.get_executor()), timer_(strand_), slot_(std::move(slot)), limits_(limits),
      peer_(std::move(peer)), messages_(limits.max_frame_bytes) {
    ++counters_->websockets;
  }

  ~lean_ws_session() override {
    --counters_->websockets;
  }

  void accept(const http_request_message& req, upgrade_request up, session_factory factory,
              bool keep_upgrade);

  // -- transport ---------------------------------------------------------------

  void send_text(std::string frame) override {
    enqueue(out_frame{std::move(frame), false});
  }

  void send_binary(std::string frame) override {
    enqueue(out_frame{std::move(frame), true});
  }

  // dispatch: called by a handler inside a read, the pause holds before the
  // next frame is handed on. A closing session keeps reading: its reads
  // report the end.
  void pause_reading() override;

  void resume_reading() override;

  void close(std::uint16_t code, std::string reason) override;

  void drop() override;

  const std::string& peer() const override {
    return peer_;
  }

  const upgrade_request& upgrade() const override {
    static const upgrade_request none;
    return upgrade_ ? *upgrade_ : none;
  }

  // -- pingable ----------------------------------------------------------------

  // One probe in flight at a time; callers that come meanwhile share its pong.
  void ping(std::function<void()> on_pong) override;

  // -- ws_frame_sink: what a read finds ------------------------------------------

  bool on_data(std::string_view piece, bool text, bool last) override;

  bool on_control(std::uint8_t opcode, std::string_view payload) override;

private:
  void on_accepted(error_code ec, bool ok, const session_factory& factory);

  // -- reading -----------------------------------------------------------------

  // Whether the read goes on to the next frame.
  bool reading() const {
    return !read_paused_ && !peer_closed_ && !ended_ && reader_.failed() == 0;
  }

  void do_wait();

  void on_readable(error_code ec);

  // Hands on the frames in `p`; false when reading stops here: paused (the
  // rest is kept for resume_reading), or the connection ends.
  bool take(char* p, std::size_t n);

  // Closing or resumed: reading goes on, with what a pause held first.
  void unpark();

  // -- writing -----------------------------------------------------------------

  bool write_stopped() const {
    return ended_ || closing_;
  }

  void drop_socket() {
    shut();
  }

  void send_control(std::uint8_t opcode, std::string_view payload);

  void do_write();

  void on_write(error_code ec);

  // -- closing -----------------------------------------------------------------

  void on_close_request(std::uint16_t code, std::string reason);

  void send_close();

  void push_close(std::string payload);

  // The peer broke the protocol: our close frame with `code`, then the
  // socket goes without waiting for the peer's (§7.1.7).
  void fail(std::uint16_t code, const char* what);

  // The socket goes; the wait outstanding (or the next) reports the end.
  void shut();

  // The handler learns the end once; the session goes with the last handler
  // holding it.
  void end(std::string reason);

  // -- the timer: keep-alive pings while open, the close handshake's limit --------

  void arm_timer(std::chrono::steady_clock::duration d);

  // Silent for half the idle timeout: a ping; for the whole: gone (Beast's
  // keep-alive pings, which every Reflection V2 peer answers).
  void on_timer();

  socket_type sock_;
  const io_strand strand_;
  timer_type timer_;
  connection_slot slot_;
  ws_limits limits_;
  std::string peer_;
  std::unique_ptr<upgrade_request> upgrade_;
  bool keep_upgrade_ = true;
  frame_handler_ptr handler_;
  detail::ws_frame_reader reader_;
  detail::message_reader messages_;
  std::string held_;            // read while paused, handed on at resume
  // Strand only from here on.
  std::uint16_t close_code_ = 1000;
  std::string close_text_;
  std::uint16_t peer_code_ = 0;
  std::string peer_reason_;
  std::uint16_t failed_code_ = 0;
  const char* failure_ = "";
  bool waiting_ = false;
  bool read_paused_ = false;
  bool read_parked_ = false; // paused with no wait outstanding
  bool heard_ = false;       // bytes came since the timer's last look
  bool idle_pinged_ = false;
  bool closing_ = false;
  bool close_sent_ = false;
  bool peer_closed_ = false;
  bool shut_ = false;
  bool ended_ = false;
  bool probing_ = false;
  int pongs_queued_ = 0; // since the queue last drained
  static constexpr std::string_view probe_payload = "actor-host-probe";
  std::vector<std::function<void()>> pong_waiters_;
};

} // namespace actor_host::net::detail
