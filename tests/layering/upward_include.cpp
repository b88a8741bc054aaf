// Compiled by ctest layering_enforced with registry/'s include root: a
// registry/ source may not include the actors above it, so this must not
// compile (cmake/layers.cmake).
#include "actors/call/errors.hpp"
