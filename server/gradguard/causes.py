"""From a backward that reaches freed graph to a finding: the message in the user's terms,
the related places, and the fixes that fit the cause.

Causes, told apart by the data rather than by the text:
- *stale across iterations*: the graph was freed by the same backward call in an earlier
  iteration. If it was built before the loop (a target, features, a cached value) the fix is
  to build it without graph (``torch.no_grad()``) or ``.detach()`` it where it is built; if it
  is carried from iteration to iteration (RNN hidden state) the fix is ``.detach()`` where the
  carried value enters this iteration's graph.
- *shared by two backwards*: another backward call freed it. If parameters were updated in
  place in between (``optimizer.step()``), ``retain_graph=True`` would only turn this into an
  in-place version error, so the fix is to ``.detach()`` the shared value where the first
  backward's graph took it (a GAN's ``fake``). Otherwise: backward once on the sum of the
  losses, or ``retain_graph=True`` on the earlier backward.
"""
from __future__ import annotations

import ast

from .findings import Finding, Fix, Related
from .rules import RULES
from .values import Tensor, Tup

MAX_TEXT = 48


def short(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 3] + "..."


def describe_roots(roots) -> str:
    names = []
    for root in sorted(roots, key=lambda r: (r.path, r.node.lineno)):
        text = f"the parameters of `{root.name}`" if root.kind == "params" else f"`{root.name}` (requires_grad=True)"
        if text not in names:
            names.append(text)
    if not names:
        return "a tensor that requires grad"
    return " and ".join(names[:2]) + (" and others" if len(names) > 2 else "")


def build_finding(reuse, locate, main_path: str, parents, trained=frozenset()) -> Finding:
    """``locate(node, path)`` gives a Location; ``parents.statement(node)`` a node's statement."""
    stale, info, node = reuse.stale, reuse.info, reuse.node
    rule = RULES[reuse.code]
    same_call = info.call is node
    roots = stale.roots
    built_line = _line(locate(stale.stmt, stale.path), main_path)
    entry = reuse.value.via.get(stale) if isinstance(reuse.value, Tensor) else None
    carried = stale.old and same_call and isinstance(entry, (ast.Name, ast.Attribute))
    args = {
        "call": f"`{short(node)}`",
        "what": f"`{ast.unparse(entry) if carried else stale.what}`",
        "origin": describe_roots(roots),
        "built_line": built_line,
        "freed_call": f"`{short(info.call)}`",
        "freed_line": _line(locate(info.call, info.path), main_path),
        "when": " in the previous iteration" if same_call else "",
        "when_zh": "（在上一次迭代中）" if same_call else "",
    }
    message = rule.message["en"].format(**args)
    severity = rule.severity if reuse.exact else "warning"
    if not reuse.exact:
        message += " (the value passes through code GradGuard could not resolve, so this may not raise)"
    related = [Related(locate(stale.stmt, stale.path), f"{args['what']} was computed here from {args['origin']}")]
    for root in sorted(roots, key=lambda r: r.node.lineno)[:2]:
        what = f"parameters of `{root.name}` are created here" if root.kind == "params" else f"`{root.name}` requires grad (created here)"
        related.append(Related(locate(root.node, root.path), what))
    related.append(Related(locate(info.call, info.path),
                           f"the graph was freed here by {args['freed_call']}" + args["when"]))
    fixes = _fixes(reuse, locate, main_path, parents, trained)
    return Finding(reuse.code, severity, message, locate(node, reuse.module.path), tuple(related),
                   tuple(fixes), tuple(args.items()))


def _fixes(reuse, locate, main_path, parents, trained) -> list:
    stale, info, node, value = reuse.stale, reuse.info, reuse.node, reuse.value
    if info.call is node:
        return _stale_fixes(reuse, locate, main_path, parents, trained)
    fixes: list[Fix] = []
    # another backward freed it
    if info.stepped:
        if info.via is not None and info.path == main_path:
            fixes.append(Fix("detach", f"Detach `{short(info.via)}` in the graph of {short(info.call)} "
                                       "(parameters are updated in between, so retain_graph=True would not help)",
                             (("expr", locate(info.via, info.path)),), preferred=True))
        return fixes
    first, second = info.call, node
    if (_is_plain_backward(first) and _is_plain_backward(second) and info.path == main_path
            and reuse.module.path == main_path
            and ast.unparse(first.func.value) != ast.unparse(second.func.value)):
        first_stmt = _statement_of(first, parents)
        if first_stmt is not None:
            a, b = ast.unparse(first.func.value), ast.unparse(second.func.value)
            fixes.append(Fix("sum_losses", f"Backward once on `{a} + {b}`",
                             (("first", locate(first_stmt, main_path)), ("second", locate(second, main_path))),
                             preferred=True, texts=(("first_loss", a), ("second_loss", b))))
    if info.path == main_path and reuse.code == "GG101":
        fixes.append(_retain(first, locate, main_path, preferred=not fixes))
    return fixes


