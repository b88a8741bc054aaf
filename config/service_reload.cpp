#include "config/service_reload.hpp"

#include <algorithm>

namespace actor_host::config {

const service_spec* find_service(const std::vector<service_spec>& specs, const std::string& name) {
  auto i = std::find_if(specs.begin(), specs.end(), [&](auto& s) { return s.name == name; });
  return i == specs.end() ? nullptr : &*i;
}

service_reload plan_service_reload(const std::vector<service_spec>& running,
                                   const std::vector<service_spec>& next) {
  service_reload out;
  for (std::size_t i = 0; i < running.size(); ++i) {
    auto& old = running[i];
    auto* now = find_service(next, old.name);
    if (!now) {
      out.not_applied.push_back("service " + old.name
                                + " is no longer configured: it keeps running until the "
                                  "manager restarts");
      continue;
    }
    if (*now == old)
      continue;
    if (now->runtime_id != old.runtime_id || now->registers != old.registers) {
      out.not_applied.push_back("service " + old.name
                                + ": a new runtime id (or registers) takes a manager restart");
      continue;
    }
    out.changed.push_back(i);
  }
  for (auto& s : next)
    if (!find_service(running, s.name))
      out.not_applied.push_back("service " + s.name
                                + " is new: it starts when the manager restarts");
  return out;
}

} // namespace actor_host::config
