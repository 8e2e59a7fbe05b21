"""The analysis process: analyses run in a child process, never in the server's.

Why a process and not a thread: the interpreter lock. A thread analysing holds it through every
long C call (``ast.parse`` of a 4,000-line file alone is tens of milliseconds) and through the
collector's passes over the module cache (100-200 ms), and a hover waits for each. In its own
process the analysis shares nothing with the event loop; it is also where memory is bounded
(the child is replaced when it grows past ``MAX_RSS_MB``) and where a runaway analysis is
ended (``HARD_LIMIT_SECONDS``).

The child (``python -m gradguard.lsp.analyser``) keeps its module cache from one analysis to the
next. Messages are pickled frames over its stdin and stdout: jobs and cancellations in, outcomes
out. What comes back is plain data: findings, the hover index (``facts.Facts``), or why not. A
newer version of the document stops the running analysis: the parent sends a cancellation,
which the child's reader thread records and the engine's ``cancel`` hook sees.
"""
from __future__ import annotations

import atexit
import gc
import os
import pickle
import queue
import struct
import subprocess
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import BinaryIO, Callable, Optional

from ..workers import CRASH_ON, how_it_died

MAX_RSS_MB = 400  # the child is replaced after an analysis that leaves it larger
HARD_LIMIT_SECONDS = 120.0  # an analysis still running then is ended with its process
POLL_SECONDS = 0.005  # how often the parent looks whether the running analysis is still wanted
PAUSE_SECONDS = 1.0  # no job for this long: the child looks whether a full collection is due
FULL_EVERY = 16  # and after this many jobs in a row
FULL_GROWTH = 50_000  # objects kept since the last full collection that make one due (some 7 MB)
_HEADER = struct.Struct("<Q")
_PACKAGE_HOME = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@dataclass
class Job:
    texts: tuple[str, ...]
    path: str
    root: Optional[str]
    notebook: bool
    facts: bool = True  # build the hover index too
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
    token: int = 0


def _send(stream: BinaryIO, message) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _receive(stream: BinaryIO):
    """The next message, or None at the end of the stream."""
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    size, = _HEADER.unpack(header)
    data = stream.read(size)
    return pickle.loads(data) if len(data) == size else None


def _rss_mb() -> float:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, AttributeError):
        try:
            import resource
        except ImportError:  # Windows: no bound from here (the hard time limit still holds)
            return 0.0
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# --- the child -------------------------------------------------------------------------------------

def serve(stdin: BinaryIO, stdout: BinaryIO) -> None:
    """The child's loop: one job in, one outcome out. A reader thread takes the messages, so a
    cancellation arrives while an analysis runs. Automatic collection is off: the young
    generations are collected after each job, and what survives them (loaded modules, outlines)
    is frozen out of later passes. A full collection, which would scan the loaded modules' trees
    (half a second, delaying the next job), runs only when the objects kept have grown by
    ``FULL_GROWTH`` since the last one, looked at when no job comes for a while or after
    ``FULL_EVERY`` jobs in a row. The engine's call memo is emptied after each job: it keeps the
    syntax trees of the functions it saw, each version of an edited file's included, and measured
    on real files, re-analysis costs the same without it."""
    from ..analysis import Cancelled, analyze_cells, analyze_source
    from ..engine import forget_calls
    from ..sources import SourceError


    jobs: queue.Queue = queue.Queue()
    stopped = [0]  # the token of the job to stop
    crash_on = os.environ.get(CRASH_ON)  # the test suite's planted crash (never set otherwise)

    def read() -> None:
        while (message := _receive(stdin)) is not None:
            if isinstance(message, Job):
                jobs.put(message)
            else:
                stopped[0] = message
        jobs.put(None)

    threading.Thread(target=read, daemon=True).start()
    gc.freeze()  # the imports live as long as the process: keep them out of full passes
    gc.disable()
    kept = [gc.get_freeze_count()]  # after the last full collection

    def collect_if_grown() -> None:
        if gc.get_freeze_count() > kept[0] + FULL_GROWTH:  # a walk over them: milliseconds
            gc.unfreeze()
            gc.collect()
            gc.freeze()
            kept[0] = gc.get_freeze_count()

    since_full = 0
    while True:
        try:
            job = jobs.get(timeout=PAUSE_SECONDS) if since_full else jobs.get()
        except queue.Empty:
            collect_if_grown()
            since_full = 0
            continue
        if job is None:
            return
        cancel = lambda: stopped[0] == job.token  # noqa: E731 - read by the engine now and then
        if crash_on and os.path.basename(job.path) == crash_on:
            os.abort()
        try:
            if job.notebook:
                analysis = analyze_cells(list(job.texts), job.path, job.root, facts=job.facts, cancel=cancel)
            else:
                analysis = analyze_source(job.texts[0], job.path, job.root, facts=job.facts, cancel=cancel)
            outcome = Outcome(findings=analysis.findings, facts=analysis.facts)
            del analysis
        except Cancelled:
            outcome = Outcome(cancelled=True)
        except SourceError as exc:
            outcome = Outcome(error=exc.message, error_line=exc.line)
        except Exception:  # an engine bug: reported, and the next job still runs
            outcome = Outcome(crashed=traceback.format_exc())
        outcome.rss_mb, outcome.token = _rss_mb(), job.token
        try:
            _send(stdout, outcome)
        except (OSError, ValueError):
            return
        del outcome
        forget_calls()
        gc.collect(1)
        gc.freeze()
        since_full += 1
        if since_full >= FULL_EVERY:
            collect_if_grown()
            since_full = 0


