#!/usr/bin/env bash
# Installs the Debian packages the comparison harness needs (Open MPI and Gloo), when missing.
# Idempotent: does nothing (and needs no network) when everything is present.
set -euo pipefail
packages=(libopenmpi-dev openmpi-bin libgloo-dev g++ python3)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "compare/install-deps: installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  SUDO=sudo
else
  SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq || true
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
