#!/usr/bin/env bash
# Install Debian's Slurm (slurm-wlm: slurmctld, slurmd, sbatch, ...) and munge, for the
# one-node Slurm cluster that tests/hpc/test_slurm.py starts on localhost. Idempotent:
# packages already present are left alone. Needs root (or sudo).
#
# Only the packages are installed: no daemon is enabled or started, and no system
# slurm.conf or munge key is written. The test writes its own configuration and key
# into a temporary folder, starts munged, slurmctld and slurmd from there and stops
# them at its end. Debian's packages may start munge.service on installation (when
# systemd runs); that daemon uses the system key and socket, not the test's.
set -euo pipefail

PKGS=(slurm-wlm munge)

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-slurm: ${PKGS[*]} already installed"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-slurm: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
