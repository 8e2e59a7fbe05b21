"""GG101's episode buffers: lists that collect an episode's log-probs (``xs.append(...)``), are
consumed by the update's backward and are never emptied, so the next update walks the graphs of
the previous episodes again.  The fix empties them after the backward that consumed them.

The buffers are found from the walk: a freed segment that was built inside the arguments of
``xs.append(...)`` names ``xs``.  Lists consumed together with it (the rewards its returns are
computed from) are emptied too, or the next update would pair old entries with new ones.
"""
from __future__ import annotations

import ast

from ..findings import Fix

_GROW = ("append", "extend", "insert")
_EXITS = (ast.Return, ast.Raise, ast.Break, ast.Continue)


def clear_fix(reuse, locate, main_path: str, parents):
    """``xs.clear()`` after the backward for the buffers that carried the freed graph here."""
    node = reuse.node
    stmt = parents.statement(node)
    home = _function_of(node, parents)
    loop = _loop_of(node, parents)
    scope = home if home is not None else loop
    if stmt is None or scope is None:
        return None
    grown = [r for r in _receivers(parents.tree)]
    filled = [r for seg in reuse.hits if seg.path == main_path for r in _filled_from(seg, parents)]
    statements = _statements(scope, home, parents)
    consumed = _read_by(node, statements)
    buffers = [e for e in sorted(consumed) if any(_same(e, r) for r in grown)
               and _persists(e, home, scope) and not _emptied(e, statements) and not _indexed(e, scope, consumed)]
    if not any(_same(e, r) for e in buffers for r in filled):
        return None
    anchor = _anchor(stmt, buffers, parents)
    if anchor is None:
        return None
    names = ", ".join(f"`{e}`" for e in buffers)
    return Fix("insert_after", f"Empty {names} once the backward has consumed them",
               (("after", locate(anchor, main_path)),), preferred=True,
               texts=(("statement", "\n".join(f"{e}.clear()" for e in buffers)),))


def _chains(node) -> set:
    """The names and attribute chains ``node`` reads (``self.log_probs``, ``self``, ``R``)."""
    return {ast.unparse(n) for n in ast.walk(node) if isinstance(n, ast.Name)
            or isinstance(n, ast.Attribute) and isinstance(_base(n), ast.Name)}


def _base(node):
    while isinstance(node, ast.Attribute):
        node = node.value
    return node


def _stored(target) -> set:
    """What an assignment to ``target`` changes: names, chains, the container of an item."""
    if isinstance(target, (ast.Tuple, ast.List)):
        return set().union(*map(_stored, target.elts)) if target.elts else set()
    if isinstance(target, ast.Starred):
        return _stored(target.value)
    if isinstance(target, ast.Subscript):
        return _stored(target.value)
    return {ast.unparse(target)} if isinstance(target, (ast.Name, ast.Attribute)) else set()


def _statements(scope, home, parents) -> list:
    return [s for s in ast.walk(scope) if isinstance(s, ast.stmt) and _function_of(s, parents) is home]


def _filled_from(seg, parents) -> list:
    """The lists that what ``seg`` built is appended to, in the function that built it."""
    if _receiver(seg.stmt) is not None and _in_args(seg.site, seg.stmt):
        return [_receiver(seg.stmt)]
    home = _function_of(seg.stmt, parents)
    flows = _flows(_statements(home if home is not None else parents.tree, home, parents))
    made = set().union(*(targets for targets, _ in _flows([seg.stmt])))
    grew = bool(made)
    while grew:
        grew = False
        for targets, reads in flows:
            if reads & made and not targets <= made:
                made |= targets
                grew = True
    return [r for s in _statements(home if home is not None else parents.tree, home, parents)
            for r in [_receiver(s)] if r is not None and ast.unparse(r) in made]


def _read_by(node, statements) -> set:
    """The chains the backwarded value is computed from, through the assignments, loops and
    appends of its function (or module): which containers the update consumes."""
    flows = _flows(statements)
    needed = _chains(node)
    grew = True
    while grew:
        grew = False
        for targets, reads in flows:
            if targets & needed and not reads <= needed:
                needed |= reads
                grew = True
    return needed


