#pragma once

#include <string>

namespace actor_host::config {

/// The project root as the Genkit CLI finds it (findProjectRoot in
/// @genkit-ai/tools-common): the nearest folder, from `start_dir` up, that
/// holds a project marker (package.json, go.mod, pyproject.toml,
/// requirements.txt, pom.xml, build.gradle(.kts), pubspec.yaml); else
/// `start_dir` itself. The CLI and the runtimes it starts must agree on it:
/// runtime files are written and watched under <root>/.genkit/runtimes.
std::string find_project_root(const std::string& start_dir);

/// The current working directory ("." if it cannot be read).
std::string current_directory();

} // namespace actor_host::config
