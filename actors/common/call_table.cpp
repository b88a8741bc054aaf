#include "actors/common/call_table.hpp"

#include <algorithm>

namespace actor_host {

bool call_table::add(std::string id, caf::actor call, std::optional<time_point> deadline) {
  bool arm = deadline && deadlines_.add(id, *deadline);
  calls_.insert_or_assign(std::move(id), std::move(call));
  return arm;
}

const caf::actor* call_table::find(std::string_view id) const {
  auto i = calls_.find(id);
  return i == calls_.end() ? nullptr : &i->second;
}

caf::actor call_table::take(std::string_view id) {
  auto i = calls_.find(id);
  if (i == calls_.end())
    return nullptr;
  auto call = std::move(i->second);
  if (!deadlines_.empty())
    deadlines_.remove(i->first);
  calls_.erase(i);
  return call;
}

bool call_table::erase_actor(const caf::actor_addr& source) {
  auto i = std::find_if(calls_.begin(), calls_.end(),
                        [&](auto& kv) { return kv.second.address() == source; });
  if (i == calls_.end())
    return false;
  deadlines_.remove(i->first);
  calls_.erase(i);
  return true;
}

std::vector<caf::actor> call_table::take_all() {
  std::vector<caf::actor> all;
  all.reserve(calls_.size());
  for (auto& [id, call] : calls_)
    all.push_back(std::move(call));
  calls_.clear();
  deadlines_ = {};
  return all;
}

std::vector<caf::actor> call_table::due(time_point now) {
  std::vector<caf::actor> out;
  for (auto& id : deadlines_.take_due(now))
    if (auto i = calls_.find(id); i != calls_.end())
      out.push_back(i->second);
  return out;
}

} // namespace actor_host
