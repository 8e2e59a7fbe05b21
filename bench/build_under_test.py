"""The GradGuard a benchmark measures: the compiled wheel the project ships (GRADGUARD_COMPILE=1,
setup.py), or the working tree's sources (pure Python).

``folder(build)`` returns the folder to put first on ``sys.path`` and ``PYTHONPATH``. The wheel
is built from the working tree with ``pip wheel`` (Cython and setuptools come from PyPI, in pip's
isolated build environment; about 1.5 minutes on 2 cores) and installed into a folder under
``~/.cache/gradguard/bench-wheel/``, keyed by a hash of the files it is built from, so that an
unchanged tree is built once. A wheel whose engine did not compile is an error, not a slower
figure.
"""
from __future__ import annotations

import glob
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.path.join(os.path.expanduser("~"), ".cache", "gradguard", "bench-wheel")
BUILDS = ("wheel", "source")


def _inputs() -> list[str]:
    files = [os.path.join(REPO, name) for name in ("setup.py", "pyproject.toml")]
    files += glob.glob(os.path.join(REPO, "server", "gradguard", "**", "*"), recursive=True)
    return sorted(f for f in files if os.path.isfile(f) and "__pycache__" not in f)


def _key() -> str:
    h = hashlib.sha256(f"{sys.version}|{sysconfig.get_platform()}".encode())
    for path in _inputs():
        h.update(os.path.relpath(path, REPO).encode())
        with open(path, "rb") as f:
            h.update(hashlib.sha256(f.read()).digest())
    return h.hexdigest()[:16]


def folder(build: str) -> str:
    if build == "source":
        return os.path.join(REPO, "server")
    site = os.path.join(CACHE, _key())
    if not os.path.isdir(site):
        dist = site + ".dist"
        shutil.rmtree(dist, ignore_errors=True)
        print("building the wheel (pip wheel; once per version of the sources) ...", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", dist, REPO],
                       check=True, env=dict(os.environ, GRADGUARD_COMPILE="1"))
        wheel, = glob.glob(os.path.join(dist, "gradguard-*.whl"))
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", site + ".tmp",
                        wheel], check=True)
        if not _compiled(os.path.join(site + ".tmp", "gradguard")):
            raise SystemExit(f"{wheel}: the engine is not compiled")
        os.replace(site + ".tmp", site)
        shutil.rmtree(dist, ignore_errors=True)
    return site


def _compiled(package: str) -> list[str]:
    return glob.glob(os.path.join(package, "**", "*.so"), recursive=True) + \
        glob.glob(os.path.join(package, "**", "*.pyd"), recursive=True)


def describe(site: str) -> str:
    """What was measured, for the printed figures."""
    compiled = _compiled(os.path.join(site, "gradguard"))
    if not compiled:
        return f"GradGuard from {site} (pure Python)"
    return f"GradGuard from the wheel installed in {site} ({len(compiled)} compiled modules)"
