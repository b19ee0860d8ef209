#!/usr/bin/env python3
"""How well `smmu-vp trace import` recovers the DMA domains of iommu:map and
iommu:unmap events that name no device (docs/traces.md, "Domain recovery").

A capture from a kernel with the dma: events (6.12 and later) holds the
answer: each iommu:map is followed, on the same CPU, by the dma_map_* event
of the call that made it, and each iommu:unmap sits next to its
dma_unmap_*; those name the device. The script takes the answer from there,
removes the dma: events (what a 6.1 kernel would have logged), imports the
rest, and compares the device each map and unmap was given.

Recovered domains are named after attached devices in the order they were
attached, which need not be the order of their first maps; so the agreement
is counted under the naming of recovered domains to devices that agrees
best (a partition's accuracy), and the names as given are reported beside.

Usage: domain-recovery-accuracy.py SMMU_VP CAPTURE [--min-map F] [--min-unmap F]
Exit 1 when an agreement is below its minimum (a fraction), 2 on bad input.
"""
import argparse
import collections
import gzip
import itertools
import os
import re
import subprocess
import sys
import tempfile

EVENT = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+[\d.]+: (\w+): (.*)$")
IOVA = re.compile(r"iova=0x([0-9a-f]+) - 0x([0-9a-f]+)")
MAP_CALLS = ("dma_map_page", "dma_map_sg", "dma_alloc", "dma_map_resource")
UNMAP_CALLS = ("dma_unmap_page", "dma_unmap_sg", "dma_free", "dma_unmap_resource")
WINDOW = 40  # events of the same CPU searched on either side


def dma_addresses(rest):
    addrs = [int(a, 16) for a in re.findall(r"dma_addr=([0-9a-f]+)", rest)]
    m = re.search(r"dma_addrs=\{([^}]*)\}", rest)
    if m:
        addrs += [int(a, 16) for a in m.group(1).split(",") if a]
    return addrs


def answer(lines):
    """The device of each iommu map/unmap event, in order (None: not found)."""
    events = []
    for line in lines:
        m = EVENT.match(line)
        if m:
            events.append((int(m.group(3)), m.group(4), m.group(5)))
    by_cpu = collections.defaultdict(list)
    for i, e in enumerate(events):
        by_cpu[e[0]].append(i)
    truth = {}
    for idx in by_cpu.values():
        for k, i in enumerate(idx):
            _, name, rest = events[i]
            if name not in ("map", "unmap"):
                continue
            lo, hi = (int(x, 16) for x in IOVA.search(rest).groups())
            calls = MAP_CALLS if name == "map" else UNMAP_CALLS
            # A map comes before its call's event, an unmap before or after.
            order = list(range(k + 1, min(k + WINDOW, len(idx)))) + list(range(k - 1, max(k - WINDOW, -1), -1))
            truth[i] = None
            for j in order:
                _, n2, r2 = events[idx[j]]
                if n2 not in calls:
                    continue
                # dma_unmap_sg prints no address; a scatterlist's IOVA range
                # starts at most its length before the piece's.
                if n2 == "dma_unmap_sg" or any(lo - (1 << 20) <= a < hi + (1 << 20) for a in dma_addresses(r2)):
                    truth[i] = r2.split()[0]
                    break
    return [(events[i][1], truth[i]) for i in sorted(truth)]


def recovered(smmu_vp, lines, tmp):
    stripped = os.path.join(tmp, "without-dma.txt")
    with open(stripped, "w") as f:
        f.writelines(l for l in lines if ": dma_" not in l)
    out = os.path.join(tmp, "recovered.trace")
    r = subprocess.run([smmu_vp, "trace", "import", stripped, "-o", out, "--quiet"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"domain-recovery-accuracy: trace import failed ({r.returncode}): {r.stderr.strip()}")
    got = []
    with open(out) as f:
        for line in f:
            p = line.split()
            if len(p) > 1 and p[1] in ("iommu_map", "iommu_unmap"):
                dev = next((x[4:] for x in p if x.startswith("dev=")), None)
                got.append(("map" if p[1] == "iommu_map" else "unmap", dev))
    return got


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("smmu_vp")
    ap.add_argument("capture", help="ftrace text with dma: events (plain or .gz)")
    ap.add_argument("--min-map", type=float, default=0.0)
    ap.add_argument("--min-unmap", type=float, default=0.0)
    a = ap.parse_args()
    opener = gzip.open if a.capture.endswith(".gz") else open
    try:
        with opener(a.capture, "rt") as f:
            lines = f.readlines()
    except OSError as e:
        print(f"domain-recovery-accuracy: {a.capture}: {e}", file=sys.stderr)
        return 2
    truth = answer(lines)
    if not any(name.startswith("dma_") for name in (EVENT.match(l).group(4) for l in lines if EVENT.match(l))):
        print(f"domain-recovery-accuracy: {a.capture} has no dma: events to take the answer from", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        got = recovered(a.smmu_vp, lines, tmp)
    if [k for k, _ in got] != [k for k, _ in truth]:
        print("domain-recovery-accuracy: the import's iommu records do not follow the capture's", file=sys.stderr)
        return 2
    devices = sorted({d for _, d in truth if d})
    domains = sorted({d for _, d in got if d})
    best = (-1, {})
    for perm in itertools.permutations(devices, min(len(devices), len(domains))):
        naming = dict(zip(domains, perm))
        ok = sum(naming.get(g) == t for (_, g), (_, t) in zip(got, truth))
        if ok > best[0]:
            best = (ok, naming)
    naming = best[1]
    failed = False
    print(f"{a.capture}: {len(devices)} devices, {len(domains)} recovered domains")
    print("  best naming: " + ", ".join(f"{k} -> {v}" for k, v in sorted(naming.items())))
    for kind, minimum in (("map", a.min_map), ("unmap", a.min_unmap)):
        pairs = [(g, t) for (k, g), (_, t) in zip(got, truth) if k == kind and t]
        unknown = sum(1 for (k, _), (_, t) in zip(got, truth) if k == kind and not t)
        ok = sum(naming.get(g) == t for g, t in pairs)
        named = sum(g == t for g, t in pairs)
        frac = ok / len(pairs) if pairs else 1.0
        print(f"  {kind}s: {ok} of {len(pairs)} in the right domain ({100 * frac:.1f} %), "
              f"{named} under the names given; {unknown} without an answer")
        if frac < minimum:
            print(f"domain-recovery-accuracy: {kind}s {100 * frac:.1f} % < {100 * minimum:.1f} %", file=sys.stderr)
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
