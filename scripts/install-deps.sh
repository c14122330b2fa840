#!/usr/bin/env bash
# Install every Debian package USER-AISCI needs to build, test and run its examples.
# Idempotent: packages already present are left alone. Needs root (or sudo).
set -euo pipefail

PKGS=(
  build-essential cmake ninja-build pkg-config
  lammps liblammps-dev
  libopenmpi-dev openmpi-bin
  libfftw3-dev
  libtorch-dev python3-torch libopenblas0-openmp
  python3-numpy python3-matplotlib python3-scipy
  libfftw3-mpi-dev
)

# One dpkg query for the whole list: the packages dpkg knows as installed; every other one
# (not installed, half installed, unknown to dpkg) is missing.
installed=" $(dpkg-query -W -f='${Package}:${db:Status-Status} ' "${PKGS[@]}" 2>/dev/null |
  tr ' ' '\n' | sed -n 's/:installed$//p' | tr '\n' ' ' || true) "
missing=()
for p in "${PKGS[@]}"; do
  [[ "$installed" == *" $p "* ]] || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PKGS[@]} packages already installed"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
