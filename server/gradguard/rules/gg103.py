"""GG103: a backward walks a node whose saved tensor was modified in place after it was saved.

torch raises ``RuntimeError: one of the variables needed for gradient computation has been
modified by an inplace operation: [...] is at version N; expected version M instead``. Ops save
what their backward needs (softmax, sigmoid, exp and relu their output, log their input, a
product and a linear layer each operand for the other's gradient); writing into one of those
tensors afterwards (``x += …``, ``clamp_``, ``x[mask] = 0``, ``nn.ReLU(inplace=True)``, an
in-place op on its ``.detach()``, an optimizer step on saved weights) bumps its version."""
from __future__ import annotations

import ast
from dataclasses import replace

from . import FixIntent, Report, Rule, short


def on_modified_saved(ev) -> Report | None:
    places = dict(p for p in ev.places if p[0] not in ("saved", "also_modified_stmt", "also_written_stmt", "branched",
                                                      "several", "held"))
    layer = places.pop("modified_layer", None)
    # a custom autograd function's backward checks what it saved where it reads ctx.saved_tensors
    raises_at = places.pop("raises_at", None)
    others = [node for key, node in ev.places if key == "also_modified_stmt"]
    written = [node for key, node in ev.places if key == "also_written_stmt"]
    saved = [node for key, node in ev.places if key == "saved"]
    modified, stmt, expr = places.get("modified"), places.get("modified_stmt"), places.get("modified_expr")
    what = f"`{short(ev.target)}`" if ev.target is not None else "the outputs"
    change = f" by `{short(stmt if isinstance(stmt, ast.Expr) else modified)}`" if modified is not None else ""
    saver = f"`{short(saved[0])}`" if saved else "an op"
    args = (("call", "`autograd.grad`" if ev.detail == "grads" else "`backward()`"), ("what", what),
            ("saver", saver), ("change", change))
    related = ()
    if modified is not None:
        related += (("modified", modified, (("what", short(modified)),)),)
    related += tuple(("saved", node, (("what", short(node)),)) for node in saved[:1])
    # a backward over a value that went through unresolved code (or that a branch may have cut
    # from the saved tensor's graph) may not reach the saved tensor
    branched = any(key == "branched" for key, _ in ev.places)
    resolved = all(t.exact for t in ev.tensors) or any(key == "held" for key, _ in ev.places)
    several = resolved and any(key == "several" for key, _ in ev.places)  # (else unresolved code is the reason)
    exact = resolved and not branched and not several
    fixes = _fixes(modified, stmt, expr, ev, others, written)
    if layer is not None and any(k.arg == "inplace" for k in layer.keywords):
        # the layer built with inplace=True (or the function called with it): without it, it
        # writes a copy
        verb = "Call" if layer is modified else "Build"
        fixes = (FixIntent("drop_inplace", f"{verb} `{short(layer.func)}` without `inplace=True`", (("call", layer),),
                           preferred=True),) + tuple(replace(f, preferred=False) for f in fixes)
    if raises_at is not None:
        related = (("backward", ev.node, ()),) + related
    return Report("GG103", raises_at or ev.node, args, exact, fixes, related=related, branched=branched,
                  several=several)


