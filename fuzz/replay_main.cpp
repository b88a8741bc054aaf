// Replays a corpus without libFuzzer: every regular file under the given
// directories (or the given files) goes through LLVMFuzzerTestOneInput once,
// in name order. A finding aborts (sanitizers, oracles), failing the test.

#include "fuzz/fuzz_support.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <vector>

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
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
    LLVMFuzzerTestOneInput(data.get(), bytes.size());
  }
  std::cout << "replayed " << files.size() << " input(s)\n";
  return 0;
}
