"""Ground truth for the fixture corpus: run programs under real torch and report what happened.

Usage::

    python tests/oracle.py PATH [PATH ...]        # prints one JSON object: {path: result}

Each PATH is a fixture: either a single ``.py`` file or a directory holding ``main.py`` (plus any
modules it imports; the directory is put first on ``sys.path``). All fixtures run in this one
process, one after another, via ``runpy.run_path``; between fixtures the modules a fixture imported
from its own directory are dropped, grad mode and the default dtype are reset and
``torch.manual_seed(0)`` is called.

A result is a dict with

``status``
    ``"raised"``: the program stopped on an error of the autograd family; ``code`` says which
    (``RAISES`` below lists the messages), ``file``/``line`` is the deepest traceback frame inside
    the fixture's own files:

    * GG101 "Trying to backward through the graph a second time";
    * GG103 "one of the variables needed for gradient computation has been modified by an inplace
      operation";
    * GG104 "element 0 of tensors does not require grad and does not have a grad_fn";
    * GG105 "grad can be implicitly created only for scalar outputs";
    * GG107 "Can't call numpy() on Tensor that requires grad";
    * GG108 "a leaf Variable that requires grad is being used in an in-place operation" or "a view
      of a leaf Variable that requires grad is being used in an in-place operation";
    * GG106: a ``TypeError``/``AttributeError`` about ``NoneType`` after a non-leaf ``.grad``
      access warned (see ``warned``): the ``None`` that access returned was used. ``file``/``line``
      is where it raised, ``cause`` the ``[file, line]`` of the latest such access. The GG106 finding
      belongs on the access (torch warns there); an error severity is right exactly when the
      program then raises like this (``W -= lr * W.grad`` accesses and raises on one line).

    ``"clean"``: the program ran to the end.
    ``"error"``: any other exception (a defect of the fixture); ``type``/``message``/``file``/``line``.

The other keys list ``[file, line]`` sites (deepest frame inside the fixture's files), sorted and
without repeats; a line executed many times counts once.

``rewalks`` (GG102)
    backward/autograd.grad calls that completed although they executed a graph node which an
    earlier call with ``retain_graph=False`` had already run, i.e. freed.  Such a call does not
    raise only because none of the re-run nodes saves a tensor.  (AccumulateGrad nodes of leaf
    tensors are not graph nodes in this sense: they live as long as the leaf.)
``warned`` (GG106)
    accesses of ``.grad`` on a tensor that is not a leaf: torch's UserWarning "The .grad attribute
    of a Tensor that is not a leaf Tensor is being accessed" (the value read is ``None``).
``stale_grads`` (GG201)
    backward calls that accumulated into a leaf's ``.grad`` while it still held a gradient
    accumulated before the leaf's latest update (the leaf's value changed since), when that stale
    sum was then applied: an optimizer step over the leaf ran before its ``.grad`` was cleared
    (``None`` or zeros), or, for a leaf that no stepping optimizer holds (updated by hand), at
    once.  Accumulating several backwards before one step (gradient accumulation) is not stale:
    the leaf does not change in between.  ``zero_grad()`` or ``p.grad = None`` after the step
    clears it; so does a fresh backward onto a cleared ``.grad`` (a GAN generator's backward
    through the discriminator leaves stale sums there that ``opt_D.zero_grad()`` clears before
    any discriminator step: not reported).
``growing_totals`` (GG202)
    lines where a running total kept a graph across iterations: an operation on the line combined
    a graph-carrying value that the same line produced on an earlier visit (the total, or
    something computed from it on this visit) with a graph-carrying value not derived from it
    (this iteration's loss; a value whose graph reaches the total's, such as the gradient of a
    function of it taken with ``create_graph=True``, is derived from it: fast weights stepped in
    an unrolled inner loop are no total), e.g. ``total += loss`` or ``avg = 0.9 * avg + 0.1 *
    loss`` — and no backward/autograd.grad call ever ran a graph node such an operation created.
    So the total's graph only grew, linking every iteration's graph, and nobody walked it (a total
    that is backwarded, as in accumulating micro-batch losses, is not reported).  A line is visited again
    when control comes back to it, as a loop does (a line tracer on the fixture's own code; a
    statement spread over several lines is one visit); operations inside libraries count for the
    fixture line that called them.
``unused_retains`` (GG203)
    backward/autograd.grad calls with ``retain_graph=True`` (and ``create_graph=False``: a
    create_graph call keeps its graph for the double backward) none of whose executions kept a
    graph that a later call ran again: every graph retained there died unwalked (by the end of the
    program, or at the error that stopped it).  A line in a loop whose retained graph is walked on
    all but the last iteration is not reported.
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
import weakref
from pathlib import Path

RAISES = (  # (code, fragment of the RuntimeError's message)
    ("GG101", "backward through the graph a second time"),
    ("GG103", "one of the variables needed for gradient computation has been modified by an inplace operation"),
    ("GG104", "element 0 of tensors does not require grad and does not have a grad_fn"),
    ("GG105", "grad can be implicitly created only for scalar outputs"),
    ("GG107", "Can't call numpy() on Tensor that requires grad"),
    ("GG108", "a leaf Variable that requires grad is being used in an in-place operation"),
    ("GG108", "a view of a leaf Variable that requires grad is being used in an in-place operation"),
)
NON_LEAF_GRAD = "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed"


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
        self._codes: dict[object, bool] = {}

    def rel(self, filename: str) -> str:
        return os.path.relpath(os.path.realpath(filename), self.root).replace(os.sep, "/")

    def owns(self, filename: str) -> bool:
        return os.path.realpath(filename) in self.files

    def owns_code(self, code) -> bool:
        known = self._codes.get(code)
        if known is None:
            known = self._codes[code] = self.owns(code.co_filename)
        return known

    def deepest(self, frames) -> tuple[str, int] | None:
        """The last (innermost) frame of ``frames`` (FrameSummary list) that lies in the fixture."""
        for fs in reversed(frames):
            if self.owns(fs.filename):
                return self.rel(fs.filename), fs.lineno
        return None

    def frame(self):
        """The innermost frame of the current stack that runs the fixture's code (or None)."""
        f = sys._getframe(1)
        while f is not None and not self.owns_code(f.f_code):
            f = f.f_back
        return f

    def site(self) -> tuple[str, int] | None:
        f = self.frame()
        return (self.rel(f.f_code.co_filename), f.f_lineno) if f is not None else None


