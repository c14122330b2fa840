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

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
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
