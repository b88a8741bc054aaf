#pragma once

#include "net/http_exchange.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace actor_host::trpc {

/// Most procedures one batched request may name (tRPC's maxBatchSize).
inline constexpr std::size_t max_batch_size = 32;

/// The procedure names of a batch path ("listActions,getTrace"); empty when
/// one is empty or there are more than max_batch_size.
std::vector<std::string> batch_names(std::string_view path_tail);

/// One batched tRPC request (`?batch=1`, httpBatchLink): each procedure is
/// served as if alone, into its own responder (part(i)); when every part
/// has answered, the answers go out as one JSON array in request order, with
/// tRPC's status (the parts' one if they agree, else 207). The client
/// leaving aborts every part. Parts may answer from any thread.
class batch : public std::enable_shared_from_this<batch> {
public:
  static std::shared_ptr<batch> make(net::http_responder_ptr res, std::size_t n);
  net::http_responder_ptr part(std::size_t i);

  // For the parts:
  void answered(std::size_t i, int status, std::string body);
  void add_abort(std::function<void()> fn);

private:
  batch(net::http_responder_ptr res, std::size_t n);
  void aborted();

  std::mutex mtx_;
  net::http_responder_ptr res_; // null once answered or the client left
  std::vector<std::optional<std::pair<int, std::string>>> parts_;
  std::size_t left_;
  bool gone_ = false; // the client left: nothing is sent
  std::vector<std::function<void()>> aborts_;
};

} // namespace actor_host::trpc
