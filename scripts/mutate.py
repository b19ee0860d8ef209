#!/usr/bin/env python3
"""Mutation testing, on demand (not in CI): does the suite fail when the code is wrong?

Applies each mutant of tests/mutants/mutants.json (a small semantic change a
real bug could be) to a clean tree, one at a time: rebuilds incrementally in
its own build directory, runs the mutant's targeted tests, then (with --full)
the whole suite if they all passed, and restores the file whatever happens.
Prints the kill table (markdown) and the score: mutants killed over those
that compiled and are not marked equivalent.

  scripts/mutate.py [--build build-mutants] [--jobs 2] [--full] [--only ID ...] [--list]

A mutant is {"id", "file", "find", "replace", "tests", "why"}: `find` must
occur exactly once in `file` (a mutant whose text is gone is reported stale,
not run); `tests` is a ctest -R regular expression naming the tests that
should kill it. docs/testing.md says how to add one.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MUTANTS = os.path.join(ROOT, "tests", "mutants", "mutants.json")


def sh(cmd, timeout=None):
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    return r.returncode, r.stdout + r.stderr


def configure(build):
    if os.path.exists(os.path.join(ROOT, build, "CMakeCache.txt")):
        return
    print(f"configuring {build} (the first build takes a few minutes)", file=sys.stderr)
    rc, out = sh(["cmake", "-S", ".", "-B", build, "-DCMAKE_BUILD_TYPE=Release"])
    if rc != 0:
        sys.exit(f"cmake failed:\n{out[-3000:]}")


def build_tree(build, jobs):
    rc, out = sh(["cmake", "--build", build, "-j", str(jobs)])
    return rc == 0, out


def ctest(build, jobs, regex=None):
    cmd = ["ctest", "--test-dir", build, "-j", str(jobs), "--timeout", "600", "-E", "qemu_virt|sweep_slurm|sweep_parallel"]
    if regex:
        cmd += ["-R", regex]
    rc, out = sh(cmd)
    # "NNN - Suite.Name  # GetParam() = ... (Failed)": the test's name alone.
    failed = [l.split(" - ", 1)[1].split(" (")[0].split("  #")[0].strip()
              for l in out.splitlines() if " - " in l and ("(Failed" in l or "(Timeout" in l)]
    ran = "No tests were found" not in out
    return rc == 0, failed, ran


def run_one(m, a):
    path = os.path.join(ROOT, m["file"])
    original = open(path).read()
    if original.count(m["find"]) != 1:
        return "stale", f"`find` occurs {original.count(m['find'])} times"
    restore = lambda *_: open(path, "w").write(original)
    old_int = signal.signal(signal.SIGINT, lambda s, f: (restore(), sys.exit(130)))
    try:
        open(path, "w").write(original.replace(m["find"], m["replace"], 1))
        ok, out = build_tree(a.build, a.jobs)
        if not ok:
            return "invalid", "does not compile"
        passed, failed, ran = ctest(a.build, a.jobs, m["tests"])
        if not ran:
            return "stale", f"no test matches {m['tests']}"
        if not passed:
            return "killed", "targeted: " + ", ".join(failed[:3]) + (" ..." if len(failed) > 3 else "")
        if a.full:
            passed, failed, _ = ctest(a.build, a.jobs)
            if not passed:
                return "killed", "suite: " + ", ".join(failed[:3]) + (" ..." if len(failed) > 3 else "")
        return "survived", "targeted tests pass" + (" and the suite" if a.full else "")
    finally:
        restore()
        signal.signal(signal.SIGINT, old_int)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build-mutants", help="build directory of its own (default build-mutants)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--full", action="store_true", help="after the targeted tests pass, run the whole suite")
    ap.add_argument("--only", nargs="*", help="only these mutant ids")
    ap.add_argument("--list", action="store_true", help="list the mutants and stop")
    a = ap.parse_args()
    mutants = json.load(open(MUTANTS))
    if a.only:
        unknown = set(a.only) - {m["id"] for m in mutants}
        if unknown:
            sys.exit(f"no mutant {', '.join(sorted(unknown))} in {MUTANTS}")
        mutants = [m for m in mutants if m["id"] in a.only]
    if a.list:
        for m in mutants:
            print(f"{m['id']:<28} {m['file']}: {m['why']}")
        return
    rc, out = sh(["git", "status", "--porcelain", "--untracked-files=no"])
    if out.strip():
        sys.exit("the tree has uncommitted changes: commit or stash them first (a mutant is restored from the file as it is)")
    configure(a.build)
    ok, out = build_tree(a.build, a.jobs)
    if not ok:
        sys.exit(f"the unmutated tree does not build:\n{out[-3000:]}")
    rows = []
    for i, m in enumerate(mutants, 1):
        t0 = time.time()
        if m.get("equivalent"):
            verdict, detail = "equivalent", m["equivalent"]
        else:
            verdict, detail = run_one(m, a)
        rows.append((m, verdict, detail, time.time() - t0))
        print(f"[{i}/{len(mutants)}] {m['id']}: {verdict} ({detail}) {time.time() - t0:.0f} s", file=sys.stderr)
    build_tree(a.build, a.jobs)  # the build directory matches the restored tree again
    print("| mutant | file | what it breaks | verdict | by |")
    print("|---|---|---|---|---|")
    for m, verdict, detail, _ in rows:
        print(f"| `{m['id']}` | `{m['file']}` | {m['why']} | {verdict} | {detail} |")
    counted = [r for r in rows if r[1] in ("killed", "survived")]
    killed = sum(1 for r in counted if r[1] == "killed")
    print(f"\nscore: {killed} of {len(counted)} killed"
          + "".join(f"; {sum(1 for r in rows if r[1] == v)} {v}" for v in ("equivalent", "invalid", "stale")
                    if any(r[1] == v for r in rows)))
    sys.exit(0 if killed == len(counted) else 1)


if __name__ == "__main__":
    main()
