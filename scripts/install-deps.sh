#!/usr/bin/env bash
# Installs the Debian packages smmu-vp needs, and only those that are missing.
# Quiet and quick when everything is already there. Uses sudo when not root.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  libsystemc-dev        # SystemC 2.3.4 with TLM-2.0
  libspdlog-dev         # logging
  libfmt-dev            # formatting (spdlog's backend)
  nlohmann-json3-dev    # configuration and results
  libcli11-dev          # command-line parsing
  zlib1g-dev            # gzip trace files
  libgtest-dev libgmock-dev  # tests
  libbenchmark-dev      # wall-clock benchmarks
  gcc-aarch64-linux-gnu # freestanding aarch64 build check of sw/, the qemu-virt image
  qemu-system-arm       # qemu-system-aarch64: sw/ on QEMU's SMMUv3 (tests/qemu), kernel captures
  cpio xz-utils         # scripts/capture-kernel-traces.sh: the guest's initramfs, Debian's modules
  clang                 # the fuzz build (make fuzz): libFuzzer is clang's
  libclang-rt-14-dev    # libFuzzer and the sanitizer runtimes for clang 14
  python3-matplotlib    # plots of scripts/plot.py, scripts/reproduce.py (make reproduce), their tests
  python3-scipy         # scripts/calibrate.py: scipy.optimize.least_squares fits a profile to measured figures
  parallel              # GNU parallel: runs a planned sweep's jobs.txt (tests/sweep)
  slurm-wlm             # slurmctld, slurmd, sbatch: a planned sweep as a job array (tests/sweep)
  python3               # tests/sweep: free ports, JSON comparison
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: not root and no sudo; install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
