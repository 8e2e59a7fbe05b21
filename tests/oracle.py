"""Ground truth for the fixture corpus: run programs under real torch and report what happened.

Usage::

    python tests/oracle.py PATH [PATH ...]        # prints one JSON object: {path: result}

Each PATH is a fixture: either a single ``.py`` file or a directory holding ``main.py`` (plus any
modules it imports; the directory is put first on ``sys.path``). All fixtures run in this one
process, one after another, via ``runpy.run_path``; between fixtures the modules a fixture imported
from its own directory are dropped, grad mode is reset and ``torch.manual_seed(0)`` is called.

A result is a dict with

``status``
    ``"raised"``: a RuntimeError "Trying to backward through the graph a second time" was raised;
    ``file``/``line`` is the deepest traceback frame inside the fixture's own files.
    ``"clean"``: the program ran to the end.
    ``"error"``: any other exception (a defect of the fixture); ``type``/``message``/``file``/``line``.
``rewalks``
    ``[[file, line], ...]``: backward/autograd.grad calls (deepest frame inside the fixture's files)
    that completed although they executed a graph node which an earlier call with
    ``retain_graph=False`` had already run, i.e. freed.  Such a call does not raise only because none
    of the re-run nodes saves a tensor; it is the ground truth for GG102.  (AccumulateGrad nodes of
    leaf tensors are not graph nodes in this sense: they live as long as the leaf.)
``seconds``
    wall time of the fixture.

``file`` values are paths relative to the fixture directory (for a single-file fixture: its name).
Nothing is cached: every invocation runs every fixture afresh.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import random
import runpy
import sys
import time
import traceback
import warnings
from pathlib import Path

BACKWARD_TWICE = "backward through the graph a second time"


class _Fixture:
    def __init__(self, path: str):
        p = Path(path).resolve()
        if p.is_dir():
            self.root = p
            self.entry = p / "main.py"
            self.files = {str(f.resolve()) for f in p.rglob("*.py")}
        else:
            self.root = p.parent
            self.entry = p
            self.files = {str(p)}

    def rel(self, filename: str) -> str:
        return os.path.relpath(os.path.realpath(filename), self.root).replace(os.sep, "/")

    def owns(self, filename: str) -> bool:
        return os.path.realpath(filename) in self.files

    def deepest(self, frames) -> tuple[str, int] | None:
        """The last (innermost) frame of ``frames`` (FrameSummary list) that lies in the fixture."""
        for fs in reversed(frames):
            if self.owns(fs.filename):
                return self.rel(fs.filename), fs.lineno
        return None


class _RewalkTracker:
    """Wraps torch's engine entry point to see which graph nodes every backward call runs."""

    def __init__(self, torch):
        self.autograd = torch.autograd
        self.original = torch.autograd._engine_run_backward
        self.reset(None)

    def reset(self, fixture: _Fixture | None) -> None:
        for handle in getattr(self, "handles", ()):
            handle.remove()
        self.fixture = fixture
        self.nodes: dict[int, object] = {}  # id -> node (kept alive so ids stay unique)
        self.handles: list = []
        self.freed: set[int] = set()
        self.running: list[set[int]] = []
        self.events: list[tuple[str, int]] = []

    def install(self) -> None:
        self.autograd._engine_run_backward = self._run

    def _watch(self, roots) -> None:
        stack = []
        for t in roots:
            node = getattr(t, "grad_fn", None)
            if node is None and isinstance(t, tuple) and t:  # GradientEdge(node, output_nr)
                node = t[0]
            if node is not None:
                stack.append(node)
        while stack:
            node = stack.pop()
            key = id(node)
            if key in self.nodes:
                continue
            self.nodes[key] = node
            if type(node).__name__ != "AccumulateGrad":
                self.handles.append(node.register_prehook(self._hook(key)))
            stack.extend(n for n, _ in node.next_functions if n is not None)

    def _hook(self, key: int):
        def prehook(grad_outputs):
            if self.running:
                self.running[-1].add(key)
        return prehook

    def _run(self, t_outputs, *args, **kwargs):
        # torch calls _engine_run_backward(outputs, grad_outputs, retain_graph, create_graph, ...)
        # positionally, with retain_graph already defaulted to create_graph.
        retain_graph = bool(args[1]) if len(args) > 1 else bool(kwargs.get("keep_graph", False))
        self._watch(t_outputs)
        self.running.append(set())
        try:
            result = self.original(t_outputs, *args, **kwargs)
        finally:
            ran = self.running.pop()
        if ran & self.freed and self.fixture is not None:
            where = self.fixture.deepest(traceback.extract_stack()[:-1])
            if where is not None:
                self.events.append(where)
        if not retain_graph:
            self.freed |= ran
        return result


def _run_one(path: str, torch, tracker: _RewalkTracker) -> dict:
    fx = _Fixture(path)
    before = set(sys.modules)
    saved_path = list(sys.path)
    sys.path[:] = [str(fx.root)] + saved_path[1:]  # a fresh sys.path[0]: the fixture's directory
    torch.manual_seed(0)
    random.seed(0)
    torch.set_grad_enabled(True)
    tracker.reset(fx)
    result: dict = {"status": "clean"}
    start = time.perf_counter()
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runpy.run_path(str(fx.entry), run_name="__main__")
    except (Exception, SystemExit) as exc:  # everything a fixture raises is reported
        frames = traceback.extract_tb(exc.__traceback__)
        where = fx.deepest(frames)
        if where is None and isinstance(exc, SyntaxError) and exc.filename and fx.owns(exc.filename):
            where = fx.rel(exc.filename), exc.lineno
        if isinstance(exc, RuntimeError) and BACKWARD_TWICE in str(exc):
            result = {"status": "raised"}
        else:
            result = {"status": "error", "type": type(exc).__name__, "message": str(exc)[:500]}
        result["file"], result["line"] = where if where else (None, None)
    finally:
        result["seconds"] = round(time.perf_counter() - start, 4)
        result["rewalks"] = [list(e) for e in sorted(set(tracker.events))]
        tracker.reset(None)
        sys.path[:] = saved_path
        for name in set(sys.modules) - before:
            if _is_local(sys.modules.get(name), fx.root):
                del sys.modules[name]
        torch.set_grad_enabled(True)
    return result


def _is_local(module, root: Path) -> bool:
    """Whether ``module`` was loaded from the fixture's directory (a module or a package)."""
    places = [getattr(module, "__file__", None)] + list(getattr(module, "__path__", None) or [])
    prefix = str(root) + os.sep
    return any(p and os.path.realpath(p).startswith(prefix) for p in places)


def _warm_up(torch) -> None:
    """Pay torch's one-off lazy imports (the optimizers pull in torch._dynamo) before timing."""
    model = torch.nn.Linear(2, 1)
    for opt in (torch.optim.SGD(model.parameters(), lr=0.1), torch.optim.Adam(model.parameters())):
        model(torch.ones(1, 2)).sum().backward()
        opt.step()


def run(paths: list[str]) -> dict[str, dict]:
    import torch

    torch.set_num_threads(1)  # tiny tensors: intra-op threads only add latency (no effect on autograd)
    _warm_up(torch)
    tracker = _RewalkTracker(torch)
    tracker.install()
    return {p: _run_one(p, torch, tracker) for p in paths}


def main(argv: list[str]) -> int:
    sys.dont_write_bytecode = True  # leave no __pycache__ behind in the fixture directories
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    results = run(argv)
    sys.stdout.write(json.dumps(results, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
