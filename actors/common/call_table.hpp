#pragma once

#include "actors/common/deadline_queue.hpp"
#include "actors/common/messages.hpp"

#include <caf/actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>

#include <boost/unordered/unordered_flat_map.hpp>

#include <charconv>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <variant>
#include <vector>

namespace actor_host {

// Lets a table keyed by wire id be searched with a view into a frame (no
// key copy).
struct wire_id_hash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept {
    return std::hash<std::string_view>{}(s);
  }
};

/// The number in `s` if it is a wire id as a runtime connection writes its
/// own (a quoted decimal without leading zeros: "\"7\""); nothing otherwise,
/// so no other text finds a call keyed by number.
inline std::optional<std::uint64_t> quoted_decimal(std::string_view s) {
  if (s.size() < 3 || s.front() != '"' || s.back() != '"')
    return std::nullopt;
  auto digits = s.substr(1, s.size() - 2);
  if (digits.size() > 1 && digits.front() == '0')
    return std::nullopt;
  std::uint64_t n = 0;
  auto end = digits.data() + digits.size();
  auto [p, ec] = std::from_chars(digits.data(), end, n);
  if (ec != std::errc{} || p != end)
    return std::nullopt;
  return n;
}

/// How a call table finds a key in the id text of a frame.
template <class Key>
struct call_key;

template <>
struct call_key<std::string> {
  template <class Value>
  using map = std::unordered_map<std::string, Value, wire_id_hash, std::equal_to<>>;
  static std::optional<std::string_view> of(std::string_view id) {
    return id;
  }
};

// Numbers in a flat table: no node per call (a node and its bucket were
// 40 bytes of heap a call; a slot here is 24 at a load of 0.4 to 0.875).
template <>
struct call_key<std::uint64_t> {
  template <class Value>
  using map = boost::unordered_flat_map<std::uint64_t, Value>;
  static std::optional<std::uint64_t> of(std::string_view id) {
    return quoted_decimal(id);
  }
};

/// The calls a connection has in flight, by the id on its socket: the
/// actor that owns each one, and their deadlines, kept here with
/// one wake-up for the earliest (deadline_queue.hpp says why not one delayed
/// message per call). Both kinds of manager connection (Genkit runtimes'
/// pending requests, iii workers' invocations) keep their calls in one;
/// `Handle` is the calls' actor type, so what a connection sends them is
/// checked against their interface. `Key`: the ids as the table keeps them,
/// the text (an iii worker's invocation ids) or the number a runtime
/// connection writes quoted (~100 bytes less per call in flight); either way
/// the table is searched with the id's text as a frame has it.
/// `Extra` is kept beside each call for its owner (the runtime connection
/// keeps the call's caller there); no bytes when it is the default.
template <class Handle, class Key = std::string, class Extra = std::monostate>
class basic_call_table {
public:
  using key_type = Key;
  using time_point = typename basic_deadline_queue<Key>::time_point;

  basic_call_table() = default;
  basic_call_table(const basic_call_table&) = delete;
  basic_call_table& operator=(const basic_call_table&) = delete;

  /// The calls still here when their connection ends (a kill, the
  /// shutdown) end with it: the table lives in the connection's state,
  /// which CAF destroys when the actor terminates. Not links: CAF 0.17 keeps
  /// an actor's links in a list it searches linearly, so one link per call
  /// made every call's end cost O(calls in flight) on the connection
  /// (bench/ANALYSIS.md, Scale: 91 % of the manager's CPU with 30,000
  /// calls in flight). A call that fails on its own stays here until its
  /// answer arrives or the connection ends; it has told its caller.
  ~basic_call_table() {
    for (auto& [id, e] : calls_)
      caf::anon_send_exit(e.call, caf::exit_reason::user_shutdown);
  }

  /// Adds a call. True if the owner must arm a wake-up at `deadline`.
  bool add(Key id, Handle call, std::optional<time_point> deadline, Extra extra = {}) {
    auto at = deadline ? *deadline : none;
    if (auto i = calls_.find(id); i != calls_.end()) {
      // The same id again (a worker's): its old deadline goes stale, unless
      // it is the same one, which stays queued.
      auto old = i->second.deadline;
      i->second = entry{std::move(call), at, std::move(extra)};
      if (old == at)
        return false;
      if (old != none)
        --timed_;
    } else {
      calls_.emplace(id, entry{std::move(call), at, std::move(extra)});
    }
    if (at == none)
      return false;
    ++timed_;
    return deadlines_.add(std::move(id), at);
  }

