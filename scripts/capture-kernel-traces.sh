#!/usr/bin/env bash
# Captures ftrace iommu:/dma: traces from real Debian arm64 kernels booted
# under qemu-system-aarch64 with an SMMUv3 (-M virt,iommu=smmuv3), for
# traces/samples (docs/traces.md, "Real captures"). Not run by the build or
# the tests: they import and replay the committed captures.
#
# Usage: capture-kernel-traces.sh [-o OUT_DIR] [-w WORK_DIR] [CAPTURE...]
#   CAPTURE is KERNEL-MODE, KERNEL one of 6.12 (has the dma: events) or 6.1
#   (iommu: events only), MODE strict or lazy (iommu.strict=1/0). Default:
#   all four. OUT_DIR defaults to traces/samples; each capture is written as
#   ftrace_linux-KERNEL_MODE.txt.gz.
#
# Needs qemu-system-aarch64 (Debian qemu-system-arm), apt-get, dpkg-deb, cpio,
# xz and gzip. The arm64 packages come from Debian's archive through a private
# apt configuration (signatures checked with the host's Debian keyring); the
# host's own apt state is not touched. Versions of the committed samples are
# the defaults below; an archive that has moved on can be told others with
# KERNEL_6_12, KERNEL_6_1 and BUSYBOX (package names, =VERSION allowed).
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
out="$src/traces/samples"
work="${TMPDIR:-/tmp}/smmu-vp-capture"
while getopts "o:w:h" opt; do
  case $opt in
    o) out=$OPTARG ;;
    w) work=$OPTARG ;;
    h) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
