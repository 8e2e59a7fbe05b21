"""``gradguard check`` cold vs warm cache, and --jobs 1 vs all cores, as users run it.

    python bench/cli_cache.py [--build wheel|source] [PATH ...]   (default: the real-code corpus, bench/real/.corpus)

Each run is a child process; its CPU time (user + system, workers included) and wall time are
printed. "cold" starts from an empty cache folder, "warm" re-checks the unchanged tree with it.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

import build_under_test

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(REPO, "bench", "real", ".corpus")


def run(args: list[str], site: str) -> tuple[float, float, int]:
    """``gradguard check`` imported from ``site`` (``build_under_test.folder``): CPU-s (user +
    system, its workers included), wall s, and peak RSS in MB of its largest process (from
    ``wait4``: the wheel build, also a child of the benchmark, is not counted)."""
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "gradguard", "check", "-q", "--exit-zero", *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "PYTHONPATH": site})
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime, time.monotonic() - start, usage.ru_maxrss // 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="*", default=[CORPUS])
    parser.add_argument("--build", choices=build_under_test.BUILDS, default="wheel",
                        help="measure the wheel users install (default) or the working tree's sources")
    args = parser.parse_args()
    site = build_under_test.folder(args.build)
    print(build_under_test.describe(site))
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
            cold_cpu, cold_wall, _ = run(flags, site)
            warm_cpu, warm_wall, _ = run(flags, site)
        finally:
            shutil.rmtree(cache, ignore_errors=True)
        print(f"--jobs {jobs}: cold {cold_cpu:7.2f} CPU-s {cold_wall:7.2f} s wall | warm {warm_cpu:6.2f} CPU-s "
              f"{warm_wall:6.2f} s wall | warm is {cold_cpu / max(warm_cpu, 1e-9):.0f}x cheaper (target >= 20x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
