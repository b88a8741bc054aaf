// One malloc arena for the whole process, set before main starts any thread.
//
// Why: glibc gives threads that allocate at the same time arenas of their
// own (up to 8 per core), and memory freed into one arena serves only the
// threads on it. When actors run on CAF's worker (actors_on_io_threads:
// false), the I/O thread allocates every frame it reads and the messages it
// hands to actors, the worker frees them and allocates the long-lived
// actors (a pending request per call): the frames of a burst of calls,
// freed, stay in the I/O thread's arena while the calls' actors take fresh
// pages in the worker's. 100,000 held calls: 2,060 B of RSS each with
// glibc's default, 1,710 B with one arena (before the other changes of
// bench/runs/2026-12-07-pending.md, also jemalloc 2,170 and mimalloc 2,010
// against 1,990). With actors on the I/O thread (the default) one thread
// allocates and frees, and this changes nothing measurable; it still does
// with several I/O threads or actors on CAF's worker. The threads that
// allocate are few, and tcache keeps most allocations off the arena's lock.
//
// An operator's own choice (MALLOC_ARENA_MAX, or glibc.malloc.arena_max in
// GLIBC_TUNABLES) is left as it is. Linked into the binary through
// `one_malloc_arena`, which manager.cpp refers to.

#include <malloc.h>

#include <cstdlib>
#include <cstring>

namespace actor_host {

namespace {

bool operator_chose() {
  if (std::getenv("MALLOC_ARENA_MAX"))
    return true;
  auto* tunables = std::getenv("GLIBC_TUNABLES");
  return tunables && std::strstr(tunables, "arena_max");
}

bool limit_arenas() {
#if defined(__GLIBC__) && defined(M_ARENA_MAX)
  if (!operator_chose())
    return mallopt(M_ARENA_MAX, 1) == 1;
#endif
  return false;
}

} // namespace

extern const bool one_malloc_arena;
const bool one_malloc_arena = limit_arenas();

} // namespace actor_host