class _Observer:
    """Watches one fixture at a time: every backward call (torch's engine entry point, with
    pre-hooks on the graph nodes it runs), optimizer steps, warnings, tensor operations (a
    TorchFunctionMode) and line visits (a tracer on the fixture's own code)."""

    def __init__(self, torch):
        self.torch = torch
        self.original = torch.autograd._engine_run_backward
        self.handles: list = []
        self.reset(None)

    def reset(self, fixture: _Fixture | None) -> None:
        for handle in self.handles:
            handle.remove()
        self.fixture = fixture
        self.internal = False  # the observer's own tensor work is not the program's
        # GG102 / GG203 / GG202: graph nodes
        self.nodes: dict[int, object] = {}  # id -> node (kept alive so ids stay unique)
        self.handles = []
        self.freed: set[int] = set()
        self.ever_ran: set[int] = set()
        self.running: list[set[int]] = []
        self.rewalks: set[tuple[str, int]] = set()
        self.retains: dict[tuple[str, int], list[list]] = {}  # site -> [[nodes kept, walked again?]]
        # GG201: leaves' gradients
        self.leaves: dict[int, object] = {}  # id -> leaf (kept alive)
        self.snapshots: dict[int, object] = {}  # leaf id -> its value when .grad was last accumulated
        self.pending: dict[int, tuple[str, int]] = {}  # leaf id -> backward that made .grad stale
        self.stepped: set[int] = set()  # leaves some optimizer has stepped
        self.stale: set[tuple[str, int]] = set()
        # GG106
        self.warned: set[tuple[str, int]] = set()
        self.last_warned: tuple[str, int] | None = None
        # GG202
        self.visits: dict[int, dict] = {}  # frame id -> {line: (visit number, offset last reached)}
        self.lines_seen = 0
        self.made: dict[int, tuple] = {}  # tensor id -> (weakref, (code, line), visit, carried)
        self.totals: dict[tuple[str, int], list] = {}  # site -> graph nodes its accumulations made

    def install(self) -> None:
        self.torch.autograd._engine_run_backward = self._run
        from torch.optim.optimizer import register_optimizer_step_pre_hook

        register_optimizer_step_pre_hook(self._stepping)

    @contextlib.contextmanager
    def quiet(self):
        self.internal = True
        try:
            yield
        finally:
            self.internal = False

    # ---- backward calls ---------------------------------------------------------------------

    def _run(self, t_outputs, grad_outputs=None, retain_graph=False, create_graph=False, inputs=(),
             *rest, **kwargs):
        # torch calls _engine_run_backward(outputs, grad_outputs, retain_graph, create_graph,
        # inputs, ...) positionally, retain_graph already defaulted to create_graph;
        # accumulate_grad=True for backward(), False for autograd.grad().
        site = self.fixture.site() if self.fixture is not None else None
        with self.quiet():
            self._watch(t_outputs)
            leaves = self._leaves(t_outputs, inputs) if kwargs.get("accumulate_grad") else []
            before = {id(leaf): self._grad_state(leaf) for leaf in leaves}
        self.running.append(set())
        try:
            result = self.original(t_outputs, grad_outputs, retain_graph, create_graph, inputs,
                                   *rest, **kwargs)
        except BaseException:
            self._walked(self.running.pop())
            raise
        ran = self.running.pop()
        self._walked(ran)
        if site is not None:
            if ran & self.freed:
                self.rewalks.add(site)
            if retain_graph and not create_graph and ran:
                self.retains.setdefault(site, []).append([ran, False])
        if not retain_graph:
            self.freed |= ran
        with self.quiet():
            self._accumulated(leaves, before, site)
        return result

    def _watch(self, roots) -> None:
        """Pre-hooks on every graph node reachable from ``roots`` not watched yet."""
        stack = self._roots(roots)
        while stack:
            node = stack.pop()
            key = id(node)
            if key in self.nodes:
                continue
            self.nodes[key] = node
            if type(node).__name__ != "AccumulateGrad":
                self.handles.append(node.register_prehook(self._hook(key)))
            stack.extend(n for n, _ in node.next_functions if n is not None)

    @staticmethod
    def _roots(roots) -> list:
        nodes = []
        for t in roots:
            node = getattr(t, "grad_fn", None)
            if node is None and isinstance(t, tuple) and t:  # GradientEdge(node, output_nr)
                node = t[0]
            if node is not None:
                nodes.append(node)
        return nodes

    def _hook(self, key: int):
        def prehook(grad_outputs):
            if self.running:
                self.running[-1].add(key)
        return prehook

    def _walked(self, ran: set[int]) -> None:
        self.ever_ran |= ran
        for records in self.retains.values():
            for record in records:
                if not record[1] and record[0] & ran:
                    record[1] = True

    # ---- GG201: gradients accumulated onto gradients already applied --------------------------

    def _leaves(self, roots, inputs) -> list:
        """The leaves whose .grad this backward call accumulates into."""
        Tensor = self.torch.Tensor
        if inputs:
            found = [t for t in inputs if isinstance(t, Tensor) and t.is_leaf]
        else:
            found, seen, stack = [], set(), self._roots(roots)
            while stack:
                node = stack.pop()
                if id(node) in seen:
                    continue
                seen.add(id(node))
                if type(node).__name__ == "AccumulateGrad":
                    found.append(node.variable)
                stack.extend(n for n, _ in node.next_functions if n is not None)
        return list({id(t): t for t in found}.values())

    def _grad_state(self, leaf) -> str:
        """Before an accumulation: "clear" (.grad None or zero), "stale" (it holds a gradient
        although the leaf was updated since that was accumulated) or "adding" (accumulating on
        purpose: the leaf has not changed)."""
        grad = leaf.grad
        if grad is None or not bool(grad.ne(0).any()):
            return "clear"
        before = self.snapshots.get(id(leaf))
        if before is not None and not self.torch.equal(leaf.detach(), before):
            return "stale"
        return "adding"

    def _accumulated(self, leaves, before: dict[int, str], site) -> None:
        for leaf in leaves:
            if leaf.grad is None:
                continue
            key = id(leaf)
            self.leaves[key] = leaf
            self.snapshots[key] = leaf.detach().clone()
            if before[key] == "stale" and site is not None:
                self.pending[key] = site
            elif before[key] == "clear":
                self.pending.pop(key, None)

    def _stepping(self, optimizer, args, kwargs) -> None:
        if self.fixture is None:
            return
        with self.quiet():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    self.leaves[id(p)] = p
                    self.stepped.add(id(p))
                    site = self.pending.pop(id(p), None)
                    if site is not None and p.grad is not None and bool(p.grad.ne(0).any()):
                        self.stale.add(site)

    # ---- GG106: .grad of a non-leaf ---------------------------------------------------------

    def warning(self, message, category, filename, lineno, file=None, line=None) -> None:
        if self.fixture is not None and NON_LEAF_GRAD in str(message):
            site = self.fixture.site()
            if site is not None:
                self.warned.add(site)
                self.last_warned = site

    # ---- GG202: running totals --------------------------------------------------------------

    def trace(self, frame, event, arg):
        if event == "call" and self.fixture is not None and self.fixture.owns_code(frame.f_code):
            self.visits[id(frame)] = {}
            return self._trace_lines
        return None

    def _trace_lines(self, frame, event, arg):
        # A line is visited anew when control comes back to it at or before the offset where it
        # was last reached (a loop); reaching it again further on is the same statement going on
        # (a call spread over several lines).
        if event == "line":
            lines = self.visits.setdefault(id(frame), {})
            last = lines.get(frame.f_lineno)
            if last is None or frame.f_lasti <= last[1]:
                self.lines_seen += 1
                lines[frame.f_lineno] = (self.lines_seen, frame.f_lasti)
            else:
                lines[frame.f_lineno] = (last[0], frame.f_lasti)
        return self._trace_lines

    def operated(self, args, kwargs, out) -> None:
        """One tensor operation ran (called by the TorchFunctionMode, outside the mode)."""
        if self.internal or self.fixture is None or not self.torch.is_grad_enabled():
            return  # (no graph is made without grad; and torch refuses grad_fn of some views then)
        Tensor = self.torch.Tensor
        outs = [o for o in (out if isinstance(out, (tuple, list)) else (out,))
                if isinstance(o, Tensor) and o.grad_fn is not None]
        if not outs:
            return
        frame = self.fixture.frame()
        if frame is None:
            return
        key = (frame.f_code, frame.f_lineno)
        visit = self.visits.get(id(frame), {}).get(frame.f_lineno, (0, 0))[0]
        carried, fresh = [], []
        for t in _tensors(args, kwargs, Tensor):
            if t.grad_fn is None:
                continue
            made = self.made.get(id(t))
            if made is not None and made[0]() is t and made[1] == key and (made[2] < visit or made[3]):
                carried.append(t.grad_fn)  # the line's value from an earlier visit, or derived from it
            else:
                fresh.append(t)  # this visit's, or a graph made elsewhere: this iteration's loss
        for o in outs:
            self.made[id(o)] = (weakref.ref(o), key, visit, bool(carried))
        # a value computed from the carried one (fast weights' gradient: w = w - lr * g with
        # create_graph=True) is derived from it too, not new graph
        if carried and any(not _reaches(t.grad_fn, carried) for t in fresh):
            site = (self.fixture.rel(frame.f_code.co_filename), frame.f_lineno)
            self.totals.setdefault(site, []).extend(o.grad_fn for o in outs)

    # ---- the verdicts -----------------------------------------------------------------------

    def report(self) -> dict:
        hand_updated = {self.pending[k] for k in self.pending if k not in self.stepped}
        return {
            "rewalks": _sites(self.rewalks),
            "warned": _sites(self.warned),
            "stale_grads": _sites(self.stale | hand_updated),
            "growing_totals": _sites(s for s, nodes in self.totals.items()
                                     if not any(id(n) in self.ever_ran for n in nodes)),
            "unused_retains": _sites(s for s, records in self.retains.items()
                                     if not any(walked for _, walked in records)),
        }


