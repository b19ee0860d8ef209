#!/usr/bin/env python3
"""Checks the source tree's include structure (docs/architecture.md, "Where
things live"):

1. The three include roots, models/, sw/ and platform/, share no folder name,
   so that an include path such as "smmu/smmu.h" names exactly one folder.
2. The folders of platform/ include each other in one direction only, in the
   order of LAYERS; platform/'s own files (platform.cc, containment,
   firmware_loader, invariants) are the layer "platform".
3. models/ includes only models/, and sw/ only sw/ and the register and
   descriptor headers of models/ it shares with the devices.
4. A header named *_internal.h is private to its folder (the QEMU port, for
   one, uses the SMMU driver through its public header only).

Usage: check_layout.py SOURCE_DIR. Exit 0 when the tree follows the rules;
1 with one line per broken rule otherwise."""
import pathlib
import re
import sys

ROOTS = ("models", "sw", "platform")
# Lowest first: a folder may include its own layer and those before it.
LAYERS = ("util", "config", "dmatrace", "devices", "hal_backend", "platform", "output", "cli")
PLATFORM_FILES = {"platform.h", "containment.h", "firmware_loader.h", "invariants.h"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)
SOURCES = (".h", ".hpp", ".c", ".cc", ".cpp")


def sources(root):
    return sorted(p for p in root.rglob("*") if p.suffix in SOURCES and p.is_file())


def includes(path):
    return INCLUDE.findall(path.read_text(errors="replace"))


def main(src):
    problems = []
    top = {r: {p.name for p in (src / r).iterdir() if p.is_dir()} for r in ROOTS}
    for i, a in enumerate(ROOTS):
        for b in ROOTS[i + 1:]:
            for name in sorted(top[a] & top[b]):
                problems.append(f"folder name '{name}' is in both {a}/ and {b}/: \"{name}/...\" would mean two folders")

    rank = {name: i for i, name in enumerate(LAYERS)}
    for folder in sorted(top["platform"]):
        if folder not in rank and sources(src / "platform" / folder):
            problems.append(f"platform/{folder}/ has no place in LAYERS (tests/layout/check_layout.py)")
    for path in sources(src / "platform"):
        rel = path.relative_to(src / "platform")
        layer = rel.parts[0] if len(rel.parts) > 1 else "platform"
        if layer not in rank:
            continue
        for inc in includes(path):
            first = inc.split("/")[0]
            target = "platform" if inc in PLATFORM_FILES else first if first in rank else None
            if target and rank[target] > rank[layer]:
                problems.append(f"platform/{rel} ({layer}) includes \"{inc}\" ({target}), a layer above it")

    for path in sources(src / "models"):
        for inc in includes(path):
            first = inc.split("/")[0]
            if "/" in inc and first not in top["models"]:
                problems.append(f"{path.relative_to(src)} includes \"{inc}\", outside models/")
    for path in sources(src / "sw"):
        for inc in includes(path):
            first = inc.split("/")[0]
            if "/" not in inc:
                continue
            if first in top["platform"] or (first not in top["sw"] and first not in top["models"]):
                problems.append(f"{path.relative_to(src)} includes \"{inc}\", outside sw/ and models/")
            elif first in top["models"] and not re.search(r"_(regs|registers)\.h$", inc):
                problems.append(f"{path.relative_to(src)} includes \"{inc}\": sw/ takes only the register and "
                                f"descriptor headers of models/")

    for root in ROOTS:
        for path in sources(src / root):
            folder = path.parent.relative_to(src / root).as_posix()
            for inc in includes(path):
                if inc.endswith("_internal.h") and "/" in inc and inc.rsplit("/", 1)[0] != folder:
                    problems.append(f"{path.relative_to(src)} includes \"{inc}\", private to another folder")

    for p in problems:
        print(p)
    if not problems:
        print("layout: include roots disjoint, platform/ layers in order, models/ and sw/ self-contained")
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: check_layout.py SOURCE_DIR")
    sys.exit(main(pathlib.Path(sys.argv[1])))