captures=("$@")
[ ${#captures[@]} -gt 0 ] || captures=(6.12-strict 6.12-lazy 6.1-strict 6.1-lazy)

KERNEL_6_12=${KERNEL_6_12:-linux-image-6.12.117+deb13-arm64-unsigned}
KERNEL_6_1=${KERNEL_6_1:-linux-image-6.1.0-50-arm64-unsigned}
BUSYBOX=${BUSYBOX:-busybox-static=1:1.35.0-4+deb12u1+b1}
# Drivers of the three devices, loaded in dependency order; the rest of what
# the guest needs (SMMUv3, PCIe host, PL011) is built into Debian's kernels.
MODULES=(nvme virtio_blk virtio_net virtio_pci)

for tool in qemu-system-aarch64 apt-get dpkg-deb cpio xz gzip; do
  command -v "$tool" >/dev/null || { echo "capture: $tool is needed (install qemu-system-arm, cpio, xz-utils)" >&2; exit 2; }
done

log() { echo "capture: $*" >&2; }

# --- arm64 packages through a private apt configuration --------------------
apt_dir="$work/apt"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$work/debs"
cat > "$apt_dir/sources.list" <<'EOF'
deb [arch=arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main
deb [arch=arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main
EOF
apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
          -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
          -o APT::Architecture=arm64 -o APT::Architectures::=arm64 -o Debug::NoLocking=1
          -o APT::Sandbox::User=root)
fetch_debs() {
  log "fetching $*"
  apt-get -qq "${apt_opts[@]}" update
  (cd "$work/debs" && apt-get -qq "${apt_opts[@]}" download "$@")
}
need=()
for p in "$KERNEL_6_12" "$KERNEL_6_1" "$BUSYBOX"; do
  ls "$work/debs/${p%%=*}"_*.deb >/dev/null 2>&1 || need+=("$p")
done
[ ${#need[@]} -eq 0 ] || fetch_debs "${need[@]}"

# --- one initramfs per kernel ----------------------------------------------
# Module dependencies come from each module's own depends= field (what
# depmod reads), resolved depth first so that a module follows its needs.
module_path() { find "$1" -name "$2.ko" -o -name "$2.ko.xz" | head -1; }
module_depends() {
  local f=$1
  case $f in *.xz) xz -dc "$f" ;; *) cat "$f" ;; esac | tr '\0' '\n' | sed -n 's/^depends=//p' | tr ',' ' '
}
declare -A loaded
resolve() {
  local tree=$1 name=$2 f dep
  [ -z "${loaded[$name]:-}" ] || return 0
  f=$(module_path "$tree" "$name")
  [ -n "$f" ] || return 0   # built in
  for dep in $(module_depends "$f"); do resolve "$tree" "$dep"; done
  loaded[$name]=$f
  echo "$f"
}
build_initramfs() {
  local deb=$1 dir=$2 root=$2/root f base
  rm -rf "$dir" && mkdir -p "$root"/{bin,sbin,proc,sys,dev,lib/modules}
  dpkg-deb -x "$deb" "$dir/pkg"
  dpkg-deb -x "$(ls "$work/debs/${BUSYBOX%%=*}"_*.deb)" "$dir/bb"
  cp "$dir/bb/bin/busybox" "$root/bin/busybox"
  for a in sh mount insmod ip dd ping cat echo ls sleep poweroff; do ln -s busybox "$root/bin/$a"; done
  loaded=()
  : > "$root/modules.order"
  for m in "${MODULES[@]}"; do
    while read -r f; do
      [ -n "$f" ] || continue
      base=$(basename "$f" .xz)
      case $f in *.xz) xz -dc "$f" > "$root/lib/modules/$base" ;; *) cp "$f" "$root/lib/modules/$base" ;; esac
      echo "$base" >> "$root/modules.order"
    done < <(resolve "$dir/pkg" "$m")
  done
  install -m 755 "$src/scripts/kernel-capture-init.sh" "$root/init"
  (cd "$root" && find . | cpio -o -H newc --quiet | gzip -9) > "$dir/initrd.gz"
  cp "$(ls "$dir"/pkg/boot/vmlinuz-*)" "$dir/vmlinuz"
  log "$(basename "$deb"): modules $(tr '\n' ' ' < "$root/modules.order")"
}

# --- one boot per capture ---------------------------------------------------
capture() {
  local kernel=$1 mode=$2 pkg dir strict console result
  case $kernel in
    6.12) pkg=$KERNEL_6_12 ;;
    6.1) pkg=$KERNEL_6_1 ;;
    *) echo "capture: unknown kernel '$kernel' (6.12 or 6.1)" >&2; exit 2 ;;
  esac
  case $mode in
    strict) strict=1 ;;
    lazy) strict=0 ;;
    *) echo "capture: unknown mode '$mode' (strict or lazy)" >&2; exit 2 ;;
  esac
  dir="$work/linux-$kernel"
  [ -f "$dir/initrd.gz" ] || build_initramfs "$(ls "$work/debs/${pkg%%=*}"_*.deb)" "$dir"
  truncate -s 16M "$dir/nvme.img"
  truncate -s 16M "$dir/vd.img"
  local cmdline="console=ttyAMA0 rdinit=/init loglevel=3 iommu.strict=$strict trace_event=iommu:*,dma:* trace_buf_size=16M"
  console="$dir/console-$mode.txt"
  log "booting Linux $kernel, $mode (iommu.strict=$strict)"
  timeout 900 qemu-system-aarch64 -M virt,iommu=smmuv3 -cpu cortex-a57 -smp 2 -m 1024 \
    -display none -monitor none -serial "file:$console" -no-reboot \
    -kernel "$dir/vmlinuz" -initrd "$dir/initrd.gz" -append "$cmdline" \
    -drive "file=$dir/nvme.img,if=none,id=nvm,format=raw" -device nvme,serial=smmuvp0,drive=nvm \
    -drive "file=$dir/vd.img,if=none,id=vd,format=raw" -device virtio-blk-pci,drive=vd,disable-legacy=on,iommu_platform=on \
    -netdev user,id=n0 -device virtio-net-pci,netdev=n0,disable-legacy=on,iommu_platform=on,romfile=
  grep -a '^capture:' "$console" >&2 || true
  result="$out/ftrace_linux-${kernel}_$mode.txt.gz"
  {
    echo "# smmu-vp capture: $(basename "$(ls "$work/debs/${pkg%%=*}"_*.deb)" .deb) under $(qemu-system-aarch64 --version | head -1)"
    echo "# smmu-vp capture: -M virt,iommu=smmuv3 -smp 2 -m 1024, kernel command line: $cmdline"
    echo "# smmu-vp capture: devices 0000:00:01.0 NVMe (QEMU nvme), 0000:00:02.0 virtio-blk, 0000:00:03.0 virtio-net (user networking)"
    echo "# smmu-vp capture: made by scripts/capture-kernel-traces.sh; workload in scripts/kernel-capture-init.sh"
    tr -d '\r' < "$console" | sed -n '/^@@smmu-vp-trace-begin@@$/,/^@@smmu-vp-trace-end@@$/p' | sed '1d;$d'
  } | gzip -9n > "$result.tmp"
  if [ "$(gzip -dc "$result.tmp" | grep -vc '^#')" -eq 0 ]; then
    rm -f "$result.tmp"
    echo "capture: Linux $kernel $mode printed no trace (console in $console)" >&2
    exit 1
  fi
  mv "$result.tmp" "$result"
  log "$result: $(gzip -dc "$result" | grep -vc '^#') events"
}

mkdir -p "$out"
for c in "${captures[@]}"; do
  capture "${c%%-*}" "${c#*-}"
done
