#include "actors/manager/trace_keeper.hpp"

#include "traces/otlp.hpp"
#include "traces/trace_filter.hpp"

#include <spdlog/spdlog.h>

#include <chrono>

namespace actor_host {

namespace {

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
           std::chrono::system_clock::now().time_since_epoch())
    .count();
}

constexpr auto prune_interval = std::chrono::minutes(1);

} // namespace

caf::behavior trace_keeper(caf::stateful_actor<trace_keeper_state>* self,
                           std::shared_ptr<traces::trace_store> store) {
  self->state.store = std::move(store);
  self->send(self, trace_prune_atom_v);
  return {
    [self](trace_save_atom, const std::string& body) -> std::string {
      return self->state.store->save(body, now_ms());
    },
    [self](otlp_save_atom, const std::string& body) -> std::string {
      // Converted here, off the scheduler's threads, like every store write.
      std::vector<std::string> docs;
      if (auto err = traces::trace_data_from_otlp(body, docs); !err.empty())
        return err;
      auto now = now_ms();
      for (auto& d : docs)
        if (auto err = self->state.store->save(d, now); !err.empty())
          return err;
      return {};
    },
    [self](trace_get_atom, const std::string& id) -> caf::result<bool, std::string> {
      auto t = self->state.store->load(id);
      return {t.has_value(), t ? std::move(*t) : std::string{}};
    },
    [self](trace_list_atom, std::uint64_t limit, std::uint64_t offset,
           const std::string& filter_json) -> std::string {
      traces::trace_filter filter;
      if (!filter_json.empty() && !traces::trace_filter::parse(filter_json, filter).empty())
        return R"({"traces":[]})"; // checked by the route already
      return self->state.store->list(limit, offset, filter);
    },
    [self](trace_prune_atom) {
      if (auto n = self->state.store->prune(now_ms()); n > 0)
        spdlog::info("trace store: dropped {} trace(s) over the retention limits", n);
      self->delayed_send(self, prune_interval, trace_prune_atom_v);
    },
  };
}

} // namespace actor_host
