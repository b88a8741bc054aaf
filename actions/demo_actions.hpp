#pragma once

#include "actions/action.hpp"

namespace actor_host::actions {

/// The conformance actions of the Genkit JS harness (peers/genkit/runtime.mjs)
/// as C++ actions, with the same keys, schemas, metadata and behaviour, so the
/// harness scenario (manager.mjs) passes against a C++ runtime:
/// /flow/echo, /flow/streamCount, /flow/slow, /flow/fail, /flow/createOrder,
/// /flow/whoami, /flow/chat, /flow/bidiSum, /tool/add; values defaultModel
/// "harness/fake-model" and middleware harnessTag.
void add_demo_actions(action_catalog& catalog);

} // namespace actor_host::actions
