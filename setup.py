"""Builds GradGuard: pure Python by default, its engine compiled by Cython with GRADGUARD_COMPILE=1.

The convention of compiled Python tools (black and mypy with mypyc): ``pip install .`` is quick and
pure Python; the wheels the project ships are compiled (``GRADGUARD_COMPILE=1 python -m build``,
or cibuildwheel with the configuration in pyproject.toml), the same sources 1.2x faster.

The metadata is in pyproject.toml; this file only adds the compiled modules and asks for Cython
when they are wanted (setuptools passes ``setup_requires`` to pip's isolated build environment).
Every module but the language server's (asyncio glue, no time spent there) and the package's
``__init__``/``__main__`` is compiled; the ``.py`` files ship too, for tracebacks and editors. An
editable install (``pip install -e .``: the tests run the sources you edit) is never compiled.
With GRADGUARD_COMPILE=1 a failed compile fails the build: a shipped wheel is never silently slow.
"""
import os
import sys
from pathlib import Path

from setuptools import Extension, setup

PACKAGE = Path("server") / "gradguard"
COMPILE = os.environ.get("GRADGUARD_COMPILE", "") not in ("", "0") and "editable_wheel" not in sys.argv
CYTHON = "cython>=3.1"


def compiled_modules() -> list[str]:
    """The module paths, relative to the project, that are compiled."""
    return sorted(str(p) for folder in (PACKAGE, PACKAGE / "rules") for p in folder.glob("*.py")
                  if p.name not in ("__init__.py", "__main__.py"))


def build_ext_class():
    """Cython's build_ext, or None while pip is only asking for the build requirements."""
    try:
        from Cython.Distutils import build_ext
    except ImportError:
        return None
    return build_ext


def extensions() -> list[Extension]:
    # -g0: no debug information (it would make the wheel 5x larger)
    flags = [] if sys.platform == "win32" else ["-g0"]
    return [Extension(".".join(Path(path).with_suffix("").parts[1:]), [path], extra_compile_args=flags)
            for path in compiled_modules()]


if not COMPILE:
    setup()
else:
    # While pip only asks for the build requirements, Cython is not there yet: setup_requires
    # tells it (setuptools' build backend collects it); then pip builds with Cython installed.
    build_ext = build_ext_class()
    setup(
        setup_requires=[CYTHON],
        **({} if build_ext is None else dict(
            ext_modules=extensions(),
            # the C files go to the build folder, not next to the sources (nor into the sdist)
            cmdclass={"build_ext": build_ext},
            options={"build_ext": {"parallel": os.cpu_count() or 1, "cython_c_in_temp": True,
                                   "cython_directives": {"language_level": "3"}}},
        )),
    )