  /// The actor of call `id`, null if there is none. Valid until the table
  /// changes.
  const Handle* find(std::string_view id) const {
    auto key = call_key<Key>::of(id);
    if (!key)
      return nullptr;
    auto i = calls_.find(*key);
    return i == calls_.end() ? nullptr : &i->second.call;
  }

  /// Removes call `id` and returns its actor (null if it was not here),
  /// its Extra into `*extra` if given.
  Handle take(std::string_view id, Extra* extra = nullptr) {
    auto key = call_key<Key>::of(id);
    if (!key)
      return Handle{};
    auto i = calls_.find(*key);
    if (i == calls_.end())
      return Handle{};
    auto call = std::move(i->second.call);
    if (extra != nullptr)
      *extra = std::move(i->second.extra);
    if (i->second.deadline != none)
      --timed_;
    calls_.erase(i);
    compact();
    return call;
  }

  /// Removes every call and returns their actors.
  std::vector<Handle> take_all() {
    std::vector<Handle> all;
    all.reserve(calls_.size());
    for (auto& [id, e] : calls_)
      all.push_back(std::move(e.call));
    calls_ = {};
    timed_ = 0;
    deadlines_.clear();
    return all;
  }

  /// The calls whose deadline passed at `now`; they stay in the table until
  /// they end (each answers its caller, then tells its owner to forget it).
  std::vector<Handle> due(time_point now) {
    std::vector<Handle> out;
    for (auto& id : deadlines_.take_due(now, holds()))
      if (auto i = calls_.find(id); i != calls_.end()) {
        i->second.deadline = none;
        --timed_;
        out.push_back(i->second.call);
      }
    return out;
  }

  /// The next wake-up to arm after `due`, if one is needed.
  std::optional<time_point> rearm() { return deadlines_.rearm(holds()); }

  /// Calls `f(actor)` for each call.
  template <class F>
  void for_each(F&& f) const {
    for (auto& [id, e] : calls_)
      f(e.call);
  }

  /// Calls `f(actor, extra)` for each call.
  template <class F>
  void for_each_with_extra(F&& f) const {
    for (auto& [id, e] : calls_)
      f(e.call, e.extra);
  }

  std::size_t size() const noexcept { return calls_.size(); }
  bool empty() const noexcept { return calls_.empty(); }
  /// Calls whose deadline is still ahead.
  std::size_t deadlines() const noexcept { return timed_; }

private:
  // A call's deadline beside its actor; `none` for no deadline, or one
  // that passed.
  static constexpr time_point none = time_point::max();
  struct entry {
    Handle call;
    time_point deadline;
    [[no_unique_address]] Extra extra;
  };

  // Whether a queued deadline is still the call's.
  auto holds() const {
    return [this](const Key& id, time_point at) {
      auto i = calls_.find(id);
      return i != calls_.end() && i->second.deadline == at;
    };
  }

  void compact() {
    deadlines_.compact(timed_, [this](auto&& put) {
      for (auto& [id, e] : calls_)
        if (e.deadline != none)
          put(id, e.deadline);
    });
  }

  typename call_key<Key>::template map<entry> calls_;
  basic_deadline_queue<Key> deadlines_;
  std::size_t timed_ = 0;
};

/// Adds `call` to `State::*table` and arms a wake-up ((expired_atom) to
/// `self`) when its deadline is the earliest; no deadline for timeout 0.
template <class State, class Base, class Handle, class Key, class Extra>
void add_call(caf::stateful_actor<State, Base>* self,
              basic_call_table<Handle, Key, Extra> State::*table, std::type_identity_t<Key> id,
              Handle call, caf::timespan timeout, std::type_identity_t<Extra> extra = {}) {
  std::optional<typename basic_deadline_queue<Key>::time_point> deadline;
  if (timeout.count() > 0)
    deadline = self->clock().now() + timeout;
  if ((self->state.*table).add(std::move(id), std::move(call), deadline, std::move(extra)))
    self->delayed_send(self, timeout, expired_atom_v);
}

/// The (expired_atom) handler's work: every call past its deadline gets
/// (expired_atom), and the next wake-up is armed.
template <class State, class Base, class Table>
void expire_due_calls(caf::stateful_actor<State, Base>* self, Table State::*table) {
  auto& calls = self->state.*table;
  auto now = self->clock().now();
  for (auto& call : calls.due(now))
    self->send(call, expired_atom_v);
  if (auto next = calls.rearm())
    self->delayed_send(self, *next - now, expired_atom_v);
}

} // namespace actor_host
