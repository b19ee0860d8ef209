#!/usr/bin/env bash
# Compiles every C file of sw/ for bare-metal aarch64 (no libc, no host
# headers beyond the freestanding ones), as the brief requires of sw/.
# Usage: check_sw_freestanding.sh SOURCE_DIR
set -euo pipefail
src=${1:?source dir}
cc=${AARCH64_CC:-aarch64-linux-gnu-gcc}
command -v "$cc" >/dev/null || { echo "$cc not found (Debian package gcc-aarch64-linux-gnu)" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
n=0
mkdir -p "$out/on-hal" "$out/ports"
while IFS= read -r f; do
  # HAL ports (sw/ports/*) implement hal.h for real hardware: they are
  # compiled here with the same warnings, as their image builds them (inline
  # atomics), but they may reference their boot code and linker-script
  # symbols; their own -nostdlib link is what proves they need no C library.
  case "$f" in
    "$src/sw/ports/"*) dir=ports extra=(-mno-outline-atomics -I"$(dirname "$f")") ;;
    # Atomic builtins (SW_STAT_ADD) inline, as in every bare-metal image.
    *) dir=on-hal extra=(-mno-outline-atomics) ;;
  esac
  "$cc" -std=c11 -ffreestanding -nostdlib -fno-builtin -O2 -Wall -Wextra -Werror "${extra[@]}" \
    -I"$src/sw" -I"$src/models" -c "$f" -o "$out/$dir/$n.o"
  n=$((n + 1))
done < <(find "$src/sw" -name '*.c' | sort)
# Nothing on top of the HAL may call into a C library: the only undefined
# symbols are the HAL, sw/ itself (lib, drivers, the SMMU driver, apps), and
# the few the compiler may emit for a struct copy.
undefined=$(for o in "$out"/on-hal/*.o; do aarch64-linux-gnu-nm -u "$o" 2>/dev/null || nm -u "$o"; done \
  | awk '{print $2}' | sort -u | grep -vE '^(hal_|sw_|drv_|app_|dma_|shared_lock_|smmu_|io_pgtable_|iommu_|swiotlb_|iova_|nic_|net_|nvme_|fio_|cam_|camera_|edu_|init_iova_domain$|put_iova_domain$|alloc_iova|free_iova|find_iova$|reserve_iova$|memcpy$|memset$)' || true)
if [ -n "$undefined" ]; then
  echo "sw/ objects reference symbols outside the HAL and sw/:" >&2
  echo "$undefined" >&2
  exit 1
fi
echo "$n sw/ files compile freestanding for aarch64"
