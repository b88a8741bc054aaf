#pragma once

// Internal to net/: a gather write tried at once on a non-blocking socket.

#include "net/detail/beast_names.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_suffix.hpp>

#include <cstddef>
#include <utility>
#include <vector>

namespace actor_host::net::detail {

/// asio's async_write tries the send at once too, but even when the socket
/// takes every byte it posts the completion: one more handler, and one more
/// `epoll_wait` of asio's reactor before it runs. A response or a batch of
/// frames almost always fits the socket's buffer, so the send is made here
/// and `done(ec)` runs inline when it took everything (or failed); only
/// the rest of a partial write waits in async_write. `sock` must be in
/// non-blocking mode. On the socket's strand, like any write.
template <class Socket, class Done>
void write_now(Socket& sock, const std::vector<asio::const_buffer>& bufs, Done&& done) {
  error_code ec;
  const std::size_t total = asio::buffer_size(bufs);
  const std::size_t n = sock.write_some(bufs, ec);
  if (!ec && n == total)
    return done(error_code{});
  if (ec && ec != asio::error::would_block && ec != asio::error::try_again)
    return done(ec);
  // The rest, from where the socket stopped (a copy of the small buffer
  // list, on this rare path only).
  beast::buffers_suffix<std::vector<asio::const_buffer>> rest{bufs};
  rest.consume(n);
  asio::async_write(sock, rest,
                    [d = std::forward<Done>(done)](error_code e, std::size_t) mutable { d(e); });
}

} // namespace actor_host::net::detail
