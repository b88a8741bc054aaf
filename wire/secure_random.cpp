#include "wire/secure_random.hpp"

#include <openssl/crypto.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/random.h>

namespace actor_host::wire {

namespace {
std::atomic<std::uint64_t> drawn{0};

void from_kernel(unsigned char* p, std::size_t n) {
  std::size_t got = 0;
  while (got < n) {
    auto r = ::getrandom(p + got, n - got, 0);
    if (r < 0) {
      if (errno == EINTR)
        continue;
      std::fprintf(stderr, "actor-host: getrandom failed (errno %d); cannot make ids\n", errno);
      std::abort();
    }
    got += static_cast<std::size_t>(r);
  }
}

// Ids are drawn per call and span (several per call): one getrandom(2) per
// 512 bytes instead of one per id. Each byte is handed out once and wiped
// from the pool as it goes; the pool is per thread, so no lock.
struct pool {
  static constexpr std::size_t size = 512;
  unsigned char bytes[size];
  std::size_t left = 0;
  ~pool() {
    OPENSSL_cleanse(bytes, size);
  }
};

} // namespace

void secure_random_bytes(void* out, std::size_t n) {
  auto* p = static_cast<unsigned char*>(out);
  if (n > pool::size / 4) {
    from_kernel(p, n);
  } else {
    thread_local pool pl;
    if (pl.left < n) {
      from_kernel(pl.bytes, pool::size);
      pl.left = pool::size;
    }
    auto* from = pl.bytes + (pool::size - pl.left);
    std::memcpy(p, from, n);
    OPENSSL_cleanse(from, n);
    pl.left -= n;
  }
  drawn.fetch_add(n, std::memory_order_relaxed);
}

std::string secure_random_hex(std::size_t n) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string bytes(n, '\0');
  secure_random_bytes(bytes.data(), n);
  std::string out(2 * n, '0');
  for (std::size_t i = 0; i < n; ++i) {
    auto b = static_cast<unsigned char>(bytes[i]);
    out[2 * i] = hex[b >> 4];
    out[2 * i + 1] = hex[b & 0xf];
  }
  return out;
}

std::uint64_t secure_random_bytes_drawn() {
  return drawn.load(std::memory_order_relaxed);
}

bool secrets_equal(std::string_view a, std::string_view b) {
  // The length of a key is no secret (UUIDs); its bytes are.
  if (a.size() != b.size())
    return false;
  return a.empty() || CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

} // namespace actor_host::wire
