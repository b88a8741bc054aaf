#!/usr/bin/env bash
# Runs a command in a network namespace of its own (unshare --net), where the
# partition test builds its nodes' namespaces and the links between them: the
# host's network is never touched. Needs root (CAP_SYS_ADMIN) and iproute2;
# without them the test is skipped (exit 77, ctest's SKIP_RETURN_CODE).
set -euo pipefail
if ! command -v ip >/dev/null || ! unshare --net true 2>/dev/null || ! unshare --net ip netns list >/dev/null 2>&1; then
  echo "skipped: network namespaces need root and iproute2 (ip, unshare)"
  exit 77
fi
exec unshare --net -- "$@"
