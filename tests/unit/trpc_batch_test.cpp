#define CAF_SUITE trpc_batch

#include <caf/test/unit_test.hpp>

#include "actors/doors/http/trpc_batch.hpp"
#include "fake_responder.hpp"

// A batched tRPC request: its names, one answer per part in request order,
// tRPC's status for the whole, and the client leaving.

using namespace actor_host;
using actor_host::testing::fake_responder;

namespace {

std::string ok(int n) {
  return R"({"result":{"data":)" + std::to_string(n) + "}}";
}

} // namespace

CAF_TEST(batch names are split at commas and capped) {
  CAF_CHECK_EQUAL(trpc::batch_names("a,b,c"), (std::vector<std::string>{"a", "b", "c"}));
  CAF_CHECK_EQUAL(trpc::batch_names("one"), (std::vector<std::string>{"one"}));
  for (auto bad : {"", ",", "a,", ",a", "a,,b"})
    CAF_CHECK(trpc::batch_names(bad).empty());
  std::string many = "p";
  for (std::size_t i = 1; i < trpc::max_batch_size; ++i)
    many += ",p";
  CAF_CHECK_EQUAL(trpc::batch_names(many).size(), trpc::max_batch_size);
  CAF_CHECK(trpc::batch_names(many + ",p").empty());
}

CAF_TEST(answers go out once all parts answered and in request order) {
  auto res = std::make_shared<fake_responder>();
  auto b = trpc::batch::make(res, 3);
  auto p0 = b->part(0), p1 = b->part(1), p2 = b->part(2);
  p2->respond(200, "application/json", ok(2), {});
  p0->respond(200, "application/json", ok(0), {});
  CAF_CHECK_EQUAL(res->answers, 0);
  p0->respond(200, "application/json", ok(9), {}); // a second answer of a part is dropped
  p1->respond(200, "application/json", ok(1), {});
  CAF_CHECK_EQUAL(res->answers, 1);
  CAF_CHECK_EQUAL(res->status, 200);
  CAF_CHECK_EQUAL(res->body, "[" + ok(0) + "," + ok(1) + "," + ok(2) + "]");
}

CAF_TEST(the status is the parts one when they agree and 207 when not) {
  auto err = [](int status) {
    return R"({"error":{"message":"m","code":-32600,"data":{"code":"X","httpStatus":)"
           + std::to_string(status) + "}}}";
  };
  auto run = [&](std::vector<int> statuses) {
    auto res = std::make_shared<fake_responder>();
    auto b = trpc::batch::make(res, statuses.size());
    for (std::size_t i = 0; i < statuses.size(); ++i)
      b->part(i)->respond(statuses[i], "application/json",
                          statuses[i] < 300 ? ok(0) : err(statuses[i]), {});
    return res->status;
  };
  CAF_CHECK_EQUAL(run({200, 200}), 200);
  CAF_CHECK_EQUAL(run({400, 400}), 400);
  CAF_CHECK_EQUAL(run({200, 404}), 207);
  CAF_CHECK_EQUAL(run({400, 404}), 207);
}

CAF_TEST(the client leaving aborts every part and nothing is sent) {
  auto res = std::make_shared<fake_responder>();
  auto b = trpc::batch::make(res, 2);
  int aborted = 0;
  auto p0 = b->part(0), p1 = b->part(1);
  p0->on_abort([&] { ++aborted; });
  p1->on_abort([&] { ++aborted; });
  p0->respond(200, "application/json", ok(0), {});
  CAF_REQUIRE(res->abort != nullptr);
  res->abort();
  CAF_CHECK_EQUAL(aborted, 2);
  p1->respond(200, "application/json", ok(1), {});
  CAF_CHECK_EQUAL(res->answers, 0);
}

CAF_TEST(a streamed answer cannot be part of a batch) {
  auto res = std::make_shared<fake_responder>();
  auto b = trpc::batch::make(res, 1);
  b->part(0)->start_stream(200, "application/x-ndjson", {});
  CAF_CHECK_EQUAL(res->status, 500);
  CAF_CHECK(res->body.find("cannot be batched") != std::string::npos);
}
