"""The analysis process: analyses run in a child process, never in the server's.

Why a process and not a thread: the interpreter lock. A thread analysing holds it through every
long C call (``ast.parse`` of a 4,000-line file alone is tens of milliseconds) and through the
collector's passes over the module cache (100-200 ms), and a hover waits for each. In its own
process the analysis shares nothing with the event loop; it is also where memory is bounded
(the child is replaced when it grows past ``MAX_RSS_MB``) and where a runaway analysis is
ended (``HARD_LIMIT_SECONDS``).

The child keeps its module cache from one analysis to the next. What comes back is plain data:
findings, the hover index (``facts.Facts``) and the files read. A newer version of the document
stops the running analysis through a shared token the engine's ``cancel`` hook looks at.
"""
from __future__ import annotations

import gc
import multiprocessing
import os
import time
import traceback
from dataclasses import dataclass, field
from typing import Callable, Optional

MAX_RSS_MB = 400  # the child is replaced after an analysis that leaves it larger
HARD_LIMIT_SECONDS = 120.0  # an analysis still running then is ended with its process
POLL_SECONDS = 0.02  # how often the parent looks whether the running analysis is still wanted
PAUSE_SECONDS = 1.0  # no job for this long: the child collects all its garbage
FULL_EVERY = 16


@dataclass
class Job:
    texts: tuple[str, ...]
    path: str
    root: Optional[str]
    notebook: bool
    token: int = 0


@dataclass
class Outcome:
    findings: list = field(default_factory=list)
    facts: object = None  # facts.Facts, or None
    error: Optional[str] = None  # the input cannot be analysed (SourceError's message)
    error_line: Optional[int] = None
    cancelled: bool = False
    crashed: Optional[str] = None  # an internal error, a dead or runaway child
    rss_mb: float = 0.0


def _rss_mb() -> float:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, AttributeError):
        import resource
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _serve(conn, token) -> None:
    """The child's loop: one job in, one outcome out. Automatic collection is off; the young
    generations are collected after each job, all of them when no job comes for a while or after
    ``FULL_EVERY`` jobs in a row. The engine's call memo is emptied after each job: it keeps
    the syntax trees of the functions it saw, each version of an edited file's included, and
    measured on real files, re-analysis costs the same without it."""
    from ..analysis import Cancelled, analyze_cells, analyze_source
    from ..engine import forget_calls
    from ..sources import SourceError

    gc.freeze()  # the imports live as long as the process: keep them out of full passes
    gc.disable()
    since_full = 0
    while True:
        try:
            if since_full and not conn.poll(PAUSE_SECONDS):
                gc.collect()
                since_full = 0
            job: Job = conn.recv()
        except (EOFError, OSError):
            return
        cancel = lambda: token.value != job.token  # noqa: E731 - read by the engine now and then
        try:
            if job.notebook:
                analysis = analyze_cells(list(job.texts), job.path, job.root, facts=True, cancel=cancel)
            else:
                analysis = analyze_source(job.texts[0], job.path, job.root, facts=True, cancel=cancel)
            outcome = Outcome(findings=analysis.findings, facts=analysis.facts)
            del analysis
        except Cancelled:
            outcome = Outcome(cancelled=True)
        except SourceError as exc:
            outcome = Outcome(error=exc.message, error_line=exc.line)
        except Exception:  # an engine bug: reported, and the next job still runs
            outcome = Outcome(crashed=traceback.format_exc())
        outcome.rss_mb = _rss_mb()
        try:
            conn.send(outcome)
        except (OSError, ValueError):
            return
        del outcome
        forget_calls()
        since_full += 1
        if since_full >= FULL_EVERY:
            gc.collect()
            since_full = 0
        else:
            gc.collect(1)


class Analyser:
    """The parent's handle on the child; used from one thread (the worker) only."""

    def __init__(self) -> None:
        self._ctx = multiprocessing.get_context("spawn")  # no fork of a threaded server
        self._token = self._ctx.Value("q", 0, lock=False)
        self._proc = None
        self._conn = None
        self._next = 0
        self.restarts = 0

    def start(self) -> None:
        if self._proc is not None and self._proc.is_alive():
            return
        self.stop()
        parent, child = self._ctx.Pipe()
        self._proc = self._ctx.Process(target=_serve, args=(child, self._token), daemon=True,
                                       name="gradguard-analysis")
        self._proc.start()
        child.close()
        self._conn = parent

    def stop(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._proc is not None:
            if self._proc.is_alive():
                self._proc.terminate()
            self._proc.join(timeout=5)
            if self._proc.is_alive():
                self._proc.kill()
                self._proc.join(timeout=5)
            self._proc = None

    def run(self, job: Job, cancel: Callable[[], bool]) -> Outcome:
        """Analyse in the child, stopping it as soon as ``cancel()`` says the job is stale."""
        self.start()
        self._next += 1
        job.token = self._token.value = self._next
        started = time.monotonic()
        try:
            self._conn.send(job)
            while not self._conn.poll(POLL_SECONDS):
                if cancel():
                    self._token.value = 0
                if not self._proc.is_alive():
                    return self._restart(f"the analysis process ended (exit code {self._proc.exitcode})")
                if time.monotonic() - started > HARD_LIMIT_SECONDS:
                    return self._restart(f"the analysis ran over {HARD_LIMIT_SECONDS:.0f} s and was stopped")
            outcome: Outcome = self._conn.recv()
        except (EOFError, OSError) as exc:
            return self._restart(f"the analysis process failed ({exc})")
        if outcome.rss_mb > MAX_RSS_MB:
            self.stop()  # a fresh one starts with the next job
            self.restarts += 1
        return outcome

    def cancel(self) -> None:
        """Stop whatever runs now (the server is shutting down)."""
        self._token.value = 0

    def _restart(self, why: str) -> Outcome:
        self.stop()
        self.restarts += 1
        return Outcome(crashed=why)
