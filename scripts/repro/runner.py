"""Running smmu-vp: a scenario's own command (sweep or run), or one point with --set overrides."""
import concurrent.futures
import hashlib
import json
import os
import subprocess
import time


class Job:
    """One smmu-vp process: argv, its output directory and a log of stdout and stderr."""

    def __init__(self, key, argv, out):
        self.key, self.argv, self.out = key, argv, out
        self.returncode, self.seconds = None, 0.0

    @property
    def log(self):
        return self.out.rstrip("/") + ".log"


def set_args(overrides):
    args = []
    for key, value in overrides.items():
        args += ["--set", f"{key}={json.dumps(value)}"]
    return args


def scenario_job(cli, name, path, has_sweep, out_root):
    out = os.path.join(out_root, name)
    if has_sweep:
        argv = [cli, "sweep", path, "--out", out, "-j", "1"]
    else:
        argv = [cli, "run", path, "--quiet", "--out", out]
    return Job(name, argv, out)


def point_job(cli, name, path, overrides, out_root):
    """A run of one point: the sweep point's overrides then the study's, as --set flags."""
    text = json.dumps([name, overrides], sort_keys=True)
    key = hashlib.sha1(text.encode()).hexdigest()[:12]
    out = os.path.join(out_root, f"{name}-{key}")
    return Job(text, [cli, "run", path, "--quiet", "--out", out] + set_args(overrides), out)


def run_one(job):
    os.makedirs(os.path.dirname(job.out) or ".", exist_ok=True)
    start = time.monotonic()
    with open(job.log, "w") as log:
        try:
            job.returncode = subprocess.run(job.argv, stdout=log, stderr=subprocess.STDOUT).returncode
        except OSError as e:
            log.write(f"cannot start {job.argv[0]}: {e}\n")
            job.returncode = 127
    job.seconds = time.monotonic() - start
    return job


def run_all(jobs, parallel, progress=None):
    """Runs the jobs, `parallel` at a time; returns them with returncode and seconds set."""
    done = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
        for job in pool.map(run_one, jobs):
            done.append(job)
            if progress:
                progress(job, len(done), len(jobs))
    return done
