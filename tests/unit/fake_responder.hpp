#pragma once

#include "net/http_exchange.hpp"

#include <functional>
#include <memory>
#include <mutex>
#include <string>

namespace actor_host::testing {

/// An HTTP response as a handler wrote it: thread-safe, as the real one is.
struct fake_responder : net::http_responder {
  std::mutex mtx;
  int status = 0;
  std::string content_type;
  net::http_headers headers;
  std::string body;
  bool streaming = false;
  bool finished = false;
  int answers = 0; // respond() + start_stream(): must end at most 1
  std::function<void()> abort;

  void respond(int s, std::string type, std::string b, net::http_headers extra) override {
    std::lock_guard<std::mutex> g{mtx};
    ++answers;
    status = s;
    content_type = std::move(type);
    body = std::move(b);
    headers = std::move(extra);
    finished = true;
  }
  void start_stream(int s, std::string type, net::http_headers extra) override {
    std::lock_guard<std::mutex> g{mtx};
    ++answers;
    status = s;
    content_type = std::move(type);
    headers = std::move(extra);
    streaming = true;
  }
  void write(std::string data) override {
    std::lock_guard<std::mutex> g{mtx};
    body += data;
  }
  void finish() override {
    std::lock_guard<std::mutex> g{mtx};
    finished = true;
  }
  void on_abort(std::function<void()> fn) override {
    std::lock_guard<std::mutex> g{mtx};
    abort = std::move(fn);
  }
  std::string header(const std::string& name) {
    std::lock_guard<std::mutex> g{mtx};
    for (auto& [k, v] : headers)
      if (k == name)
        return v;
    return {};
  }
};

} // namespace actor_host::testing