# --- the parent ------------------------------------------------------------------------------------

class Analyser:
    """The parent's handle on the child; ``run`` is called from one thread (the worker) only."""

    def __init__(self) -> None:
        self._proc: Optional[subprocess.Popen] = None
        self._outcomes: queue.Queue = queue.Queue()
        self._next = 0
        self._lock = threading.Lock()  # start/stop may come from the event loop too
        self.restarts = 0
        atexit.register(self.stop)  # the server's exit ends a child still analysing

    def start(self) -> None:
        with self._lock:
            if self._proc is not None and self._proc.poll() is None:
                return
            self._stop()
            # The child imports what the server imported (bundled or installed libraries) and
            # runs from the folder holding this package, never from the user's project, whose
            # files must not be imported.
            here = os.getcwd()
            env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p and p != here))
            self._proc = subprocess.Popen([sys.executable, "-m", "gradguard.lsp.analyser"], env=env, cwd=_PACKAGE_HOME,
                                          stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            self._outcomes = outcomes = queue.Queue()
            stdout = self._proc.stdout

            def read() -> None:
                while True:
                    try:
                        message = _receive(stdout)
                    except (OSError, ValueError, pickle.UnpicklingError, EOFError):
                        message = None
                    outcomes.put(message)
                    if message is None:
                        return

            threading.Thread(target=read, name="gradguard-analysis-reader", daemon=True).start()

    def stop(self) -> None:
        with self._lock:
            self._stop()

    def _stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        for stream in (proc.stdin, proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        proc.kill()
        proc.wait(timeout=10)

    def cancel(self) -> None:
        """Stop whatever runs now (the server is shutting down; its exit ends the child)."""
        proc = self._proc
        if proc is not None:
            try:
                _send(proc.stdin, self._next)
            except (OSError, ValueError):
                pass

    def run(self, job: Job, cancel: Callable[[], bool]) -> Outcome:
        """Analyse in the child, stopping it as soon as ``cancel()`` says the job is stale."""
        self.start()
        proc, outcomes = self._proc, self._outcomes
        self._next += 1
        job.token = self._next
        started, cancelled = time.monotonic(), False
        try:
            _send(proc.stdin, job)
        except (OSError, ValueError) as exc:
            return self._restart(f"the analysis process failed ({exc})")
        while True:
            try:
                outcome = outcomes.get(timeout=POLL_SECONDS)
            except queue.Empty:
                if not cancelled and cancel():
                    cancelled = True
                    try:
                        _send(proc.stdin, job.token)
                    except (OSError, ValueError):
                        pass
                if time.monotonic() - started > HARD_LIMIT_SECONDS:
                    return self._restart(f"the analysis ran over {HARD_LIMIT_SECONDS:.0f} s and was stopped")
                continue
            if outcome is None:
                return self._restart(f"the analysis process died ({how_it_died(proc.wait())})")
            if outcome.token == job.token:
                break
        if outcome.rss_mb > MAX_RSS_MB:
            self.stop()  # a fresh one starts with the next job
            self.restarts += 1
        return outcome

    def _restart(self, why: str) -> Outcome:
        self.stop()
        self.restarts += 1
        return Outcome(crashed=why)


if __name__ == "__main__":
    # through the package, so that the messages' classes are gradguard.lsp.analyser's, not __main__'s
    from gradguard.lsp.analyser import serve as _serve
    _serve(sys.stdin.buffer, sys.stdout.buffer)
