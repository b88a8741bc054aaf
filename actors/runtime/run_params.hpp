#pragma once

#include "actions/action.hpp"

#include <string>
#include <string_view>

namespace actor_host {

/// A runAction's parameters as both reflection protocols send them (the V2
/// frame's params, the V1 request body), read against the catalog.
struct run_params {
  std::string key;
  const actions::action_descriptor* action = nullptr; // owned by the catalog
  std::string input;   // raw JSON; "" when absent
  std::string init;    // raw JSON; "" when absent
  std::string context; // raw JSON object; "" when absent or null
  bool stream = false;
  bool stream_input = false;
};

enum class run_params_fault { none, invalid, unknown_action };

/// Reads `params`; on a fault `message` says what is wrong in Genkit's
/// words ("action <key> not found" for an unknown key).
run_params_fault read_run_params(std::string_view params, const actions::action_catalog& catalog,
                                 run_params& out, std::string& message);

} // namespace actor_host
