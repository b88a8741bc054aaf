#include "actors/common/quiet_clock.hpp"

#include "actors/common/quiet_coordinator.hpp"

#include <caf/abstract_actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/policy/work_sharing.hpp>
#include <caf/policy/work_stealing.hpp>
#include <caf/settings.hpp>

namespace actor_host {

void quiet_clock::remember(caf::abstract_actor* self) {
  std::lock_guard<std::mutex> g{mtx_};
  timed_.insert(self->id());
}

void quiet_clock::set_ordinary_timeout(time_point t, caf::abstract_actor* self,
                                       caf::atom_value type, uint64_t id) {
  remember(self);
  super::set_ordinary_timeout(t, self, type, id);
}

void quiet_clock::set_request_timeout(time_point t, caf::abstract_actor* self,
                                      caf::message_id id) {
  remember(self);
  super::set_request_timeout(t, self, id);
}

void quiet_clock::set_multi_timeout(time_point t, caf::abstract_actor* self,
                                    caf::atom_value type, uint64_t id) {
  remember(self);
  super::set_multi_timeout(t, self, type, id);
}

void quiet_clock::cancel_timeouts(caf::abstract_actor* self) {
  {
    std::lock_guard<std::mutex> g{mtx_};
    if (timed_.erase(self->id()) == 0) {
      skipped_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
  }
  forwarded_.fetch_add(1, std::memory_order_relaxed);
  super::cancel_timeouts(self);
}

std::size_t quiet_clock::timed_actors() const {
  std::lock_guard<std::mutex> g{mtx_};
  return timed_.size();
}

void use_quiet_clock(caf::actor_system_config& cfg) {
  if (caf::get_or(cfg, "scheduler.enable-profiling", false))
    return;
  auto policy = caf::get_or(cfg, "scheduler.policy", caf::atom("stealing"));
  if (policy == caf::atom("sharing"))
    cfg.module_factories.push_back([](caf::actor_system& sys) -> caf::actor_system::module* {
      return new quiet_coordinator<caf::policy::work_sharing>(sys);
    });
  else if (policy == caf::atom("stealing"))
    cfg.module_factories.push_back([](caf::actor_system& sys) -> caf::actor_system::module* {
      return new quiet_coordinator<caf::policy::work_stealing>(sys);
    });
}

quiet_clock* quiet_clock_of(caf::actor_system& sys) {
  return dynamic_cast<quiet_clock*>(&sys.clock());
}

} // namespace actor_host
