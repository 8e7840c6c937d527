#!/usr/bin/env bash
# Installs canopy's build and test dependencies from Debian's packages when
# any is missing. Runs apt-get only when needed (and as root, or via sudo).
set -euo pipefail
packages=(cmake ninja-build g++ gfortran make pkg-config python3 libhwloc-dev hwloc libcli11-dev nlohmann-json3-dev
  libfmt-dev libgtest-dev libbenchmark-dev libscotch-dev libtbb-dev libomp-dev clang libclang-rt-14-dev
  numactl libnuma-dev valgrind libstarpu-dev libopenblas-dev gfortran python3-venv python3-dev
  gcc-12-source xz-utils libcapstone-dev openmpi-bin libopenmpi-dev mpich libmpich-dev libotf2-trace-dev otf2-tools chromium)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
echo "canopy setup: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
