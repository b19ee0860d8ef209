#!/usr/bin/env python3
"""Compares two SMMU_VP_SHARED_LOG files, poll_sleep=false then true (run.sh).
Events (time of the access itself): L load, W store/RMW, M MMIO, I interrupt,
P poll completion (time of its last load), R a load made inside a poll
(every one in the loop, only the real ones when sleeping), D a DRAM write onto
a polled word (sleep only). Finds the first time whose multiset of L/W/M/I/P
events differs, and looks for the same-picosecond tie behind it: a load of
the polling core (R, in either log) at the same time as another core's write
to that line (W) or a DRAM write (D), before the difference."""
import sys
from collections import defaultdict
def load(p):
    g = defaultdict(list); r = defaultdict(list); d = defaultdict(list)
    for line in open(p):
        t, rest = line.split(" ", 1)
        t = int(t); rest = rest.strip()
        if rest.startswith("D "): d[t].append(rest)
        elif rest.split()[1] == "R": r[t].append(rest)
        else: g[t].append(rest)
    return g, r, d
(a, ar, _), (b, br, bd) = load(sys.argv[1]), load(sys.argv[2])
times = sorted(set(a) | set(b))
def line_of(e): return int(e.split()[2], 16) >> 6
for i, t in enumerate(times):
    if sorted(a.get(t, [])) == sorted(b.get(t, [])): continue
    print(f"first differing time {t} ps")
    for tt in times[max(0, i - 2): i + 2]:
        print(f"-- t={tt}  loop: {a.get(tt, [])}")
        print(f"   t={tt} sleep: {b.get(tt, [])}")
    # the cores and lines involved at t
    inv = set()
    for e in a.get(t, []) + b.get(t, []):
        f = e.split()
        if f[1] in ("W", "L", "P"): inv.add((f[0], line_of(e)))
    found = []
    for (c, ln) in inv:
        rt = sorted({tt for tt, es in list(ar.items()) + list(br.items()) if tt <= t and tt > t - 2_000_000
                     for e in es if e.split()[0] == c and line_of(e) == ln})
        for tt in rt:
            ws = [e for e in a.get(tt, []) + b.get(tt, []) if e.split()[1] == "W" and e.split()[0] != c and line_of(e) == ln]
            ds = [e for e in bd.get(tt, []) if e.split()[2] == c]
            if ws or ds: found.append((tt, c, hex(ln << 6), ws + ds))
    for f in sorted(set((x[0], x[1], x[2], tuple(x[3])) for x in found)):
        print(f"TIE at {f[0]} ps: core {f[1]} loads line {f[2]} while {list(f[3])}")
    # same-time writes by two cores to one line at t itself
    lines = defaultdict(set)
    for e in a.get(t, []) + b.get(t, []):
        f = e.split()
        if f[1] in ("W", "L", "P"): lines[line_of(e)].add(f[0])
    for ln, cs in lines.items():
        if len(cs) > 1: print(f"TIE at {t} ps: cores {sorted(cs)} on line {hex(ln << 6)}")
    if not found and not any(len(cs) > 1 for cs in lines.values()): print("NO TIE FOUND")
    break
else:
    print("identical multisets at every time")
