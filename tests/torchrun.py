"""Runs a program with real torch as ``python prog.py`` would, each run a fresh process, without
importing torch again for each: a zygote process imports torch once (and runs nothing with it,
so no thread pool exists yet) and forks a child per program, which runs it as ``__main__``.
Importing torch costs 1-3 CPU-seconds; a suite runs about a hundred single programs.

    ran = torchrun.run(path)            # .returncode, .stdout, .stderr, like subprocess.run
"""
from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ZYGOTE = r"""
import json, os, runpy, sys, time, traceback
import torch, numpy  # what every program imports: the reason for the zygote
proto = os.fdopen(os.dup(1), "w", buffering=1)
for line in sys.stdin:
    job = json.loads(line)
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            for fd, name in ((1, "stdout"), (2, "stderr")):
                f = os.open(job[name], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
                os.dup2(f, fd)
                os.close(f)
            sys.stdout = os.fdopen(1, "w", buffering=1)
            sys.stderr = os.fdopen(2, "w", buffering=1)
            os.chdir(job["cwd"])
            sys.argv = [job["path"], *job["args"]]
            sys.path[0] = os.path.dirname(os.path.abspath(job["path"]))
            runpy.run_path(job["path"], run_name="__main__")
        except SystemExit as e:
            if e.code is None or isinstance(e.code, int):
                code = e.code or 0
            else:
                print(e.code, file=sys.stderr)
                code = 1
        except BaseException as e:
            # the traceback from the program's own frames on, as python prints it
            tb = e.__traceback__
            while tb is not None and tb.tb_frame.f_code.co_filename != job["path"]:
                tb = tb.tb_next
            traceback.print_exception(type(e), e, tb or e.__traceback__)
            code = 1
        sys.stdout.flush(); sys.stderr.flush()
        os._exit(code)
    deadline = time.monotonic() + job["timeout"]
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            _, status = os.waitpid(pid, 0)
            break
        time.sleep(0.002)
    proto.write(json.dumps(os.waitstatus_to_exitcode(status)) + "\n")
"""

_zygote: subprocess.Popen | None = None


def _start() -> subprocess.Popen:
    global _zygote
    if _zygote is None or _zygote.poll() is not None:
        _zygote = subprocess.Popen([sys.executable, "-c", ZYGOTE], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, text=True)
        atexit.register(_zygote.kill)
    return _zygote


def run(path: Path | str, *args: str, cwd: Path | str | None = None,
        timeout: float = 300) -> subprocess.CompletedProcess:
    path = Path(path).resolve()
    zygote = _start()
    with tempfile.TemporaryDirectory() as tmp:
        out, err = os.path.join(tmp, "out"), os.path.join(tmp, "err")
        job = {"path": str(path), "args": list(args), "cwd": str(cwd or os.getcwd()), "stdout": out,
               "stderr": err, "timeout": timeout}
        zygote.stdin.write(json.dumps(job) + "\n")
        zygote.stdin.flush()
        reply = zygote.stdout.readline()
        if not reply:
            raise RuntimeError(f"the torch zygote died running {path}")
        code = json.loads(reply)
        with open(out, encoding="utf-8", errors="replace") as f_out, \
                open(err, encoding="utf-8", errors="replace") as f_err:
            return subprocess.CompletedProcess([sys.executable, str(path), *args], code,
                                               f_out.read(), f_err.read())