def _flows(statements) -> list:
    """(what a statement changes, what it reads) for its assignments, loops and appends."""
    flows = []
    for s in statements:
        if isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and s.value is not None:
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            reads = _chains(s.value) | (_chains(s.target) if isinstance(s, ast.AugAssign) else set())
            flows.append((set().union(*map(_stored, targets)), reads))
        elif isinstance(s, (ast.For, ast.AsyncFor)):
            flows.append((_stored(s.target), _chains(s.iter)))
        elif _receiver(s) is not None:
            flows.append(({ast.unparse(_receiver(s))}, _chains(s.value)))
    return flows


def _receiver(stmt):
    """``xs`` of a statement ``xs.append(...)`` / ``extend`` / ``insert``."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Attribute) \
            and stmt.value.func.attr in _GROW and isinstance(stmt.value.func.value, (ast.Name, ast.Attribute)):
        return stmt.value.func.value
    return None


def _receivers(tree):
    return [r for s in ast.walk(tree) if isinstance(s, ast.stmt) for r in [_receiver(s)] if r is not None]


def _in_args(site, stmt) -> bool:
    call = stmt.value
    return any(_within(site, a) for a in [*call.args, *(k.value for k in call.keywords)])


def _same(chain: str, receiver) -> bool:
    """``chain`` names the list ``receiver`` grows: the same text, or the same attribute of an
    object the other code knows by another name (``agent.rewards`` / ``self.rewards``)."""
    text = ast.unparse(receiver)
    if chain == text:
        return True
    return "." in chain and isinstance(receiver, ast.Attribute) and chain.rsplit(".", 1)[1] == receiver.attr


def _indexed(chain: str, scope, consumed) -> bool:
    """The update reads an item of it by a position not counted from the buffers' length
    (``outputs[i]`` for ``i in range(2)``): emptied, the next read raises."""
    nodes = list(ast.walk(scope))
    if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "len" and len(n.args) == 1
           and ast.unparse(n.args[0]) in consumed for n in nodes):
        return False  # ``for i in reversed(range(len(rewards)))``
    return any(isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load) and not isinstance(n.slice, ast.Slice)
               and ast.unparse(n.value) == chain for n in nodes)


def _persists(chain: str, home, scope) -> bool:
    """The container outlives one update: an attribute, or a name the update does not bind."""
    if "." in chain:
        return True
    bound = {n.id for n in ast.walk(scope) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    if home is not None:
        args = home.args
        bound |= {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg] if a}
        if any(isinstance(n, ast.Global) and chain in n.names for n in ast.walk(home)):
            return True
    return chain not in bound


def _emptied(chain: str, statements) -> bool:
    """The update already empties (or replaces) it: ``xs.clear()``, ``del xs[:]``, ``xs[:] = []``, ``xs = []``."""
    for s in statements:
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Attribute) \
                and s.value.func.attr == "clear" and ast.unparse(s.value.func.value) == chain:
            return True
        targets = s.targets if isinstance(s, (ast.Assign, ast.Delete)) else [s.target] \
            if isinstance(s, ast.AnnAssign) else []
        for t in targets:
            inner = t.value if isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Slice) else t
            if ast.unparse(inner) == chain and (inner is not t or isinstance(s, ast.Assign)):
                return True
    return False


def _anchor(stmt, buffers, parents):
    """The backward's statement, or the last one after it in its block that still reads a buffer."""
    block = next((getattr(p, f) for p in [parents.parent(stmt)] if p is not None
                  for f in ("body", "orelse", "finalbody") if any(s is stmt for s in getattr(p, f, []) or [])), None)
    if block is None:
        block = parents.tree.body
    if not any(s is stmt for s in block):
        return None
    anchor = stmt
    for later in block[next(i for i, s in enumerate(block) if s is stmt) + 1:]:
        if _chains(later) & set(buffers):
            if isinstance(later, _EXITS) or not isinstance(later, (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign)):
                return None
            anchor = later
    return anchor


def _function_of(node, parents):
    cur = parents.parent(node)
    while cur is not None and not isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef)):
        cur = parents.parent(cur)
    return cur


def _loop_of(node, parents):
    cur = parents.parent(node)
    while cur is not None and not isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef)):
        if isinstance(cur, (ast.For, ast.While, ast.AsyncFor)):
            return cur
        cur = parents.parent(cur)
    return None


def _within(node, outer) -> bool:
    return (outer.lineno, outer.col_offset) <= (node.lineno, node.col_offset) \
        and (node.end_lineno, node.end_col_offset) <= (outer.end_lineno, outer.end_col_offset)
