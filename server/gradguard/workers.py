"""``gradguard check``'s worker processes: a file that crashes one costs that file, never the run.

Every analysis runs in a child process, with ``--jobs 1`` too: a crash in compiled code (a C
stack overflow, a segfault, the kernel's out-of-memory killer) ends only the child. Children take
runs of neighbouring files (they import the same modules, loaded once) and send each file's result
as soon as it is done, so the parent always knows which file a child was on: when a child dies,
that file is reported as an internal error, the files it had already done keep their results, and
the rest of its run goes to a fresh child.
"""
from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from collections import deque
from multiprocessing.connection import wait
from typing import Callable, Optional

# The test suite's way to crash a worker on purpose: a file whose name is this variable's value
# makes the child abort (``tests/test_isolation.py``). Never set it otherwise.
CRASH_ON = "GRADGUARD_TEST_CRASH_ON"


def _context():
    # fork where it is safe and cheap (Linux: the child starts with the parent's modules loaded);
    # elsewhere the platform's default
    if sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


def die_with_parent(parent: int) -> None:
    """Linux: the kernel kills this process when ``parent``, the process that started it, ends,
    even while this one is stopped (SIGSTOP). A parent killed outright (SIGKILL, the out-of-memory
    killer) cannot end its children itself, and a stopped child would wait forever."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # it ended before the request took effect
        os._exit(1)


def _serve(conn, analyse: Callable[[str], tuple], debug: bool, parent: int) -> None:
    """In the child: runs of paths arrive, one result goes back per path, then ``None``."""
    import faulthandler

    die_with_parent(parent)

    if debug:  # the crash's Python traceback on the process's stderr (sys.stderr may be redirected)
        faulthandler.enable(sys.__stderr__ if sys.__stderr__ is not None else 2)
    crash_on = os.environ.get(CRASH_ON)
    while True:
        run = conn.recv()
        if run is None:
            return
        for path in run:
            if crash_on and os.path.basename(path) == crash_on:
                os.abort()
            conn.send(analyse(path))
        conn.send(None)


class _Child:
    __slots__ = ("process", "conn", "run", "done")

    def __init__(self, context, analyse, debug: bool):
        parent_end, child_end = context.Pipe()
        self.process = context.Process(target=_serve, args=(child_end, analyse, debug, os.getpid()), daemon=True)
        self.process.start()
        child_end.close()
        self.conn, self.run, self.done = parent_end, [], 0

    def give(self, run: list) -> None:
        self.run, self.done = run, 0
        self.conn.send([path for path, _ in run])

    def stop(self) -> None:
        try:
            self.conn.send(None)
        except OSError:
            pass
        self.conn.close()
        self.process.join()


def how_it_died(exitcode: Optional[int]) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            return f"signal {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"signal {-exitcode}"
    return f"exit code {exitcode}"


def run_isolated(runs: list, jobs: int, analyse: Callable[[str], tuple], record: Callable[[str, Optional[str], tuple], None],
                 died: Callable[[str, str], tuple], debug: bool = False,
                 key: Optional[Callable[[str], object]] = None) -> None:
    """Analyse every ``(path, digest)`` of ``runs`` (lists of them) in up to ``jobs`` children,
    calling ``record(path, digest, result)`` for each; a file whose child died gets
    ``died(path, how)`` as its result. ``key(path)``: the project of a run's files; a child
    that is done asks first for more of its project, then for a project no other child is on
    (each child loads the modules of its projects once: two children on one project load them
    twice)."""
    context = _context()
    pending = deque(run for run in runs if run)
    children: list[_Child] = []

    def next_run(child: Optional[_Child]) -> list:
        if key is None or len(pending) == 1:
            return pending.popleft()
        mine = key(child.run[0][0]) if child is not None and child.run else None
        busy = {key(c.run[0][0]) for c in children if c is not child and c.run}
        fallback = None
        for i, run in enumerate(pending):
            project = key(run[0][0])
            if project == mine:
                fallback = i
                break
            if fallback is None and project not in busy:
                fallback = i
                if mine is None:
                    break
        run = pending[fallback or 0]
        del pending[fallback or 0]
        return run

    try:
        while pending or children:
            while pending and len(children) < jobs:
                child = _Child(context, analyse, debug)
                child.give(next_run(None))
                children.append(child)
            for conn in wait([c.conn for c in children]):
                child = next(c for c in children if c.conn is conn)
                try:
                    result = conn.recv()
                except (EOFError, OSError):  # the child died, on its current file
                    child.conn.close()
                    child.process.join()
                    children.remove(child)
                    if child.done < len(child.run):
                        path, digest = child.run[child.done]
                        record(path, digest, died(path, how_it_died(child.process.exitcode)))
                        rest = child.run[child.done + 1:]
                        if rest:
                            pending.appendleft(rest)
                    continue
                if result is None:  # its run is done
                    if pending:
                        child.give(next_run(child))
                    else:
                        child.stop()
                        children.remove(child)
                    continue
                path, digest = child.run[child.done]
                child.done += 1
                record(path, digest, result)
    finally:
        for child in children:
            child.process.kill()
            child.process.join()
