"""The real-code benchmark run against a compiled copy of GradGuard (Cython, sources unchanged).

    pip install cython        # and a C compiler
    python bench/real/compiled.py [throughput.py options]     e.g. --no-cli

Copies ``server/gradguard`` and the benchmark scripts to a temporary folder, compiles every module
there but the language server's (``compiled_modules``), and runs
``throughput.py`` from that copy, so that its ``gradguard`` (in-process and in ``gradguard check``
child processes) is the compiled one. It measures what a per-platform compiled build would give;
nothing in this working tree is changed or built. Exit status: throughput.py's, or 2 when Cython
or a compiler is missing.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PACKAGE = os.path.join(REPO, "server", "gradguard")


def compiled_modules() -> list[str]:
    """Every module of the package (the rules included) but its ``__init__``/``__main__`` and the
    language server's, which stays Python: the paths, relative to the package."""
    out = []
    for folder in ("", "rules"):
        out.extend(os.path.join(folder, name) for name in sorted(os.listdir(os.path.join(PACKAGE, folder)))
                   if name.endswith(".py") and name not in ("__init__.py", "__main__.py"))
    return out


def main(argv: list[str]) -> int:
    if importlib.util.find_spec("Cython") is None:
        print("compiled.py needs Cython: pip install cython (and a C compiler)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="gradguard-compiled-") as tmp:
        package = os.path.join(tmp, "server", "gradguard")
        shutil.copytree(PACKAGE, package,
                        ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.c"))
        os.makedirs(os.path.join(tmp, "bench", "real"))
        shutil.copy(os.path.join(REPO, "bench", "cli_cache.py"), os.path.join(tmp, "bench", "cli_cache.py"))
        for name in ("throughput.py", "corpus.py", "repos.txt"):
            shutil.copy(os.path.join(HERE, name), os.path.join(tmp, "bench", "real", name))
        start = time.monotonic()
        modules = compiled_modules()
        build = subprocess.run([sys.executable, "-m", "Cython.Build.Cythonize", "-3", "-q", "-i", "-j",
                                str(os.cpu_count() or 1), *modules],
                               cwd=package, capture_output=True, text=True, check=False)
        if build.returncode != 0:
            print(f"the compiled build failed:\n{build.stderr[-2000:]}", file=sys.stderr)
            return 2
        print(f"compiled {len(modules)} modules (all but the language server's) in {time.monotonic() - start:.0f} s wall")
        args = argv if any(a == "--corpus" or a.startswith("--corpus=") for a in argv) else \
            ["--corpus", os.path.join(HERE, ".corpus"), *argv]
        return subprocess.run([sys.executable, os.path.join(tmp, "bench", "real", "throughput.py"), *args],
                              check=False).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
