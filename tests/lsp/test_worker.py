"""The server's machinery without a client: the job queue, the analysis process (cancelled
mid-run, restarted after it dies) and the line map hovers use on edited text."""
from __future__ import annotations

import asyncio
import os
import signal
import threading
import time

from gradguard.lsp.analyser import Analyser, Job
from gradguard.lsp.linemap import LineMap
from gradguard.lsp.worker import Worker


def long_program(functions: int = 600) -> str:
    """Many small functions called one after another: many abstract statements, and a GG101 at
    the end. (Called one inside another, the calls past the depth and budget bounds would be
    unknown, and an unknown value proves no error.)"""
    lines = ["import torch", "w = torch.randn(3, requires_grad=True)"]
    for i in range(functions):
        lines += [f"def step{i}(x):", "    for j in range(3):", "        x = x * w + j", "    return x"]
    lines += ["x = w"] + [f"x = step{i}(x)" for i in range(functions)]
    lines += ["loss = x.sum()", "loss.backward()", "loss.backward()"]
    return "\n".join(lines) + "\n"


def test_newest_job_first_and_replaced_jobs_answer_none():
    async def main():
        worker = Worker("test-worker")
        gate, order = threading.Event(), []
        blocker = worker.submit("busy", lambda: gate.wait(5))
        await asyncio.sleep(0.05)  # the blocker is running: the rest wait
        old = worker.submit("a", lambda: order.append("a-old") or "a-old")
        b = worker.submit("b", lambda: order.append("b") or "b")
        new = worker.submit("a", lambda: order.append("a-new") or "a-new")
        gate.set()
        results = await asyncio.gather(blocker, old, b, new)
        worker.close()
        return results, order

    results, order = asyncio.run(main())
    assert results[1:] == [None, "b", "a-new"]
    assert order == ["a-new", "b"]  # the most recently submitted first; the replaced one never ran


def test_analysis_process_is_cancelled_mid_run_and_serves_again(tmp_path):
    analyser = Analyser()
    try:
        job = Job((long_program(),), str(tmp_path / "long.py"), str(tmp_path), False)
        start = time.monotonic()
        full = analyser.run(job, cancel=lambda: False)
        full_time = time.monotonic() - start
        assert [f.code for f in full.findings] == ["GG101"] and full.facts is not None

        asked = []

        def cancel():
            asked.append(time.monotonic())
            return len(asked) > 1  # wanted for one poll, then stale

        start = time.monotonic()
        # a new text: the first one's syntax tree is reused, and the rest is over within a poll
        edited = Job((long_program() + "# edited\n",), job.path, job.root, False)
        stopped = analyser.run(edited, cancel)
        assert stopped.cancelled and not stopped.findings
        assert time.monotonic() - start < max(0.5, full_time / 2), (time.monotonic() - start, full_time)
        again = analyser.run(job, cancel=lambda: False)
        assert [f.code for f in again.findings] == ["GG101"]
    finally:
        analyser.stop()


def test_diagnostics_job_finds_the_same_without_the_hover_index(tmp_path):
    analyser = Analyser()
    try:
        program = long_program(20)
        job = Job((program,), str(tmp_path / "p.py"), str(tmp_path), False, facts=False)
        plain = analyser.run(job, cancel=lambda: False)
        indexed = analyser.run(Job((program,), job.path, job.root, False, facts=True), cancel=lambda: False)
        assert plain.facts is None and indexed.facts is not None
        assert [f.code for f in plain.findings] == ["GG101"]
        assert plain.findings == indexed.findings
    finally:
        analyser.stop()


def test_analysis_process_that_dies_is_replaced(tmp_path):
    analyser = Analyser()
    try:
        job = Job((long_program(),), str(tmp_path / "long.py"), str(tmp_path), False)
        analyser.start()
        pid = analyser._proc.pid

        def kill_once():
            if analyser._proc is not None and analyser._proc.pid == pid and analyser._proc.poll() is None:
                os.kill(pid, signal.SIGKILL)
            return False

        died = analyser.run(job, kill_once)
        assert died.crashed and not died.findings
        after = analyser.run(job, cancel=lambda: False)
        assert [f.code for f in after.findings] == ["GG101"] and analyser.restarts == 1
    finally:
        analyser.stop()


def test_source_errors_come_back_as_messages(tmp_path):
    analyser = Analyser()
    try:
        outcome = analyser.run(Job(("def f(:\n",), str(tmp_path / "bad.py"), str(tmp_path), False), lambda: False)
        assert outcome.error and "syntax error" in outcome.error and outcome.error_line == 1
    finally:
        analyser.stop()


def test_line_map_keeps_lines_outside_the_edit():
    old = ["a", "b", "c", "d", "e"]
    new = ["a", "b", "X", "Y", "d", "e"]  # "c" replaced by two lines
    lines = LineMap(old, new)
    assert [lines.to_old(n) for n in range(1, 7)] == [1, 2, None, None, 4, 5]
    assert [lines.to_new(n) for n in range(1, 6)] == [1, 2, None, 5, 6]
    same = LineMap(old, old)
    assert [same.to_new(n) for n in range(1, 6)] == [1, 2, 3, 4, 5]
    appended = LineMap(["a"], ["a", "a"])  # ambiguous repeats: never both head and tail
    assert appended.to_new(1) in (1, 2) and appended.to_old(2) in (None, 1)
