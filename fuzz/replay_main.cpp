// Replays a corpus without libFuzzer: `fuzz_replay TARGET PATH...` sends
// every regular file under the given directories (or the given files)
// through TARGET's LLVMFuzzerTestOneInput once, in name order. A finding
// aborts (sanitizers, oracles), failing the test. Every target is linked
// into this one binary, its entry point renamed fuzz_<target>_one_input
// (fuzz/CMakeLists.txt).

#include "fuzz/fuzz_support.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string_view>
#include <vector>

#define FUZZ_TARGET(name) \
  extern "C" int fuzz_##name##_one_input(const std::uint8_t* data, std::size_t size);
#include "fuzz_targets.inc"
#undef FUZZ_TARGET

namespace fs = std::filesystem;

namespace {

using entry_point = int (*)(const std::uint8_t*, std::size_t);

struct target {
  std::string_view name;
  entry_point run;
};

constexpr target targets[] = {
#define FUZZ_TARGET(name) {#name, fuzz_##name##_one_input},
#include "fuzz_targets.inc"
#undef FUZZ_TARGET
};

} // namespace

int main(int argc, char** argv) {
  entry_point run = nullptr;
  if (argc > 1)
    for (auto& t : targets)
      if (t.name == argv[1])
        run = t.run;
  if (!run) {
    std::cerr << "usage: fuzz_replay TARGET PATH...\ntargets:";
    for (auto& t : targets)
      std::cerr << ' ' << t.name;
    std::cerr << '\n';
    return 2;
  }
  std::vector<fs::path> files;
  for (int i = 2; i < argc; ++i) {
    fs::path p{argv[i]};
    if (fs::is_directory(p)) {
      for (auto& e : fs::recursive_directory_iterator{p})
        if (e.is_regular_file())
          files.push_back(e.path());
    } else if (fs::is_regular_file(p)) {
      files.push_back(p);
    } else {
      std::cerr << p.string() << ": no such file or directory\n";
      return 2;
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::cerr << "no inputs: an empty corpus replays nothing\n";
    return 2;
  }
  for (auto& f : files) {
    std::ifstream in{f, std::ios::binary};
    std::vector<char> bytes{std::istreambuf_iterator<char>{in}, {}};
    if (!in.good() && !in.eof()) {
      std::cerr << f.string() << ": cannot read\n";
      return 2;
    }
    // A copy of exactly the input's size, as libFuzzer passes it, so an
    // overread shows up under ASan here too.
    std::unique_ptr<std::uint8_t[]> data{new std::uint8_t[bytes.size() + (bytes.empty() ? 1 : 0)]};
    std::copy(bytes.begin(), bytes.end(), data.get());
    run(data.get(), bytes.size());
  }
  std::cout << "replayed " << files.size() << " input(s)\n";
  return 0;
}
