#!/usr/bin/env bash
# Installs every build and test dependency of actor-host from Debian packages.
# Idempotent: safe to run on a machine that already has them.
set -euo pipefail

pkgs=(
  build-essential cmake ninja-build pkg-config
  libcaf-dev
  libboost1.81-dev libboost-json1.81-dev libboost-system1.81-dev
  libsimdjson-dev libspdlog-dev libfmt-dev libssl-dev
  libcli11-dev libyaml-cpp-dev
  curl procps
)

missing=()
# Node (for the interop peers) may come from another repository already; only add Debian's when absent.
command -v npm >/dev/null 2>&1 || pkgs+=(nodejs npm)
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
