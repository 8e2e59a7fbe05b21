"""What the analysis reports: findings, their related places, fix intents and hover facts.

These are plain data; the CLI and the language server only convert them.
Positions: lines are 1-based; columns are 1-based and counted in Unicode code
points (not bytes, not UTF-16 units); ``end_column`` is exclusive.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional


@dataclass(frozen=True)
class Location:
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    #: 1-based notebook cell index when ``path`` is a notebook; lines are then cell-relative.
    cell: Optional[int] = None


@dataclass(frozen=True)
class Related:
    location: Location
    message: str
    #: which ``rules.RELATED`` template the message is, and its arguments (for other languages)
    key: str = field(default="", compare=False)
    args: tuple[tuple[str, str], ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class Fix:
    """A repair the analysis knows fits the cause; editors turn it into text edits.

    ``kind`` and the keys of ``targets`` (all Locations in the analysed file):
      - ``no_grad``: ``stmt`` – the statement(s) to wrap in ``with torch.no_grad():``
      - ``detach``: ``expr`` – the expression to append ``.detach()`` to
      - ``clone``: ``expr`` – a computed tensor an in-place op or layer writes, which gets
        ``.clone()`` (the op then writes a copy, not what an earlier op saved)
      - ``detach_cpu``: ``expr`` – a tensor NumPy converts, which gets ``.detach().cpu()`` (on a CUDA
        tensor NumPy needs the copy on the CPU; on a CPU tensor ``.cpu()`` returns it as is)
      - ``detach_elements``: ``expr`` – a list of tensors, replaced by its elements detached (and
        on the CPU: ``[t.detach().cpu() for t in …]``)
      - ``retain_graph``: ``call0``, ``call1``, … – backward/grad calls that need ``retain_graph=True``
      - ``insert_before``: ``before`` – a statement; insert ``texts["statement"]`` on a new line
        just before it, at its indentation (e.g. ``h = h.detach()`` at the top of a loop body)
      - ``sum_losses``: ``first`` – the earlier backward statement (removed),
        ``second`` – the later backward call (replaced by one backward on the sum);
        ``texts`` holds ``first_loss`` and ``second_loss`` (their source text)
      - ``insert_after``: ``after`` – a statement; ``texts["statement"]`` goes right after it
      - ``create_graph``: ``call`` – a grad call that needs ``create_graph=True``
      - ``enable_grad``: ``expr`` – a ``no_grad()`` / ``inference_mode()`` to turn into ``enable_grad()``
      - ``drop_detach``: ``expr`` – ``x.detach()`` / ``x.data``, replaced by ``receiver`` (``x``)
      - ``reduce_mean`` / ``reduce_sum``: ``expr`` – the outputs to append ``.mean()`` / ``.sum()`` to
      - ``ones_gradient`` / ``ones_grad_tensors`` / ``ones_grad_outputs``: ``call`` gets that
        keyword, ``torch.ones_like(<expr>)``
      - ``move_after``: ``stmt`` – a statement moved to right after ``after``
      - ``move_block_after``: ``stmt`` – consecutive statements moved (whole lines) to right after
        ``after``, a later statement of the same block
      - ``drop_retain_graph``: ``call`` – the ``retain_graph=`` keyword taken out
      - ``drop_inplace``: ``call`` – a layer's constructor whose ``inplace=`` keyword is taken out
      - ``out_of_place``: ``stmt`` – an augmented assignment ``x op= value`` (``value`` its value)
        rewritten ``x = x op value``; ``texts`` hold ``target`` and ``operator``
      - ``retain_graph_and_insert_before``: ``call0`` gets ``retain_graph=True``, and
        ``texts["statement"]`` goes before the statement ``before`` (as ``insert_before``)
      - ``keep_tensors``: ``expr`` – a tensor rebuilt from numbers, replaced by ``value`` (its
        argument) without the ``.item()`` calls in it
      - ``leaf_after``: ``call`` – a factory whose ``requires_grad=True`` is taken out, ``expr`` – the
        value computed from it, which gets ``.requires_grad_()``
    """

    kind: str
    title: str
    targets: tuple[tuple[str, Location], ...]
    preferred: bool = False
    texts: tuple[tuple[str, str], ...] = ()
    #: it only stops the program from raising, whatever its kind (see ``fix_choice.is_safe``)
    safe: bool = False

    def target(self, key: str) -> Location:
        return dict(self.targets)[key]

    def text(self, key: str) -> str:
        return dict(self.texts)[key]


@dataclass(frozen=True)
class Finding:
    code: str
    severity: str  # "error" | "warning" | "info"
    message: str
    location: Location
    related: tuple[Related, ...] = ()
    fixes: tuple[Fix, ...] = ()
    #: message arguments, so a front end can render the message in another language
    args: tuple[tuple[str, str], ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class GraphStep:
    """One line in the chain that built a tensor's graph."""

    location: Location
    text: str  # e.g. "Y = torch.mm(X, true_W) + true_b"
    saves: Optional[bool]  # whether this step's ops save tensors for backward (None: unknown)


@dataclass(frozen=True)
class TensorFact:
    """What is known about a tensor-valued name at one place in the code (hover)."""

    location: Location
    name: str
    requires_grad: str  # "yes" | "no" | "maybe"
    is_leaf: bool
    origins: tuple[str, ...]  # requires_grad origins, e.g. ("true_W (line 8)",)
    chain: tuple[GraphStep, ...]
    freed_by: tuple[Location, ...]  # backward calls that already freed part of its graph here


@dataclass(frozen=True)
class BackwardFact:
    """What a backward()/autograd.grad() call does to the graph (hover)."""

    location: Location
    call: str  # "l.backward()"
    retains: bool
    frees: tuple[GraphStep, ...]  # graph steps this call frees
    reused_by: tuple[Location, ...]  # later backward calls that walk the freed graph again
    retain_needed: bool