def _fixes(modified, stmt, expr, ev, others=(), written=()) -> tuple:
    if stmt is None:
        return ()
    if expr is None and isinstance(stmt, ast.Expr) and ev.stmt is not None:
        # the parameters changed by optimizer steps between the backwards: step after the last
        # (every step that wrote what this backward walks; not one that the loop runs after it)
        steps = sorted([stmt, *(s for s in others if isinstance(s, ast.Expr))], key=lambda s: (s.lineno, s.col_offset))
        if any(s.lineno > ev.stmt.lineno for s in steps):
            return ()
        title = "Step the optimizer after this backward" if len(steps) == 1 else "Step the optimizers after this backward"
        targets = tuple((f"stmt{i}" if i else "stmt", s) for i, s in enumerate(steps)) + (("after", ev.stmt),)
        return (FixIntent("move_after", title, targets, preferred=True),)
    discarded = isinstance(stmt, ast.Expr) and stmt.value is modified  # (a copy written, then dropped)
    if isinstance(modified, ast.Call) and isinstance(expr, (ast.Call, ast.Attribute)) and not discarded and (
            any(a is expr for a in modified.args[:1])
            or (isinstance(modified.func, ast.Attribute) and modified.func.value is expr)):
        # ``dropout(relu(h))`` with an in-place dropout, ``conv(x).unsqueeze_(1)``: a computed
        # value written in place by the call that takes it; the call may write a copy instead
        return (FixIntent("clone", f"Modify a copy: `{short(expr)}.clone()`", (("expr", expr),), preferred=True),)
    writes = sorted([stmt, *others, *written], key=lambda s: (s.lineno, s.col_offset))
    if all(isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name) and type(s.op) in _OPERATORS
           for s in writes):
        # ``x /= norm(x)``: a copy made first would be what ``norm`` saves; out of place, the
        # result is a new tensor and ``x`` as it was stays saved (every write the backward meets:
        # ``Z += K`` and ``S += …`` of one recurrent state)
        targets, texts, shown = (), (), []
        for i, s in enumerate(writes):
            name, op, n = s.target.id, _OPERATORS[type(s.op)], str(i or "")
            targets += ((f"stmt{n}", s), (f"value{n}", s.value))
            texts += ((f"target{n}", name), (f"operator{n}", op))
            shown.append(f"`{name} = {name} {op} …`")
        title = f"Write it out of place: {shown[0]}" if len(shown) == 1 else \
            f"Write them out of place: {', '.join(shown)}"
        return (FixIntent("out_of_place", title, targets, preferred=True, texts=texts),)
    if discarded and isinstance(modified.func, ast.Attribute) and modified.func.attr == "copy_" \
            and len(modified.args) == 1 and not modified.keywords and _attribute_chain(expr):
        # ``self.state.copy_(h_n)`` (a stateful model keeping its new state): hold the new
        # values in a new tensor, leaving the one the backward saved as it was
        name, value = ast.unparse(expr), ast.unparse(modified.args[0])
        return (FixIntent("replace_statement", f"Keep a new tensor instead: `{name} = {value}.detach()`",
                          (("stmt", stmt),), preferred=True, texts=(("statement", f"{name} = {value}.detach()"),)),)
    if isinstance(expr, ast.Name):
        name = expr.id
        return (FixIntent("insert_before", f"Modify a copy: `{name} = {name}.clone()` first", (("before", stmt),),
                          preferred=True, texts=(("statement", f"{name} = {name}.clone()"),)),)
    return ()


def _attribute_chain(expr) -> bool:
    """``x``, ``self.state``, ``model.memory.keys``: names and attributes only, so assigning to it
    rebinds it."""
    while isinstance(expr, ast.Attribute):
        expr = expr.value
    return isinstance(expr, ast.Name)


_OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
              ast.Pow: "**", ast.MatMult: "@"}


RULE = Rule(
    code="GG103",
    name="saved-tensor-modified-in-place",
    severity="error",
    summary={
        "en": "a tensor saved for the backward is modified in place before the backward runs",
        "zh-cn": "为反向传播保存的张量在 backward 之前被原地修改",
    },
    message={
        "en": "{call} raises \"one of the variables needed for gradient computation has been modified by an "
              "inplace operation\": {saver} saved a tensor for the backward of {what}, and it was changed in "
              "place since{change}",
        "zh-cn": "{call} 会报错“one of the variables needed for gradient computation has been modified by an "
                 "inplace operation”：{saver} 为 {what} 的反向传播保存了一个张量，之后它被原地修改{change}",
    },
    fix_help={
        "en": "use the out-of-place form (`x = x + eps`, `p = p.clamp(a, b)`, `probs.masked_fill(mask, 0)`, "
              "`nn.ReLU()` without inplace), modify a `.clone()` instead, or step the optimizer only after "
              "the last backward over the graph.",
        "zh-cn": "改用非原地形式（`x = x + eps`、`p = p.clamp(a, b)`、`probs.masked_fill(mask, 0)`、不带 inplace 的 "
                 "`nn.ReLU()`），或修改其 `.clone()`，或在对该计算图的最后一次 backward 之后再调用优化器的 step。",
    },
    events={"modified_saved": on_modified_saved},
    raises=True,
)
