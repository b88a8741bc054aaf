#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace actor_host::registry {

/// What a Reflection V1 runtime announces in
/// <project root>/.genkit/runtimes/<file>.json (../shared/spec/REFLECTION_V1.md,
/// "Server, port and discovery").
struct runtime_file {
  std::string id;
  std::int64_t pid = 0;
  std::string name; // optional
  std::string reflection_server_url;
  std::string timestamp; // ISO 8601, UTC
  std::string genkit_version;
  int reflection_api_spec_version = 1;
};

/// The file's JSON.
std::string runtime_file_json(const runtime_file& f);

/// Reads a runtime file with the checks Genkit's RuntimeManager applies: id
/// a string, pid a number, reflectionServerUrl a string, timestamp a date
/// (with '_' read as ':', as the Go runtime writes it). Files over 64 KiB
/// are refused before parsing. Returns false with a reason a person can act on.
bool parse_runtime_file(std::string_view text, runtime_file& out, std::string& error);

/// Reads the file at `path` (at most 64 KiB + 1 bytes: a larger one is
/// refused unread) and parses it as above. Only a regular file is read: a
/// symlink, a FIFO or a device is refused without blocking.
bool read_runtime_file(const std::string& path, runtime_file& out, std::string& error);

/// `t` as 2026-12-04T19:33:00.123Z.
std::string iso_timestamp(std::chrono::system_clock::time_point t);

/// The directory runtime files live in under a project root.
std::string runtimes_directory(const std::string& project_root);

} // namespace actor_host::registry
