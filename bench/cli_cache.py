"""``gradguard check`` cold vs warm cache, and --jobs 1 vs all cores, as users run it.

    python bench/cli_cache.py [PATH ...]      (default: the real-code corpus, bench/real/.corpus)

Each run is a child process; its CPU time (user + system, workers included) and wall time are
printed. "cold" starts from an empty cache folder, "warm" re-checks the unchanged tree with it.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(REPO, "bench", "real", ".corpus")


def run(args: list[str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    subprocess.run([sys.executable, "-m", "gradguard", "check", "-q", "--exit-zero", *args],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env={**os.environ, "PYTHONPATH": os.path.join(REPO, "server")}, check=False)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="*", default=[CORPUS])
    args = parser.parse_args()
    lines = files = 0
    for path in args.paths:
        for d, _, names in os.walk(path):
            for name in names:
                if name.endswith(".py"):
                    files += 1
                    with open(os.path.join(d, name), "rb") as fh:
                        lines += fh.read().count(b"\n")
    print(f"{files:,} .py files, {lines:,} lines under {', '.join(args.paths)}")
    cores = os.cpu_count() or 1
    for jobs in sorted({1, cores}):
        cache = tempfile.mkdtemp(prefix="gradguard-cache-")
        try:
            flags = ["--jobs", str(jobs), "--cache-dir", cache, *args.paths]
            cold_cpu, cold_wall = run(flags)
            warm_cpu, warm_wall = run(flags)
        finally:
            shutil.rmtree(cache, ignore_errors=True)
        print(f"--jobs {jobs}: cold {cold_cpu:7.2f} CPU-s {cold_wall:7.2f} s wall | warm {warm_cpu:6.2f} CPU-s "
              f"{warm_wall:6.2f} s wall | warm is {cold_cpu / max(warm_cpu, 1e-9):.0f}x cheaper (target >= 20x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
