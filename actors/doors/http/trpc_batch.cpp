#include "actors/doors/http/trpc_batch.hpp"

#include <set>

namespace actor_host::trpc {

namespace {

/// The answer of one procedure of a batch. Queries answer with respond();
/// a stream has no place in a batch and counts as an internal error.
class part_responder final : public net::http_responder {
public:
  part_responder(std::shared_ptr<batch> b, std::size_t i) : batch_(std::move(b)), index_(i) {
  }
  void respond(int status, std::string, std::string body, net::http_headers) override {
    batch_->answered(index_, status, std::move(body));
  }
  void start_stream(int, std::string, net::http_headers) override {
    batch_->answered(index_, 500,
                     R"({"error":{"message":"a streamed answer cannot be batched","code":-32603,)"
                     R"("data":{"code":"INTERNAL_SERVER_ERROR","httpStatus":500}}})");
  }
  void write(std::string) override {
  }
  void finish() override {
  }
  void on_abort(std::function<void()> fn) override {
    batch_->add_abort(std::move(fn));
  }

private:
  std::shared_ptr<batch> batch_;
  std::size_t index_;
};

} // namespace


std::vector<std::string> batch_names(std::string_view tail) {
  std::vector<std::string> out;
  while (true) {
    auto comma = tail.find(',');
    auto name = tail.substr(0, comma);
    if (name.empty() || out.size() == max_batch_size)
      return {};
    out.emplace_back(name);
    if (comma == std::string_view::npos)
      return out;
    tail.remove_prefix(comma + 1);
  }
}

batch::batch(net::http_responder_ptr res, std::size_t n)
  : res_(std::move(res)), parts_(n), left_(n) {
}

std::shared_ptr<batch> batch::make(net::http_responder_ptr res, std::size_t n) {
  std::shared_ptr<batch> b{new batch(res, n)};
  res->on_abort([weak = std::weak_ptr<batch>{b}] {
    if (auto self = weak.lock())
      self->aborted();
  });
  return b;
}

net::http_responder_ptr batch::part(std::size_t i) {
  // The parts hold the batch; the batch holds no part (no cycle).
  return std::make_shared<part_responder>(shared_from_this(), i);
}

void batch::answered(std::size_t i, int status, std::string body) {
  net::http_responder_ptr res;
  std::string out;
  int code = 200;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    auto& slot = parts_.at(i);
    if (slot || gone_)
      return; // one answer per part
    slot.emplace(status, std::move(body));
    if (--left_ != 0)
      return;
    std::set<int> statuses;
    out = "[";
    for (auto& p : parts_) {
      statuses.insert(p->first < 300 ? 200 : p->first);
      out += (out.size() > 1 ? "," : "") + p->second;
    }
    out += "]";
    code = statuses.size() == 1 ? *statuses.begin() : 207;
    res = std::move(res_);
    aborts_.clear();
  }
  res->respond(code, "application/json", std::move(out));
}

void batch::add_abort(std::function<void()> fn) {
  std::lock_guard<std::mutex> guard{mtx_};
  if (!gone_ && left_ != 0)
    aborts_.push_back(std::move(fn));
}

void batch::aborted() {
  std::vector<std::function<void()>> fns;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    gone_ = true;
    res_ = nullptr;
    fns.swap(aborts_);
  }
  for (auto& f : fns)
    f();
}

} // namespace actor_host::trpc
