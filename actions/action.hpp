#pragma once

#include "wire/status.hpp"

#include <boost/json/value.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

/// The C++ action API: what a runtime hosts. Plain data and interfaces; the
/// actors that run actions live in actors/runtime/.
namespace actor_host::schema {
class json_schema;
}

namespace actor_host::actions {

/// A Status failure of an action, sent as a -32000 error with
/// data {code, message, details}.
class action_error : public std::runtime_error {
public:
  action_error(wire::status_code code, std::string message)
    : std::runtime_error(std::move(message)), code_(code) {
  }

  wire::status_code code() const noexcept {
    return code_;
  }

private:
  wire::status_code code_;
};

/// Cancellation as an action sees it. Thread-safe; the runtime flips it when
/// cancelAction arrives or the run is abandoned.
class cancel_signal {
public:
  virtual ~cancel_signal() = default;
  virtual bool cancelled() const = 0;
  /// Waits up to `d`; true if cancelled meanwhile (returns at once then).
  virtual bool wait_for(std::chrono::milliseconds d) const = 0;
  /// A file descriptor that becomes readable once cancelled, for poll().
  virtual int fd() const = 0;
};

/// Input of a bidi run, in wire order. Thread-safe.
class input_stream {
public:
  virtual ~input_stream() = default;
  /// Blocks for the next chunk; nullopt once the input has ended or the run
  /// was cancelled.
  virtual std::optional<boost::json::value> next() = 0;
  /// Non-blocking: the next chunk if one is queued; `ended` tells whether
  /// the input is finished.
  virtual std::optional<boost::json::value> try_next(bool& ended) = 0;
  /// A file descriptor that is readable while a chunk or the end is queued.
  virtual int fd() const = 0;
};

/// Everything a handler gets for one run.
class action_context {
public:
  virtual ~action_context() = default;

  virtual const boost::json::value& input() const = 0;
  /// `init` of bidi actions (null when absent).
  virtual const boost::json::value& init() const = 0;
  /// The caller's context object (null when absent).
  virtual const boost::json::value& context() const = 0;
  virtual const std::string& trace_id() const = 0;
  /// True if the caller asked for chunks; sending is allowed either way.
  virtual bool streaming() const = 0;
  /// Sends one output chunk. Chunks reach the caller in call order, before
  /// the result.
  virtual void send_chunk(boost::json::value chunk) = 0;
  /// The input stream of a bidi run, or nullptr.
  virtual input_stream* inputs() = 0;
  virtual const cancel_signal& cancel() const = 0;

  /// Throws the Status error a cancelled run ends with.
  void throw_if_cancelled() const {
    if (cancel().cancelled())
      throw action_error(wire::status_code::cancelled, "Action was cancelled");
  }

  /// Sleeps up to `d`, or throws like throw_if_cancelled once cancelled.
  void sleep_for(std::chrono::milliseconds d) const {
    if (cancel().wait_for(d))
      throw action_error(wire::status_code::cancelled, "Action was cancelled");
  }
};

/// Runs on a thread of its own: it may block. Return the result, or throw
/// action_error for a Status failure; any other exception becomes INTERNAL.
using action_handler = std::function<boost::json::value(action_context&)>;

/// One action as listActions describes it, plus its handler.
struct action_descriptor {
  std::string type; // "flow", "tool", ...
  std::string name;
  std::string description;
  // JSON Schemas as JSON text; empty = none.
  std::string input_schema;
  std::string output_schema;
  std::string stream_schema;
  std::string init_schema;
  std::string metadata; // JSON object text; empty = none
  action_handler handler;
  /// Compiled `input_schema` and `output_schema`, filled in by
  /// action_catalog::add. A run's input is checked before the handler starts
  /// (INVALID_ARGUMENT), its result before it is sent (INTERNAL).
  std::shared_ptr<const schema::json_schema> input_validator;
  std::shared_ptr<const schema::json_schema> output_validator;

  std::string key() const {
    return "/" + type + "/" + name;
  }
};

/// The actions a runtime hosts, plus its listValues values. Built once at
/// start-up and shared read-only between actors.
class action_catalog {
public:
  /// Adds an action; replaces one with the same key. Throws
  /// std::invalid_argument if its input or output schema does not compile.
  void add(action_descriptor action);
  /// Adds a listValues value of `type` ("defaultModel", "middleware") under `name`.
  void add_value(std::string type, std::string name, std::string json);

  const action_descriptor* find(std::string_view key) const;
  const std::vector<action_descriptor>& actions() const {
    return actions_;
  }
  /// {"actions":{key:{key,name,description?,metadata?,inputSchema?,outputSchema?}}}
  /// (Reflection V2's listActions result).
  std::string list_actions_json() const;
  /// The same map without the wrapper: Reflection V1's GET /api/actions.
  std::string actions_map_json() const;
  /// {"values":{...}} for a supported type; nullopt for another type.
  std::optional<std::string> list_values_json(std::string_view type) const;
  /// The same map without the wrapper: Reflection V1's GET /api/values.
  std::optional<std::string> values_map_json(std::string_view type) const;

private:
  std::vector<action_descriptor> actions_;
  std::map<std::string, std::map<std::string, std::string>> values_;
};

using catalog_ptr = std::shared_ptr<const action_catalog>;

} // namespace actor_host::actions
