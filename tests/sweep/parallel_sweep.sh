#!/usr/bin/env bash
# A planned sweep run by GNU parallel, as docs/studies.md ("Beyond one
# machine") shows: `parallel --joblog DIR/joblog --resume < DIR/jobs.txt`,
# then collect. The results equal the local runner's; a second `--resume`
# runs nothing again; collect names a point whose result is gone and exits 3,
# and running that point's line again completes the sweep.
# Needs the Debian package parallel (scripts/install-deps.sh).
# Usage: parallel_sweep.sh SMMU_VP SOURCE_DIR
set -uo pipefail
exe=${1:?smmu-vp binary}
src=${2:?source dir}
test_name=sweep_parallel
. "$(dirname "$0")/lib.sh"

need parallel parallel
need python3 python3

tmp=$(mktemp -d "${TMPDIR:-/tmp}/smmu-vp-parallel.XXXXXX")  # scratch directory, removed on exit
trap 'rm -rf "$tmp"' EXIT

write_sweep "$src" "$tmp/sweep.json"
"$exe" sweep "$tmp/sweep.json" --jobs 2 --out "$tmp/local" >"$tmp/local.txt" 2>"$tmp/local.err" ||
  { cat "$tmp/local.err" >&2; fail "the local sweep failed"; }
# Planned from another directory: the job lines must not depend on the cwd.
(cd / && "$exe" sweep plan "$tmp/sweep.json" --out "$tmp/plan" >/dev/null) || fail "sweep plan failed"
[ "$(wc -l <"$tmp/plan/jobs.txt")" -eq 4 ] || fail "jobs.txt should have a line per point"

(cd "$tmp" && parallel --will-cite --joblog "$tmp/plan/joblog" --resume -j 2 <"$tmp/plan/jobs.txt") ||
  fail "parallel reported failed jobs"
[ "$(tail -n +2 "$tmp/plan/joblog" | wc -l)" -eq 4 ] || fail "the joblog should list 4 jobs"
"$exe" sweep collect "$tmp/plan" >"$tmp/collect.txt" 2>"$tmp/collect.err" ||
  { cat "$tmp/collect.err" >&2; fail "sweep collect failed"; }
cmp -s "$tmp/collect.txt" "$tmp/local.txt" || fail "the collected table differs from the local runner's"
same_results "$tmp/local" "$tmp/plan"

# --resume: the jobs the joblog records as done are not run again.
(cd "$tmp" && parallel --will-cite --joblog "$tmp/plan/joblog" --resume -j 2 <"$tmp/plan/jobs.txt") ||
  fail "the resumed parallel failed"
[ "$(tail -n +2 "$tmp/plan/joblog" | wc -l)" -eq 4 ] || fail "--resume ran finished jobs again"

# A point whose result is lost is named by collect (exit 3) ...
rm "$tmp/plan/msi cmd__2/exit_status"
"$exe" sweep collect "$tmp/plan" >/dev/null 2>"$tmp/collect.err"
rc=$?
[ "$rc" -eq 3 ] || fail "collect with a point missing exited with $rc, not 3"
grep -q "policy=msi cmd cores=2: missing" "$tmp/collect.err" || { cat "$tmp/collect.err" >&2; fail "collect did not name the missing point"; }
# ... and running its line again (what an engine's retry does) completes the sweep.
sed -n 4p "$tmp/plan/jobs.txt" | parallel --will-cite -j 1 || fail "re-running the missing point failed"
"$exe" sweep collect "$tmp/plan" >/dev/null 2>&1 || fail "collect after the re-run failed"
same_results "$tmp/local" "$tmp/plan"
echo "$test_name: OK: 4 jobs by GNU parallel ($(parallel --version | head -1)), collected equal to the local sweep; --resume skips finished jobs; a missing point is named, and its re-run completes the sweep"
