#!/usr/bin/env bash
# The Debian package (cmake/package.cmake) as apt would install it: built
# with cpack, `apt-get install` of it resolved by apt on this machine
# (simulated), and, unpacked, its CLI runs `make run`'s scenario
# from the installed data and finds the installed profiles; the library,
# headers and CMake package are where docs/embedding.md says.
# Usage: package_test.sh BUILD_DIR WORK_DIR
set -euo pipefail
build=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
(cd "$build" && cpack -G DEB -B "$work/pkg" >"$work/cpack.log" 2>&1) || { cat "$work/cpack.log" >&2; exit 1; }
deb=$(find "$work/pkg" -maxdepth 1 -name 'smmu-vp_*.deb' | head -1)
[ -n "$deb" ] || { echo "package_test: cpack made no smmu-vp_*.deb" >&2; exit 1; }
echo "package_test: $(basename "$deb"), $(du -h "$deb" | cut -f1)"

echo "package_test: Depends: $(dpkg-deb -f "$deb" Depends)"
# apt resolves them here (virtual packages too, e.g. bookworm's
# libspdlog1.10-fmt9), installing nothing else: the machine that built it
# has them all. A simulation: nothing is installed.
plan=$(apt-get -s install "$deb" 2>&1) || { echo "$plan" >&2; echo "package_test: apt cannot install the package" >&2; exit 1; }
others=$(echo "$plan" | grep '^Inst ' | grep -v '^Inst smmu-vp ' || true)
[ -z "$others" ] || { echo "$others" >&2; echo "package_test: apt would need more packages than this machine has" >&2; exit 1; }

# The installed CLI must find its profiles by itself.
unset SMMU_VP_PROFILES
root=$work/root
dpkg-deb -x "$deb" "$root"
for f in usr/bin/smmu-vp usr/include/smmu_vp/smmu/smmu.h usr/share/smmu-vp/platform/scenarios/default.json \
         usr/share/doc/smmu-vp/embedding.md; do
  [ -e "$root/$f" ] || { echo "package_test: /$f is not in the package" >&2; exit 1; }
done
[ -n "$(find "$root/usr" -name 'libsmmu_vp.so.*' -print -quit)" ] || { echo "package_test: no libsmmu_vp.so.* in the package" >&2; exit 1; }
[ -n "$(find "$root/usr" -path '*/cmake/smmu_vp/smmu_vpConfig.cmake' -print -quit)" ] || { echo "package_test: no CMake package in the package" >&2; exit 1; }

cli=$root/usr/bin/smmu-vp
grep -q kunpeng920 <<<"$("$cli" profile list)" || { echo "package_test: the installed CLI does not find the installed profiles" >&2; exit 1; }
"$cli" run "$root/usr/share/smmu-vp/platform/scenarios/default.json" --out "$work/out" >"$work/run.log" 2>&1 \
  || { cat "$work/run.log" >&2; exit 1; }
[ -s "$work/out/stats.json" ] || { echo "package_test: the run wrote no stats.json" >&2; exit 1; }
echo "package_test: the packaged CLI ran default.json into $work/out"
