#!/usr/bin/env bash
# Installs the pinned interop-test packages into BUILD_DIR/interop-node.
#
#   tests/interop/setup.sh BUILD_DIR
#
# Copies package.json + package-lock.json there and runs `npm ci` unless
# node_modules already matches the lock (checksum stamp), so reruns are cheap
# and need no network. Also links genkit-runtime.mjs into that directory: the
# runtime imports 'genkit' with bare specifiers, and ESM resolves those from
# the importing file's location (NODE_PATH is ignored), so the harness starts
# it through the link with --preserve-symlinks-main.
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi

src_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$1"
node_dir="$(cd "$1" && pwd)/interop-node"
stamp="$node_dir/node_modules/.interop-stamp"

for tool in node npm sha256sum; do
  command -v "$tool" >/dev/null || { echo "setup.sh: $tool not found" >&2; exit 1; }
done

mkdir -p "$node_dir"
want=$(cat "$src_dir/package.json" "$src_dir/package-lock.json" | sha256sum | cut -d' ' -f1)

if [ -d "$node_dir/node_modules" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "setup.sh: $node_dir/node_modules is up to date"
else
  cp "$src_dir/package.json" "$src_dir/package-lock.json" "$node_dir/"
  rm -f "$stamp"
  # npm ci removes node_modules itself; a failed install leaves no stamp, so
  # the next run retries.
  (cd "$node_dir" && npm ci --no-audit --no-fund --prefer-offline --loglevel=error)
  echo "$want" >"$stamp"
  echo "setup.sh: installed packages into $node_dir/node_modules"
fi

for peer in genkit-runtime.mjs genkit-manager.mjs; do
  ln -sfn "$src_dir/$peer" "$node_dir/$peer"
done
# The iii SDK peers (tests/interop/iii, from ../shared/peers/iii) import
# 'iii-sdk' the same way.
for peer in "$src_dir"/iii/*.mjs; do
  ln -sfn "$peer" "$node_dir/iii-$(basename "$peer")"
done
