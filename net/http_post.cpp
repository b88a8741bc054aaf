#include "net/http_post.hpp"

#include "net/detail/beast_names.hpp"
#include "net/io_runtime.hpp"
#include "net/url.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace actor_host::net {

namespace {

constexpr std::size_t max_answer_bytes = 64 * 1024;

class poster : public std::enable_shared_from_this<poster> {
public:
  poster(asio::io_context& ioc, parsed_url url, std::string body, std::string content_type,
         std::chrono::milliseconds timeout, std::function<void(post_outcome)> done)
    : resolver_(asio::make_strand(ioc)), stream_(resolver_.get_executor()), url_(std::move(url)),
      timeout_(timeout), done_(std::move(done)) {
    req_.method(http::verb::post);
    req_.target(url_.target);
    req_.version(11);
    req_.set(http::field::host, host_header(url_));
    req_.set(http::field::content_type, content_type);
    req_.set(http::field::user_agent, "actor-host");
    req_.body() = std::move(body);
    req_.prepare_payload();
    res_.body_limit(max_answer_bytes);
  }

  void run() {
    stream_.expires_after(timeout_);
    resolver_.async_resolve(url_.host, url_.port,
                            beast::bind_front_handler(&poster::on_resolve, shared_from_this()));
  }

private:
  void fail(const std::string& what, error_code ec) {
    done_({0, what + " " + host_header(url_) + ": " + ec.message()});
  }

  void on_resolve(error_code ec, tcp::resolver::results_type results) {
    if (ec)
      return fail("cannot resolve", ec);
    stream_.async_connect(results,
                          beast::bind_front_handler(&poster::on_connect, shared_from_this()));
  }

  void on_connect(error_code ec, tcp::endpoint) {
    if (ec)
      return fail("cannot connect to", ec);
    http::async_write(stream_, req_,
                      beast::bind_front_handler(&poster::on_write, shared_from_this()));
  }

  void on_write(error_code ec, std::size_t) {
    if (ec)
      return fail("cannot send to", ec);
    http::async_read(stream_, buffer_, res_,
                     beast::bind_front_handler(&poster::on_read, shared_from_this()));
  }

  void on_read(error_code ec, std::size_t) {
    if (ec)
      return fail("no answer from", ec);
    done_({static_cast<int>(res_.get().result_int()), {}});
    error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
  }

  tcp::resolver resolver_;
  beast::tcp_stream stream_;
  parsed_url url_;
  std::chrono::milliseconds timeout_;
  std::function<void(post_outcome)> done_;
  http::request<http::string_body> req_;
  http::response_parser<http::string_body> res_;
  beast::flat_buffer buffer_;
};

} // namespace

void http_post(io_runtime& io, const std::string& url, std::string body,
               std::string content_type, std::chrono::milliseconds timeout,
               std::function<void(post_outcome)> done) {
  auto parsed = parse_url(url);
  if (!parsed || parsed->scheme != "http") {
    asio::post(io.context(), [done = std::move(done), url] {
      done({0, "unsupported URL '" + url + "' (expected http://host:port/path)"});
    });
    return;
  }
  std::make_shared<poster>(io.context(), std::move(*parsed), std::move(body),
                           std::move(content_type), timeout, std::move(done))
    ->run();
}

} // namespace actor_host::net
