#include "net/http_post.hpp"

#include "net/http_client.hpp"
#include "net/io_runtime.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>

namespace actor_host::net {

void http_post(io_runtime& io, const std::string& url, std::string body,
               std::string content_type, std::chrono::milliseconds timeout,
               std::function<void(post_outcome)> done) {
  http_request_spec spec;
  spec.post = true;
  spec.url = url;
  spec.body = std::move(body);
  spec.content_type = std::move(content_type);
  spec.timeout = timeout;
  spec.max_body_bytes = 64 * 1024; // read and dropped
  auto status = std::make_shared<int>(0);
  http_handlers h;
  h.on_head = [status](http_answer_head head) { *status = head.status; };
  h.on_end = [status, done = std::move(done)](http_end end) {
    // A status that arrived counts even when the body then failed.
    done({*status, *status ? std::string{} : std::move(end.error)});
  };
  http_fetch(boost::asio::make_strand(io.context()), std::move(spec), std::move(h));
}

} // namespace actor_host::net