def _reaches(node, targets: list) -> bool:
    """Whether the graph below ``node`` holds one of the nodes ``targets``."""
    seen, stack = set(), [node]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        if any(node is t for t in targets):
            return True
        seen.add(id(node))
        stack.extend(n for n, _ in node.next_functions)
    return False


def _tensors(args, kwargs, Tensor):
    for value in (*args, *(kwargs or {}).values()):
        if isinstance(value, Tensor):
            yield value
        elif isinstance(value, (tuple, list)):
            yield from (v for v in value if isinstance(v, Tensor))


def _sites(sites) -> list[list]:
    return [list(s) for s in sorted(set(sites))]


def _op_mode(torch, observer: _Observer):
    class _Operations(torch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            observer.operated(args, kwargs, out)
            return out

    return _Operations()


def _raised(exc: BaseException, observer: _Observer) -> dict | None:
    """The family member ``exc`` is, as a partial result, or None."""
    if isinstance(exc, RuntimeError):
        for code, fragment in RAISES:
            if fragment in str(exc):
                return {"status": "raised", "code": code}
    if isinstance(exc, (TypeError, AttributeError)) and "NoneType" in str(exc) and observer.last_warned:
        return {"status": "raised", "code": "GG106", "cause": list(observer.last_warned)}
    return None


def _run_one(path: str, torch, observer: _Observer) -> dict:
    fx = _Fixture(path)
    before = set(sys.modules)
    saved_path = list(sys.path)
    sys.path[:] = [str(fx.root)] + saved_path[1:]  # a fresh sys.path[0]: the fixture's directory
    torch.manual_seed(0)
    random.seed(0)
    torch.set_grad_enabled(True)
    torch.set_default_dtype(torch.float32)  # (a program before it may have set float64)
    observer.reset(fx)
    result: dict = {"status": "clean"}
    start = time.perf_counter()
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out), warnings.catch_warnings():
            warnings.simplefilter("always")
            warnings.showwarning = observer.warning
            sys.settrace(observer.trace)
            try:
                with _op_mode(torch, observer):
                    runpy.run_path(str(fx.entry), run_name="__main__")
            finally:
                sys.settrace(None)
    except (Exception, SystemExit) as exc:  # everything a fixture raises is reported
        frames = traceback.extract_tb(exc.__traceback__)
        where = fx.deepest(frames)
        if where is None and isinstance(exc, SyntaxError) and exc.filename and fx.owns(exc.filename):
            where = fx.rel(exc.filename), exc.lineno
        result = _raised(exc, observer) or {
            "status": "error", "type": type(exc).__name__, "message": str(exc)[:500]}
        result["file"], result["line"] = where if where else (None, None)
    finally:
        result["seconds"] = round(time.perf_counter() - start, 4)
        result.update(observer.report())
        observer.reset(None)
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
    observer = _Observer(torch)
    observer.install()
    return {p: _run_one(p, torch, observer) for p in paths}


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
