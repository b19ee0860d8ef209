#!/usr/bin/env bash
# The installed package as another project sees it (issue 33,
# docs/embedding.md): `cmake --install` into an empty prefix, then
#  1. only the public headers are there, and each compiles on its own with
#     the flags pkg-config gives for smmu_vp (no internal header leaks: any
#     include of one that was not installed fails here);
#  2. a program built with pkg-config alone links against libsmmu_vp.so and
#     runs (SmmuConfig::validate's InvalidConfig; sc_main, as SystemC's
#     library brings main(), but no elaboration);
#  3. examples/embed configures with find_package(smmu_vp CONFIG) against the
#     prefix, builds, and runs to "every check passed".
# Usage: install_test.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -euo pipefail
build=$1
src=$2
work=$3
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log"

inc=$prefix/include/smmu_vp
pc_dir=$(dirname "$(find "$prefix" -name smmu_vp.pc | head -1)")
export PKG_CONFIG_PATH=$pc_dir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
cflags=$(pkg-config --cflags smmu_vp)
# As words, with pkg-config's escapes of spaces in paths honoured.
eval "flags=($(pkg-config --cflags --libs smmu_vp))"
libdir=$(pkg-config --variable=libdir smmu_vp)
[ -e "$libdir/libsmmu_vp.so" ] || { echo "install_test: no libsmmu_vp.so in pkg-config's libdir $libdir" >&2; exit 1; }

# 1. Each public header alone.
headers=$(cd "$inc" && find . -name '*.h' | sed 's|^\./||' | sort)
n=$(echo "$headers" | wc -l)
for internal in smmu/smmu_impl.h smmu/translator.h smmu/tlb.h common/payload.h; do
  [ ! -e "$inc/$internal" ] || { echo "install_test: internal header $internal was installed" >&2; exit 1; }
done
echo "$headers" | xargs -P "$(nproc)" -I{} sh -c \
  'printf "#include \"%s\"\n" "$1" | c++ -std=c++17 -Wall -Wextra -Werror -fsyntax-only '"$cflags"' -x c++ - \
     || { echo "install_test: $1 does not compile on its own" >&2; exit 255; }' _ {}
echo "install_test: $n public headers compile on their own"

# 2. pkg-config alone.
cat >"$work/pc_main.cc" <<'CC'
#include "smmu/smmu_config.h"
#include <cstdio>
// libsystemc provides main() and calls this (declared so in <systemc>).
extern "C" int sc_main(int, char*[]) {
  smmu_vp::smmu::SmmuConfig c;
  c.cmdq.lanes = 0;
  try {
    c.validate();
  } catch (const smmu_vp::InvalidConfig& e) {
    std::printf("%s\n", e.what());
    return e.field() == "cmdq.lanes" ? 0 : 1;
  }
  return 1;
}
CC
c++ -std=c++17 "$work/pc_main.cc" -o "$work/pc_main" "${flags[@]}"
LD_LIBRARY_PATH=$libdir "$work/pc_main"
echo "install_test: a program built with pkg-config links and runs"

# 3. The out-of-tree example.
cmake -S "$src/examples/embed" -B "$work/embed" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
  >"$work/embed-configure.log" 2>&1 || { cat "$work/embed-configure.log" >&2; exit 1; }
cmake --build "$work/embed" -j "$(nproc)" >"$work/embed-build.log" || { cat "$work/embed-build.log" >&2; exit 1; }
"$work/embed/embed_example"
