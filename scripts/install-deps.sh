#!/usr/bin/env bash
# Installs every build and test dependency of actor-host from Debian packages.
# Idempotent: safe to run on a machine that already has them.
set -euo pipefail

pkgs=(
  build-essential cmake ninja-build pkg-config ccache mold
  libcaf-dev
  libboost1.81-dev libboost-json1.81-dev libboost-system1.81-dev libboost-url1.81-dev
  libsimdjson-dev libspdlog-dev libfmt-dev libssl-dev
  libcli11-dev libyaml-cpp-dev
  libre2-dev
  libsqlite3-dev
  libgrpc++-dev libprotobuf-dev protobuf-compiler
  libmimalloc-dev libjemalloc-dev
  curl procps
  iproute2 util-linux faketime
  chromium
)

missing=()
# chromium: the dashboard's browser test (tests/interop/dashboard.test.mjs, puppeteer-core).
# Node (for the interop peers) may come from another repository already; only add Debian's when absent.
command -v npm >/dev/null 2>&1 || pkgs+=(nodejs npm)
# fuzz/run.sh only (not the test suite): clang with libFuzzer and its sanitizer runtimes.
[ "${ACTOR_HOST_FUZZ_DEPS:-0}" = 1 ] && pkgs+=(clang-14 libfuzzer-14-dev libclang-rt-14-dev)
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# valijson (JSON Schema validation) is header-only, but Debian's libvalijson-dev
# depends on the libraries behind all of its adapters (~97 packages: Qt5, Poco,
# MariaDB, ...). Unpack just its headers into .deps/ instead; CMake looks there.
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
deps_dir="${ACTOR_HOST_DEPS:-$repo_root/.deps}"
if [ ! -d "$deps_dir/usr/include/valijson" ]; then
  if ! apt-cache show libvalijson-dev >/dev/null 2>&1; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO=sudo
    $SUDO apt-get update -qq
  fi
  tmp="$(mktemp -d)"
  # As root, apt downloads as the sandbox user _apt, which must own the target dir.
  [ "$(id -u)" -eq 0 ] && id _apt >/dev/null 2>&1 && chown _apt "$tmp"
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && apt-get download -qq libvalijson-dev)
  mkdir -p "$deps_dir"
  dpkg -x "$tmp"/libvalijson-dev_*.deb "$deps_dir"
  rm -rf "$tmp"
  trap - EXIT
  echo "valijson headers unpacked into $deps_dir/usr/include"
fi
