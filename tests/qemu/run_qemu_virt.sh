#!/usr/bin/env bash
# Cross-check of sw/ on QEMU's SMMUv3: builds the qemu-virt image
# (sw/ports/qemu-virt, cross-compiled) into BUILD_DIR and runs it on
# qemu-system-aarch64's virt machine with an SMMUv3 and the edu PCI device.
# Fails on any FAIL line, on a missing or failing final "RESULT:" line, on a
# non-zero exit status (the image exits through semihosting) or a timeout.
# Without qemu-system-aarch64 or the cross compiler it exits 77, which CTest
# reports as skipped, naming the Debian package to install.
# Usage: run_qemu_virt.sh SOURCE_DIR BUILD_DIR
set -uo pipefail
src=${1:?source dir}
out=${2:?build dir}
limit=${QEMU_TIMEOUT:-60}

need() {
  command -v "$1" >/dev/null || { echo "qemu_virt_crosscheck: $1 not found: install the Debian package $2 (scripts/install-deps.sh installs it)" >&2; exit 77; }
}
need qemu-system-aarch64 qemu-system-arm
need aarch64-linux-gnu-gcc gcc-aarch64-linux-gnu

port="$src/sw/ports/qemu-virt"
# A build directory configured from another source (the port's earlier place,
# sw/hal/ports/qemu-virt, or another checkout) is started afresh: CMake
# refuses to reconfigure it.
if [ -f "$out/CMakeCache.txt" ] &&
   ! grep -qxF "CMAKE_HOME_DIRECTORY:INTERNAL=$port" "$out/CMakeCache.txt"; then
  rm -rf "$out"
fi
if ! cmake -S "$port" -B "$out" \
    -DCMAKE_TOOLCHAIN_FILE="$src/cmake/toolchains/aarch64-qemu-virt.cmake" >"$out.configure.log" 2>&1; then
  cat "$out.configure.log" >&2
  echo "qemu_virt_crosscheck: configuring the image failed" >&2
  exit 1
fi
if ! cmake --build "$out" -j 2 >"$out.build.log" 2>&1; then
  cat "$out.build.log" >&2
  echo "qemu_virt_crosscheck: building the image failed" >&2
  exit 1
fi

# One run of the image; sets `fail` (0/1) and prints the UART log and why.
run_once() {
  local log="$out/uart.log"
  # highmem=off keeps every device below 4 GiB (the image's identity map);
  # -nic none: no default network card (its option ROM is not needed).
  timeout "$limit" qemu-system-aarch64 -machine virt,iommu=smmuv3,highmem=off -cpu cortex-a57 -smp 2 -m 128M \
    -nographic -nic none -monitor none -device edu -semihosting -kernel "$out/smmu_vp_qemu_virt.elf" >"$log" 2>&1
  local status=$?
  cat "$log"
  fail=0
  if [ "$status" -eq 124 ]; then
    echo "qemu_virt_crosscheck: QEMU did not finish within ${limit} s" >&2
    fail=1
  elif [ "$status" -ne 0 ]; then
    echo "qemu_virt_crosscheck: QEMU exited with status $status" >&2
    fail=1
  fi
  if grep -q '^FAIL' "$log"; then
    echo "qemu_virt_crosscheck: failed checks:" >&2
    grep '^FAIL' "$log" >&2
    fail=1
  fi
  local result
  result=$(grep '^RESULT:' "$log" | tail -n 1)
  if ! [[ "$result" =~ ^RESULT:\ PASS\ ([0-9]+)/([0-9]+)$ ]] || [ "${BASH_REMATCH[1]}" != "${BASH_REMATCH[2]}" ] ||
     [ "${BASH_REMATCH[1]}" -eq 0 ]; then
    echo "qemu_virt_crosscheck: no passing final status line (got: '${result:-nothing}')" >&2
    fail=1
  fi
}

# One run decides: a FAIL line, a missing status or a timeout fails the test.
# (The rare failures once seen here, 1998 commands and 999 SYNCs counted for
# 2000 and 1000 by the contention check, were driver statistics losing
# updates on two real vCPUs, fixed with SW_STAT_ADD in commit c689dad.)
run_once
exit "$fail"
