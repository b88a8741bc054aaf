#include "net/http_client.hpp"

#include "net/detail/beast_names.hpp"
#include "wire/url.hpp"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <array>

namespace actor_host::net {

std::string_view http_answer_head::field(std::string_view name) const {
  for (auto& [k, v] : fields)
    if (beast::iequals(k, name))
      return v;
  return {};
}

namespace {

// Heads of local Genkit runtimes are a few hundred bytes.
constexpr std::uint32_t max_head_bytes = 16 * 1024;

class fetcher : public http_exchange, public std::enable_shared_from_this<fetcher> {
public:
  fetcher(const asio::any_io_executor& ex, wire::parsed_url url, http_request_spec spec,
          http_handlers handlers)
    : resolver_(ex), stream_(ex), url_(std::move(url)), spec_(std::move(spec)),
      handlers_(std::move(handlers)) {
    req_.method(spec_.post ? http::verb::post : http::verb::get);
    req_.target(url_.target);
    req_.version(11);
    req_.set(http::field::host, wire::host_header(url_));
    req_.set(http::field::user_agent, "actor-host");
    if (spec_.hops > 0)
      req_.set(hops_header, std::to_string(spec_.hops));
    if (spec_.post) {
      req_.set(http::field::content_type, spec_.content_type);
      req_.body() = std::move(spec_.body);
    }
    req_.prepare_payload();
    parser_.header_limit(max_head_bytes);
    if (spec_.max_body_bytes > 0)
      parser_.body_limit(spec_.max_body_bytes);
    else
      parser_.body_limit(boost::none);
  }

  void run() {
    stream_.expires_after(spec_.timeout.count() > 0 ? spec_.timeout : spec_.connect_timeout);
    resolver_.async_resolve(url_.host, url_.port,
                            beast::bind_front_handler(&fetcher::on_resolve, shared_from_this()));
  }

  void cancel() override {
    asio::dispatch(stream_.get_executor(), [self = shared_from_this()] {
      if (std::exchange(self->done_, true))
        return;
      self->resolver_.cancel();
      error_code ignored;
      self->stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
      self->stream_.close();
    });
  }

  void pause_reading() override {
    paused_ = true;
  }

  void resume_reading() override {
    paused_ = false;
    if (std::exchange(read_waits_, false))
      read_body();
  }

private:
  void finish(std::string why) {
    if (std::exchange(done_, true))
      return;
    error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
    if (handlers_.on_end)
      handlers_.on_end({std::move(why), reached_});
  }

  void fail(const char* what, error_code ec) {
    if (ec == http::error::body_limit)
      return finish("the answer of " + wire::host_header(url_) + " is over "
                    + std::to_string(spec_.max_body_bytes) + " bytes");
    finish(std::string{what} + " " + wire::host_header(url_) + ": " + ec.message());
  }

  void on_resolve(error_code ec, tcp::resolver::results_type results) {
    if (done_)
      return;
    if (ec)
      return fail("cannot resolve", ec);
    stream_.async_connect(results,
                          beast::bind_front_handler(&fetcher::on_connect, shared_from_this()));
  }

  void on_connect(error_code ec, tcp::endpoint) {
    if (done_)
      return;
    if (ec)
      return fail("cannot connect to", ec);
    reached_ = true;
    if (spec_.timeout.count() == 0)
      stream_.expires_never();
    http::async_write(stream_, req_,
                      beast::bind_front_handler(&fetcher::on_write, shared_from_this()));
  }

  void on_write(error_code ec, std::size_t) {
    if (done_)
      return;
    if (ec)
      return fail("cannot send to", ec);
    http::async_read_header(stream_, buffer_, parser_,
                            beast::bind_front_handler(&fetcher::on_head, shared_from_this()));
  }

  void on_head(error_code ec, std::size_t) {
    if (done_)
      return;
    if (ec)
      return fail("no answer from", ec);
    http_answer_head head;
    head.status = static_cast<int>(parser_.get().result_int());
    for (auto& f : parser_.get().base())
      head.fields.emplace_back(std::string{f.name_string()}, std::string{f.value()});
    if (handlers_.on_head)
      handlers_.on_head(std::move(head));
    read_body();
  }

  // One read at a time, handed on as it arrives: a stream's chunks must not
  // wait for a buffer to fill.
  void read_body() {
    if (done_)
      return;
    if (paused_) {
      read_waits_ = true;
      return;
    }
    if (parser_.is_done())
      return finish({});
    parser_.get().body().data = chunk_.data();
    parser_.get().body().size = chunk_.size();
    parser_.get().body().more = true;
    http::async_read_some(stream_, buffer_, parser_,
                          beast::bind_front_handler(&fetcher::on_body, shared_from_this()));
  }

  void on_body(error_code ec, std::size_t) {
    if (done_)
      return;
    if (ec == http::error::need_buffer)
      ec = {};
    if (ec)
      return fail("reading the answer of", ec);
    auto got = chunk_.size() - parser_.get().body().size;
    if (got > 0 && handlers_.on_data)
      handlers_.on_data(std::string_view{chunk_.data(), got});
    read_body();
  }

  tcp::resolver resolver_;
  beast::tcp_stream stream_;
  wire::parsed_url url_;
  http_request_spec spec_;
  http_handlers handlers_;
  http::request<http::string_body> req_;
  http::response_parser<http::buffer_body> parser_;
  beast::flat_buffer buffer_;
  std::array<char, 16 * 1024> chunk_{};
  bool done_ = false;
  bool reached_ = false;
  bool paused_ = false;
  bool read_waits_ = false; // a read is due once resumed
};

class failed_exchange : public http_exchange {
public:
  void cancel() override {
  }
  void pause_reading() override {
  }
  void resume_reading() override {
  }
};

} // namespace

std::shared_ptr<http_exchange> http_fetch(const asio::any_io_executor& executor,
                                          http_request_spec spec, http_handlers handlers) {
  auto parsed = wire::parse_url(spec.url);
  if (!parsed || parsed->scheme != "http") {
    asio::post(executor, [on_end = std::move(handlers.on_end), url = spec.url] {
      if (on_end)
        on_end({"unsupported URL '" + url + "' (expected http://host:port/path)", false});
    });
    return std::make_shared<failed_exchange>();
  }
  auto f = std::make_shared<fetcher>(executor, std::move(*parsed), std::move(spec),
                                     std::move(handlers));
  f->run();
  return f;
}

} // namespace actor_host::net
