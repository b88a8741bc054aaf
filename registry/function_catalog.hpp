#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace actor_host::registry {

/// A function registered by an iii worker (`registerfunction`).
struct worker_function {
  std::string id;
  std::string owner;           // worker id of the registering connection
  std::string description;
  std::string metadata;        // raw JSON, "" when absent
  std::string request_format;  // raw JSON, "" when absent
  std::string response_format; // raw JSON, "" when absent
};

/// A trigger type provided by a worker (`registertriggertype`).
struct trigger_type_entry {
  std::string id;
  std::string owner;
  std::string description;
};

/// A connected worker and what `engine::workers::register` told about it.
struct worker_record {
  std::string id;
  std::string ip;
  std::int64_t connected_at_ms = 0;
  std::string name, description, runtime, version, os;
  std::string pid = "null";       // raw JSON
  std::string isolation = "null"; // raw JSON
};

/// The iii side of the manager's catalog, as plain data: function ids and
/// trigger types are global, owned by the connection that registered them
/// last (last writer wins); a connection's cleanup removes only what it
/// still owns, so a reconnected worker's fresh registrations survive the old
/// connection's late cleanup.
class function_catalog {
public:
  /// Adds or replaces; returns the previous owner ("" if new).
  std::string put_function(worker_function f);
  /// Removes `id` if `owner` owns it.
  bool remove_function(const std::string& id, std::string_view owner);
  const worker_function* find_function(const std::string& id) const;
  /// Removes every function `owner` owns; returns their ids.
  std::vector<std::string> remove_functions_of(std::string_view owner);
  std::size_t function_count(std::string_view owner) const;

  std::string put_trigger_type(trigger_type_entry t);
  const trigger_type_entry* find_trigger_type(const std::string& id) const;
  std::vector<std::string> remove_trigger_types_of(std::string_view owner);

  void add_worker(worker_record w);
  void remove_worker(const std::string& id);
  worker_record* find_worker(const std::string& id);
  /// Applies an `engine::workers::register` payload to the worker.
  void set_worker_metadata(const std::string& id, const std::string& payload);

  /// `{functions:[{function_id, worker_name, description?, metadata?}]}`
  /// sorted by id; `params` are the engine::functions::list input (prefix,
  /// search, include_internal). `extra` are functions the engine itself
  /// offers (`engine::*`), listed only with include_internal.
  /// `visible` (when set) hides what a session may not see (RBAC).
  std::string functions_list_json(
    const std::string& params, const std::vector<std::string>& engine_functions,
    const std::function<bool(const std::string& id, const std::string* metadata)>& visible = {})
    const;
  /// The rows of functions_list_json by function id.
  std::map<std::string, std::string> functions_list_rows(
    const std::string& params, const std::vector<std::string>& engine_functions,
    const std::function<bool(const std::string& id, const std::string* metadata)>& visible = {})
    const;
  /// The functions (not `metadata.internal` ones) as a Genkit listActions
  /// result: `{actions: {"/iii/<id>": {key, name, description?, metadata: {iii:
  /// {function_id, worker_name, metadata?, request_format?,
  /// response_format?}}}}}`. iii formats are not JSON Schemas, so they are
  /// not offered as inputSchema/outputSchema.
  std::string genkit_actions_json() const;
  /// `{function_id, worker_name, description?, metadata?}` of one function.
  std::string function_row(const worker_function& f) const;
  /// The worker's name as `engine::*` answers show it (its id when it never
  /// told one through engine::workers::register).
  std::string worker_name(const std::string& worker_id) const;
  /// `{workers:[{id, name, description, version, runtime, os, status,
  /// function_count, connected_at_ms, active_invocations, isolation,
  /// ip_address}]}`; `active` gives a worker's invocations in flight.
  std::string workers_list_json(const std::map<std::string, std::int64_t>& active) const;
  /// One row of workers_list_json.
  std::string worker_row(const worker_record& w, std::int64_t active) const;
  /// The first worker (by id) called `name`, else the worker with id `name`.
  const worker_record* find_worker_by_name(const std::string& name) const;

  /// `{id, worker_name, description}` of a trigger type.
  std::string trigger_type_row(const trigger_type_entry& t) const;

  const std::map<std::string, trigger_type_entry>& trigger_types() const {
    return trigger_types_;
  }
  const std::map<std::string, worker_function>& functions() const {
    return functions_;
  }
  const std::map<std::string, worker_record>& workers() const {
    return workers_;
  }

private:
  std::map<std::string, worker_function> functions_;
  std::map<std::string, trigger_type_entry> trigger_types_;
  std::map<std::string, worker_record> workers_;
};

} // namespace actor_host::registry