def _stale_fixes(reuse, locate, main_path, parents, trained_roots) -> list:
    """The same backward call met the graph freed in an earlier iteration."""
    stale, info, node, value = reuse.stale, reuse.info, reuse.node, reuse.value
    fixes: list[Fix] = []
    in_main = reuse.module.path == main_path
    loop = _enclosing_loop(node, parents) if in_main else None
    if isinstance(stale.old, ast.AST) and in_main and _within(node, stale.old):
        return _carried_fixes(reuse, locate, main_path)
    hits = set(reuse.hits)
    # Does this iteration build graph of its own? If not, the backwards share one graph
    # (e.g. a loop over prebuilt losses) and cutting it would cut the gradient itself.
    rebuilt = loop is None or any(_within(s.stmt, loop) for s in value.segs - hits if s.path == main_path)
    stmt = stale.stmt
    own = isinstance(node.func, ast.Attribute) and ast.unparse(node.func.value) == stale.what
    chain = _chain_before(loop, hits, main_path) if loop is not None else []
    if stale.roots & trained_roots and chain and (rebuilt or own):
        # built from parameters being trained: the user wants its gradient, every iteration
        fixes.append(Fix("insert_before", f"Recompute `{stale.what}` in every iteration",
                         (("before", locate(loop.body[0], main_path)),), preferred=True,
                         texts=(("statement", "\n".join(ast.unparse(s) for s in chain)),)))
    if rebuilt and stale.path == main_path and isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        fixes.append(Fix("no_grad", f"Compute `{stale.what}` under `torch.no_grad()` (line {stmt.lineno})",
                         (("stmt", locate(stmt, stale.path)),), preferred=not fixes))
        if stmt.value is not None:
            fixes.append(Fix("detach", f"Detach `{stale.what}` where it is computed: `.detach()`",
                             (("expr", locate(stmt.value, stale.path)),)))
    if not rebuilt and not fixes and not info.stepped and in_main and reuse.code == "GG101":
        fixes.append(_retain(node, locate, main_path, preferred=True))
    return fixes


def _carried_fixes(reuse, locate, main_path) -> list:
    """State carried from iteration to iteration of the loop around the backward."""
    stale, value = reuse.stale, reuse.value
    entry = value.via.get(stale) if isinstance(value, Tensor) else None
    if entry is None:
        return []
    fixes = []
    loop = stale.old
    if isinstance(entry, (ast.Name, ast.Attribute)) and isinstance(loop, (ast.For, ast.While)) \
            and _within(entry, loop):
        name = ast.unparse(entry)
        stmt = (f"{name} = tuple(t.detach() for t in {name})" if isinstance(reuse.carried, Tup)
                else f"{name} = {name}.detach()")
        fixes.append(Fix("insert_before", f"Detach `{name}` at the start of each iteration: `{stmt}`",
                         (("before", locate(loop.body[0], main_path)),), preferred=True,
                         texts=(("statement", stmt),)))
    if not isinstance(reuse.carried, Tup):
        fixes.append(Fix("detach", f"Detach `{short(entry)}` carried over from the previous iteration",
                         (("expr", locate(entry, main_path)),), preferred=not fixes))
    return fixes


def _chain_before(loop, segs, main_path) -> list:
    """The assignments before ``loop`` that built these segments, in order (to recompute them)."""
    stmts = {id(s.stmt): s.stmt for s in segs
             if s.path == main_path and isinstance(s.stmt, (ast.Assign, ast.AnnAssign))
             and s.stmt.end_lineno < loop.lineno}
    return sorted(stmts.values(), key=lambda s: (s.lineno, s.col_offset))


def _retain(call, locate, main_path, preferred) -> Fix:
    return Fix("retain_graph", f"Keep the graph for the later backward: `retain_graph=True` in {short(call)}",
               (("call0", locate(call, main_path)),), preferred=preferred)


def _enclosing_loop(node, parents):
    """The innermost loop around ``node`` within its function."""
    cur = parents.parent(node)
    while cur is not None and not isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        if isinstance(cur, (ast.For, ast.While, ast.AsyncFor)):
            return cur
        cur = parents.parent(cur)
    return None


def _line(loc, main_path: str) -> str:
    """A line number as the user sees it: in a notebook cell, or in another file."""
    text = str(loc.line)
    if loc.cell is not None:
        text += f" of cell {loc.cell}"
    if loc.path != main_path:
        text += f" of {loc.path.rsplit('/', 1)[-1]}"
    return text


def _within(node, outer) -> bool:
    return (outer.lineno, outer.col_offset) <= (node.lineno, node.col_offset) \
        and (node.end_lineno, node.end_col_offset) <= (outer.end_lineno, outer.end_col_offset)


def _is_plain_backward(call) -> bool:
    return (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and call.func.attr == "backward" and not call.args and not call.keywords)


def _statement_of(call, parents):
    stmt = parents.statement(call)
    if isinstance(stmt, ast.Expr) and stmt.value is call:
        return stmt
    return None
