#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace actor_host::net {

/// A parsed HTTP request, detached from the socket.
struct http_request {
  std::string method;                       // "GET", "POST", ...
  std::string path;                         // target without the query
  std::map<std::string, std::string> query; // decoded query parameters
  std::map<std::string, std::string> headers; // lower-case names
  std::string body;
  std::string peer;

  const std::string* header(const std::string& lower_name) const {
    auto i = headers.find(lower_name);
    return i == headers.end() ? nullptr : &i->second;
  }
};

using http_headers = std::vector<std::pair<std::string, std::string>>;

/// The response side of one HTTP exchange. Thread-safe. Either `respond` once,
/// or `start_stream` once followed by any number of `write` and one `finish`.
class http_responder {
public:
  virtual ~http_responder() = default;

  virtual void respond(int status, std::string content_type, std::string body,
                       http_headers extra = {}) = 0;

  /// Sends the head of a chunked response.
  virtual void start_stream(int status, std::string content_type,
                            http_headers extra = {}) = 0;
  virtual void write(std::string data) = 0;
  virtual void finish() = 0;

  /// Called at most once, on the I/O strand, if the client goes away before
  /// the response is finished. Set it before the first write.
  virtual void on_abort(std::function<void()> fn) = 0;
};

using http_responder_ptr = std::shared_ptr<http_responder>;
using http_handler
  = std::function<void(http_request, http_responder_ptr)>;

} // namespace actor_host::net
