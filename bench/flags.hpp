#pragma once

// The command line of bench_load and bench_fake_runtime: `--name value`
// pairs, each name bound to the variable it sets, read in one place.

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

namespace bench {

/// One `--name value` flag and what it sets. Numbers are read with
/// atoi/atol/atof, as these tools always have: a bad number reads as 0, and
/// each tool's usage check catches the values it cannot run with. A function
/// reads a value of its own shape; false: it said why on stderr.
struct flag {
  std::string_view name;
  std::variant<int*, long*, double*, std::string*, std::function<bool(const std::string&)>> set;
};

/// Reads argv as `--name value` pairs into `flags` (a last name without a
/// value is ignored). False on an unknown name ("unknown option NAME" on
/// stderr) or a value a function flag refused.
inline bool read_flags(int argc, char** argv, std::initializer_list<flag> flags) {
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string name = argv[i];
    std::string value = argv[i + 1];
    const flag* f = nullptr;
    for (auto& candidate : flags)
      if (candidate.name == name)
        f = &candidate;
    if (!f) {
      std::fprintf(stderr, "unknown option %s\n", name.c_str());
      return false;
    }
    bool ok = std::visit(
      [&value](auto& target) -> bool {
        using target_type = std::decay_t<decltype(target)>;
        if constexpr (std::is_same_v<target_type, int*>)
          *target = std::atoi(value.c_str());
        else if constexpr (std::is_same_v<target_type, long*>)
          *target = std::atol(value.c_str());
        else if constexpr (std::is_same_v<target_type, double*>)
          *target = std::atof(value.c_str());
        else if constexpr (std::is_same_v<target_type, std::string*>)
          *target = value;
        else
          return target(value);
        return true;
      },
      f->set);
    if (!ok)
      return false;
  }
  return true;
}

} // namespace bench
