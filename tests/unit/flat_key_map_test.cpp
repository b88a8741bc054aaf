#define CAF_SUITE flat_key_map

#include "actors/tracing/flat_key_map.hpp"
#include "actors/tracing/trace_key.hpp"

#include <caf/test/unit_test.hpp>

#include <cstdio>
#include <map>
#include <random>

// The trace keeper's inline hash map: what it holds is what a std::map
// given the same operations holds, however the keys collide, and it holds
// no more than its cap.

using namespace actor_host;

namespace {

// A key whose hash the test chooses: many keys share a home slot.
struct test_key {
  int id = 0;
  std::size_t h = 0;
  std::size_t hash() const noexcept {
    return h;
  }
  bool operator==(const test_key& other) const noexcept {
    return id == other.id;
  }
};

test_key colliding(int id) {
  // Three home slots for every key, and neighbouring ones: long probe runs
  // that wrap around the end of the array.
  return {id, static_cast<std::size_t>(id % 3) + 61};
}

} // namespace

CAF_TEST(it refuses a new key once it holds its cap) {
  flat_key_map<test_key, int> m{4};
  for (int i = 0; i < 4; ++i)
    CAF_CHECK(m.try_emplace(colliding(i), i).second);
  auto [full, added] = m.try_emplace(colliding(4), 4);
  CAF_CHECK(full == nullptr);
  CAF_CHECK(!added);
  CAF_CHECK_EQUAL(m.size(), 4u);
  // A key it holds is still found, and given back as it is.
  auto [held, again] = m.try_emplace(colliding(2), 99);
  CAF_REQUIRE(held != nullptr);
  CAF_CHECK(!again);
  CAF_CHECK_EQUAL(*held, 2);
  CAF_CHECK(m.erase(colliding(0)));
  CAF_CHECK(m.try_emplace(colliding(4), 4).second);
  CAF_CHECK(m.find(colliding(0)) == nullptr);
}

CAF_TEST(it holds what a std map holds after the same inserts and erases) {
  flat_key_map<test_key, int> m{40};
  std::map<int, int> model;
  std::mt19937 rng{7};
  for (int step = 0; step < 20000; ++step) {
    int id = static_cast<int>(rng() % 60);
    if (rng() % 2) {
      auto [v, added] = m.try_emplace(colliding(id), step);
      auto full = model.size() == 40 && !model.count(id);
      if (full) {
        CAF_CHECK(v == nullptr);
      } else {
        CAF_REQUIRE(v != nullptr);
        CAF_CHECK_EQUAL(added, model.emplace(id, step).second);
        CAF_CHECK_EQUAL(*v, model.at(id));
      }
    } else {
      CAF_CHECK_EQUAL(m.erase(colliding(id)), model.erase(id) == 1);
    }
    CAF_REQUIRE_EQUAL(m.size(), model.size());
    if (step % 97 == 0)
      for (int k = 0; k < 60; ++k) {
        auto* v = m.find(colliding(k));
        auto i = model.find(k);
        CAF_REQUIRE_EQUAL(v != nullptr, i != model.end());
        if (v)
          CAF_CHECK_EQUAL(*v, i->second);
      }
  }
}

CAF_TEST(counted trace ids come and go as the keeper uses them) {
  // The fake runtime's ids: one prefix and a counter in the low digits.
  flat_key_map<trace_key, std::size_t> m{4096};
  auto id = [](int i) {
    char buf[33];
    std::snprintf(buf, sizeof buf, "00001650%024x", i);
    return trace_key{buf};
  };
  for (int i = 0; i < 100000; ++i) {
    CAF_REQUIRE(m.try_emplace(id(i), static_cast<std::size_t>(i)).second);
    if (i >= 4095)
      CAF_REQUIRE(m.erase(id(i - 4095)));
  }
  CAF_CHECK_EQUAL(m.size(), 4095u);
  CAF_CHECK(m.find(id(100000 - 4096)) == nullptr);
  auto* last = m.find(id(99999));
  CAF_REQUIRE(last != nullptr);
  CAF_CHECK_EQUAL(*last, 99999u);
  CAF_CHECK(m.find(trace_key{"not hex"}) == nullptr);
}
