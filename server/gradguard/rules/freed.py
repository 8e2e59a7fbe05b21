"""GG101 and GG102, the two outcomes of a backward that reaches graph an earlier one freed
(``walk_freed``): which one it is, and the finding: the message in the user's terms, the related
places, and the fixes that fit the cause.

A walk reaching a freed node that saved tensors raises (GG101); one reaching only nodes that
saved none runs them again, silently (GG102: ``y = x + 1`` backwarded twice).

Causes, told apart by the data rather than by the text:
- *built before the loop*: the graph was freed by the same backward call in an earlier
  iteration and was built outside it (a target, features, a cached value). If this iteration
  builds graph of its own from parameters, cut the stale part: build it under
  ``torch.no_grad()`` or ``.detach()`` it where it is built. If it comes from parameters being
  trained, recompute it every iteration instead.
- *carried across iterations* (RNN hidden state, a running sum): the loop's previous iteration
  built it; detach the variables that carry it, right after the backward.
- *kept in a list*: an episode buffer the update consumes and never empties (``buffers``).
- *written into weights nobody trains*: an in-place update with grad on (an EMA teacher's
  weights, a buffer of running statistics) took in the graph of what it added; run that update
  under ``torch.no_grad()`` (``absorbed``).
- *shared by two backwards*: another backward call freed it. If parameters were updated in
  place in between (``optimizer.step()``), ``retain_graph=True`` would only turn this into an
  in-place version error, so the fix is to ``.detach()`` the shared value where the first
  backward's graph took it (a GAN's ``fake``). Otherwise: backward once on the sum of the
  losses, or ``retain_graph=True`` on the earlier backward.
"""
from __future__ import annotations

import ast

from ..findings import Finding, Fix
from ..values import Box, Layer, Obj, Root, Tensor, Tup, join, tensors_in
from . import BRANCHED, SEVERAL, UNRESOLVED, Report, short
from .absorbed import absorbed_segments, no_grad_update_fix
from .buffers import clear_fix
from .reorder import move_step_fix


MAX_CARRIER_DEPTH = 3  # modules inside modules searched for the attribute that carries a graph


class Walk:
    """What a backward walked of freed graph, as the interpreter saw it (``Event.cause``)."""

    __slots__ = ("infos", "scope", "heap", "module", "exact")

    def __init__(self, infos: dict, scope: dict, heap: dict, module, exact: bool):
        self.infos = infos  # each freed segment reached -> how it was freed (``state.FreeInfo``)
        self.scope, self.heap = scope, heap  # the variables and heap there, to name what holds it
        self.module = module  # where the backward is (``resolve.ModuleInfo``)
        self.exact = exact  # the walked values passed through no unresolved code

    def held(self) -> set:
        """The segments the variables and the heap hold."""
        return {s for d in (self.scope, self.heap) for v in d.values() for t in tensors_in(v) for s in t.segs}

    def carriers(self, stale: frozenset) -> dict:
        """The variables (and attributes of objects they hold) whose value holds one of the
        freed segments ``stale``: a tensor, a tuple of them, or a list whose elements do. (Each
        must be cut for the next walk not to raise: a batch norm's moving mean and variance.)"""
        out = {name: v for name, v in self.scope.items() if any(not stale.isdisjoint(t.segs) for t in tensors_in(v))}
        for name, box in self.scope.items():
            if type(box) is Box and box.kind == "list":
                elems = self.heap.get((box.oid, "*"), self.heap.get((box.oid, "items")))
                if elems is not None and any(not stale.isdisjoint(t.segs) for t in tensors_in(elems)):
                    out[name] = box
        for name, obj in self.scope.items():  # attributes kept on objects: model.prev, model[1].h
            if type(obj) in (Obj, Layer):
                self._held_by(obj, name, stale, out, 0)
        return out

    def _held_by(self, obj, path: str, stale, out: dict, depth: int) -> None:
        """The attributes of ``obj`` (reached as ``path``) and of the modules it holds (a
        container's ``[i]``, an attribute) whose value holds ``stale``."""
        if depth > MAX_CARRIER_DEPTH:
            return
        if type(obj) is Layer:
            for i, child in enumerate(obj.children):
                if type(child) in (Obj, Layer):
                    self._held_by(child, f"{path}[{i}]", stale, out, depth + 1)
            return
        for (oid, attr), v in self.heap.items():
            if oid != obj.oid or not isinstance(attr, str) or not attr.isidentifier():
                continue
            if any(not stale.isdisjoint(t.segs) for t in tensors_in(v)):
                out[f"{path}.{attr}"] = v
            elif type(v) in (Obj, Layer):
                self._held_by(v, f"{path}.{attr}", stale, out, depth + 1)


class Reuse:
    """A GG101/GG102 report's cause: the raw material of its finding."""

    __slots__ = ("node", "code", "exact", "stale", "infos", "value", "module", "carriers", "absorbed")

    def __init__(self, node, code, exact, stale, infos, value, module, carriers, absorbed=frozenset()):
        self.node, self.code, self.exact, self.stale = node, code, exact, stale
        self.infos = infos  # each freed segment reached -> how it was freed
        self.value, self.module = value, module
        self.carriers = carriers  # variable name -> value, for the variables holding the stale graph
        # the segments in-place updates with grad on wrote into frozen weights or buffers
        self.absorbed = absorbed

    @property
    def info(self):
        return self.infos[self.stale]

    @property
    def hits(self):
        return list(self.infos)


def known_origin(walk: Walk) -> list:
    """The freed segments reached whose requires_grad origin is known: a graph built only from
    values that could not be resolved gives no reason to believe anything is walked again."""
    return [s for s in walk.infos if s.roots]


def _runs(hits, held) -> frozenset:
    """The freed segments and, for those an earlier iteration ran, the later runs of their op
    that ``held`` values hold: what holds one at the backward carries it into the next iteration
    (``self.center = m`` after ``out - self.center`` used the last one)."""
    sites = {s.site for s in hits if s.old}
    return frozenset(hits) | frozenset(s for s in held if s.site in sites)


def report(code: str, ev, pool: list, hits: list, exact: bool) -> Report:
    """The report of a walk over the freed segments ``hits``, told by the latest of ``pool``."""
    stale = max(pool, key=lambda s: (s.order, not s.old, s.uid))
    value = ev.tensors[0]
    for t in ev.tensors[1:]:
        value = join(value, t)
    walk = ev.cause
    reuse = Reuse(ev.node, code, exact, stale, {h: walk.infos[h] for h in hits}, value, walk.module,
                  walk.carriers(_runs(hits, walk.held())), absorbed_segments(walk.heap))
    return Report(code, ev.node, (), exact, cause=reuse)


def finding(report: Report, path: str, locate, context: dict) -> Finding:
    return build_finding(report.cause, locate, context["main_path"], context["parents"], context["trained"])


def _related(key: str, location, **args):
    from . import related

    return related(key, location, **args)

def describe_roots(roots, locale: str = "en", names=None) -> str:
    """``names``: root -> how the user writes it where the text is shown (default: where it was made)."""
    zh = locale == "zh-cn"
    names = names or {}
    out = []
    for root in sorted(roots, key=Root.place):
        name = names.get(root, root.name)
        if root.kind == "params":
            text = f"`{name}` 的参数" if zh else f"the parameters of `{name}`"
        else:
            text = f"`{name}`（requires_grad=True）" if zh else f"`{name}` (requires_grad=True)"
        if text not in out:
            out.append(text)
    if not out:
        return "需要梯度的张量" if zh else "a tensor that requires grad"
    if zh:
        return "和".join(out[:2]) + ("等" if len(out) > 2 else "")
    return " and ".join(out[:2]) + (" and others" if len(out) > 2 else "")


class _Names:
    """Names as the user wrote them at the place the user looks.

    A value built in a callee is named there by the callee's parameters (``net(x)`` in
    ``make_target(net, x)``); at the finding the user knows it by the caller's argument
    (``make_target(G, z)``: ``G``).  Parameters are followed up the call sites the graph segment
    was built under (``Seg.ctx``) to the function the place belongs to.
    """

    def __init__(self, parents, main_path: str):
        self.parents, self.main_path = parents, main_path

    def home(self, node):
        """The function holding ``node`` (None: module level) -- only for nodes of the main file."""
        return _function_of(node, self.parents)

    def _in_main(self, node) -> bool:
        return node is self.parents.tree or self.parents.parent(node) is not None

    def translate(self, expr, seg, home):
        """The text of ``expr`` (code at ``seg``'s site) as written in function ``home``, or None."""
        if seg.path != self.main_path or not self._in_main(expr):
            return None
        text, base, fn = ast.unparse(expr), _base_name(expr), self.home(expr)
        for call in seg.ctx:
            if fn is home:
                return text
            if type(call) is tuple:  # (Sequential call, i): the i-th layer's input is the call's
                call, i = call       # argument only for the first
                if i:
                    return None
            if fn is None or base is None or not self._in_main(call):
                return None
            arg = _argument_for(fn, call, base)
            if arg is None:
                return None
            text = ast.unparse(arg) + text[len(base):]  # self.trunk with self -> net: net.trunk
            base, fn = _base_name(arg), self.home(call)
        return text if fn is home else None

    def roots(self, stale, home) -> dict:
        """root -> its name in function ``home``, for the parameters a module call put in the graph."""
        params = [r for r in stale.roots if r.kind == "params"]
        site = stale.site
        # a direct segment is a layer call on the parameters themselves: its callee holds them
        if len(params) != 1 or not stale.direct or not isinstance(site, ast.Call) or not isinstance(site.func, (ast.Name, ast.Attribute)):
            return {}
        root, func, site_home = params[0], site.func, self.home(site)
        # the callee holds these parameters if it is named as they were made, or is a plain name
        # that came from elsewhere (an argument, a factory's result)
        made_elsewhere = root.path != self.main_path or not self._in_main(root.node) \
            or self.home(root.node) is not site_home
        is_param = isinstance(func, ast.Name) and site_home is not None \
            and _argument_for(site_home, None, func.id, declared_only=True)
        if ast.unparse(func) != root.name and not (isinstance(func, ast.Name) and (made_elsewhere or is_param)):
            return {}
        here = self.translate(func, stale, home)
        return {root: here} if here is not None else {}


def _base_name(expr):
    """``net`` of ``net.trunk.weight``; None for anything but a name or a chain of attributes."""
    while isinstance(expr, ast.Attribute):
        expr = expr.value
    return expr.id if isinstance(expr, ast.Name) else None


def _argument_for(fn, call, name: str, declared_only: bool = False):
    """The argument ``call`` passes for parameter ``name`` of ``fn`` (None when it cannot tell);
    ``declared_only``: just whether ``name`` is one of ``fn``'s parameters."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    positional = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    if declared_only:
        return name in positional or name in [a.arg for a in fn.args.kwonlyargs]
    if not isinstance(call, ast.Call):
        return None
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    if name not in positional:
        return None
    index = positional.index(name)
    if positional[0] in ("self", "cls"):  # a method: the receiver is the first parameter
        if index == 0:
            return call.func.value if isinstance(call.func, ast.Attribute) else call.func
        index -= 1
    args = call.args
    if index < len(args) and not any(isinstance(a, ast.Starred) for a in args[:index + 1]):
        return args[index]
    return None


def _comprehension_variable(node, parents) -> bool:
    """Whether ``node`` is a name a comprehension around it binds."""
    if not isinstance(node, ast.Name) or not hasattr(node, "lineno"):
        return False
    cur = parents.parent(node)
    while cur is not None and not isinstance(cur, ast.stmt):
        if isinstance(cur, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)) and any(
                isinstance(n, ast.Name) and n.id == node.id for g in cur.generators for n in ast.walk(g.target)):
            return True
        cur = parents.parent(cur)
    return False


def build_finding(reuse, locate, main_path: str, parents, trained=frozenset()) -> Finding:
    """``locate(node, path)`` gives a Location; ``parents.statement(node)`` a node's statement."""
    stale, info, node = reuse.stale, reuse.info, reuse.node
    from . import RULES

    rule = RULES[reuse.code]
    same_call = info.call is node
    in_loop = same_call and (_in_comprehension(node, parents)
                             or not isinstance(_repeating_scope(node, parents), (ast.FunctionDef, ast.AsyncFunctionDef)))
    roots = stale.roots
    built_line = _line(locate(stale.stmt, stale.path), main_path)
    entry = reuse.value.via.get(stale) if isinstance(reuse.value, Tensor) else None
    if _comprehension_variable(entry, parents):  # ``e`` of ``[... e ... for e in ema]``: not the user's name
        entry = None
    carried = stale.old and same_call and isinstance(entry, (ast.Name, ast.Attribute))
    names = _Names(parents, main_path)
    here = names.home(node) if reuse.module.path == main_path else None
    # built in a callee, whose names the finding's code does not have: name the value by the
    # name it enters the backward by, if that is a plain name of the finding's own function
    entry_here = (isinstance(entry, (ast.Name, ast.Attribute)) and reuse.module.path == main_path
                  and stale.path == main_path and names._in_main(entry) and names.home(entry) is here
                  and names.home(stale.stmt) is not here and "[" not in ast.unparse(entry))
    what = f"`{ast.unparse(entry) if carried or entry_here else stale.what}`"
    at_finding = names.roots(stale, here) if reuse.module.path == main_path else {}
    at_site = names.roots(stale, names.home(stale.site)) if stale.path == main_path else {}
    args = {
        "call": f"`{short(node)}`",
        "what": what,
        "origin": describe_roots(roots, names=at_finding),
        "origin_zh": describe_roots(roots, "zh-cn", names=at_finding),
        "built_line": built_line,
        "built_where_zh": _where_zh(locate(stale.stmt, stale.path), main_path),
        "freed_where_zh": _where_zh(locate(info.call, info.path), main_path),
        "freed_call": f"`{short(info.call)}`",
        "freed_line": _line(locate(info.call, info.path), main_path),
        # the same call again: a loop's next pass, or another call of the function it is in
        "when": (" in the previous iteration" if in_loop else " in an earlier call") if same_call else "",
        "when_zh": ("（在上一次迭代中）" if in_loop else "（在之前的一次调用中）") if same_call else "",
    }
    if reuse.code == "GG102":  # what walking it again does: only two backward() calls add up in .grad
        twice = _accumulates(info.call) and _accumulates(node)
        args["effect"] = (f", but the gradients of {args['origin']} are accumulated twice" if twice else
                          "; nothing is counted twice (`autograd.grad` returns its gradients rather than "
                          "adding them to `.grad`), but an op that saves a tensor on that path would make it raise")
        args["effect_zh"] = (f"，但 {args['origin_zh']} 的梯度会被累加两次" if twice else
                             "；梯度不会被重复累加（`autograd.grad` 直接返回梯度而不累加到 `.grad`），"
                             "但这条路径上只要有一个保存张量的运算就会报错")
    message = rule.message["en"].format(**args)
    severity = rule.severity if reuse.exact else "warning"
    if not reuse.exact:  # (exact values, the graph held on some paths only: a branch may cut it)
        message += BRANCHED if reuse.value.exact and reuse.stale in reuse.value.maybe else \
            SEVERAL if reuse.value.exact and reuse.stale in reuse.value.weak else UNRESOLVED
    # at the place where the graph was built, the names of that place
    related = [_related("built", locate(stale.stmt, stale.path), what=f"`{stale.what}`",
                        origin=describe_roots(roots, names=at_site),
                        origin_zh=describe_roots(roots, "zh-cn", names=at_site))]
    for root in sorted(roots, key=Root.place)[:2]:
        key = "origin_params" if root.kind == "params" else "origin_tensor"
        related.append(_related(key, locate(root.node, root.path), name=root.name))
    related.append(_related("freed", locate(info.call, info.path), call=args["freed_call"],
                            when=args["when"], when_zh=args["when_zh"]))
    fixes = _fixes(reuse, locate, main_path, parents, trained)
    return Finding(reuse.code, severity, message, locate(node, reuse.module.path), tuple(related),
                   tuple(fixes), tuple(args.items()))


def _fixes(reuse, locate, main_path, parents, trained) -> list:
    info, node = reuse.info, reuse.node
    if reuse.module.path == main_path:
        update = no_grad_update_fix(reuse, locate, main_path, parents)
        if update is not None:  # weights an in-place update with grad on wrote the graph into
            return [update]
    if info.call is node:
        return _stale_fixes(reuse, locate, main_path, parents, trained)
    fixes: list[Fix] = []
    if info.stepped:
        if info.path == main_path and reuse.module.path == main_path and reuse.code == "GG101":
            moved = move_step_fix(reuse, locate, main_path, parents)
            if moved is not None:  # backwards that keep the graph, run after the step: reorder
                return [moved]
        # a GAN's fake: detach it where the first loss took it, if that one place holds all of
        # the shared graph and the first loss keeps graph of its own
        entries = {id(i.via): i.via for i in reuse.infos.values()}
        if len(entries) == 1 and info.via is not None and info.path == main_path:
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
    elif not fixes and info.path == main_path and reuse.module.path == main_path:
        fixes.extend(_walk_again_fixes(reuse, locate, main_path, parents))
    return fixes


def _walk_again_fixes(reuse, locate, main_path, parents) -> list:
    """GG102 of a graph walked a second time on purpose: keep it for that walk, and clear the
    gradients the first walk left, so the second gives them once rather than twice."""
    first, second = reuse.info.call, reuse.node
    if not (_accumulates(first) and _accumulates(second)):
        # autograd.grad adds nothing to .grad: keeping the graph is all there is to do
        return [_retain(first, locate, main_path, preferred=True)]
    stmt = _statement_of(second, parents)
    home = _function_of(second, parents)
    roots = sorted(reuse.stale.roots, key=Root.place)
    if stmt is None or not roots or any(r.path != main_path or _function_of(r.stmt, parents) is not home
                                        for r in roots):
        return []
    resets = [f"{r.name}.zero_grad()" if r.kind == "params" else f"{r.name}.grad = None" for r in roots]
    return [Fix("retain_graph_and_insert_before",
                f"Keep the graph for the second walk and clear the gradients before it: `{resets[0]}`",
                (("call0", locate(first, main_path)), ("before", locate(stmt, main_path))), preferred=True,
                texts=(("statement", "\n".join(dict.fromkeys(resets))),))]


def _stale_fixes(reuse, locate, main_path, parents, trained_roots) -> list:
    """The same backward call met the graph freed in an earlier iteration."""
    stale, info, node, value = reuse.stale, reuse.info, reuse.node, reuse.value
    fixes: list[Fix] = []
    in_main = reuse.module.path == main_path
    if in_main and reuse.code == "GG101":
        emptied = clear_fix(reuse, locate, main_path, parents)
        if emptied is not None:  # lists of old episodes' graphs: empty them, nothing else is wrong
            return [emptied]
    scope = _repeating_scope(node, parents) if in_main else None
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) and stale.path == main_path \
            and isinstance(value, Tensor) and not _within(stale.stmt, scope):
        # a helper that backwards what its caller built: the caller's loop is what repeats
        loops = [loop for seg in value.segs - set(reuse.hits) if seg.path == main_path
                 for loop in [_loop_of(seg.stmt, parents)]
                 if loop is not None and not _within(stale.stmt, loop) and not _within(loop, scope)]
        if loops:
            scope = max(loops, key=lambda loop: (loop.lineno, loop.col_offset))
    if isinstance(stale.old, ast.AST) and scope is not None and _within(node, stale.old):
        return _carried_fixes(reuse, locate, main_path, parents, stale.old)
    fresh = (value.segs if isinstance(value, Tensor) else frozenset()) - set(reuse.hits)
    if scope is not None:  # graph this iteration builds itself
        fresh = {s for s in fresh if s.path == main_path and _within(s.stmt, scope)}
    # Cutting the stale part is a fix only if this iteration still reaches parameters without it
    # (built here, or requires_grad origins that no freed part holds).
    reached = frozenset().union(*(h.roots for h in reuse.hits))
    own_graph = any(s.direct for s in fresh) or (isinstance(value, Tensor) and bool(value.roots - reached))
    stmt = stale.stmt
    chain = _chain_before(scope, reuse.hits, main_path, parents) if scope is not None else []
    names = {ast.unparse(t) for s in chain for t in _targets(s)}
    target = ast.unparse(node.func.value) if isinstance(node.func, ast.Attribute) else None
    entry = value.via.get(stale) if isinstance(value, Tensor) else None
    # Recomputing helps if the iteration's own graph reads it by name inside the repeated body,
    # or it is the backwarded value itself.
    read_inside = (entry is not None and ast.unparse(entry) in names
                   and any(_within(entry, s) for s in scope.body))
    recomputable = chain and ((fresh and read_inside) or target in names)
    if stale.roots & trained_roots and recomputable:
        # built from parameters being trained: the user wants its gradient, every iteration
        fixes.append(Fix("insert_before", f"Recompute `{stale.what}` in every iteration",
                         (("before", locate(scope.body[0], main_path)),), preferred=True,
                         texts=(("statement", "\n".join(ast.unparse(s) for s in chain)),)))
    if own_graph and stale.path == main_path and isinstance(stmt, (ast.Assign, ast.AnnAssign)) \
            and stmt.value is not None and stale.what not in _differentiated_names(parents.tree):
        fixes.append(Fix("no_grad", f"Compute `{stale.what}` under `torch.no_grad()` (line {stmt.lineno})",
                         (("stmt", locate(stmt, stale.path)),), preferred=not fixes))
        fixes.append(Fix("detach", f"Detach `{stale.what}` where it is computed: `.detach()`",
                         (("expr", locate(_tensor_part(stmt.value, stale.site), stale.path)),)))
    if not fixes and not info.stepped and in_main and reuse.code == "GG101":
        if chain and target in names:
            # the backwarded value itself is built before the loop, from values nothing updates:
            # building it again gives the same gradients, and no graph is kept for the next walk
            fixes.append(Fix("insert_before", f"Compute `{target}` in every iteration",
                             (("before", locate(scope.body[0], main_path)),), preferred=True,
                             texts=(("statement", "\n".join(ast.unparse(s) for s in chain)),)))
        fixes.append(_retain(node, locate, main_path, preferred=not fixes))
    return fixes


def _carried_fixes(reuse, locate, main_path, parents, loop) -> list:
    """State carried from one iteration of ``loop`` to the next: detach the variables that
    carry it once the backward is done with it."""
    exposed = _read_before_written(loop)
    scope = _function_of(loop, parents) or parents.tree
    names = [n for n in reuse.carriers if n in exposed or "." in n]  # attributes persist
    stmt = parents.statement(reuse.node)
    if not names or stmt is None:
        return []
    # after the backward, or after the last statement of the iteration that assigns a carrier
    # (``state = next_state``), so that what flows into the next iteration is the detached value
    anchor = stmt
    if any(s is stmt for s in loop.body):
        later = loop.body[next(i for i, s in enumerate(loop.body) if s is stmt) + 1:]
        assigning = [s for s in later if isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign))
                     and {ast.unparse(t) for t in _targets(s)} & set(names)]
        anchor = assigning[-1] if assigning else stmt
    # a name some statement binds to a constant may hold that number, not a tensor, at the
    # anchor: unless the anchor computes it, or the backward was called on it
    surely = {ast.unparse(t) for t in _targets(anchor)} if anchor is not stmt else set()
    if isinstance(reuse.node.func, ast.Attribute):
        surely.add(ast.unparse(reuse.node.func.value))
    plain = _assigned_constants(scope) - surely
    torch = _torch_alias(parents.tree)
    if torch is None:
        names = [n for n in names if n not in plain]
    if not names:
        return []
    lines = [_detached(n, reuse.carriers[n], torch if n in plain else None) for n in names]
    what = ", ".join(f"`{n}`" for n in names)
    return [Fix("insert_after", f"Detach {what} after the backward, so the next iteration starts a new graph",
                (("after", locate(anchor, main_path)),), preferred=True, texts=(("statement", "\n".join(lines)),))]


def _detached(name: str, value, torch) -> str:
    """``name = <name detached>``; ``torch``: check it holds a tensor first (it may hold a number)."""
    if isinstance(value, Tup):
        return f"{name} = tuple(t.detach() for t in {name})"
    if isinstance(value, Box):
        return f"{name} = [t.detach() for t in {name}]"
    if torch is not None:
        return f"{name} = {name}.detach() if isinstance({name}, {torch}.Tensor) else {name}"
    return f"{name} = {name}.detach()"


def _torch_alias(tree):
    """How the module names ``torch`` (``import torch as th``), or None."""
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "torch":
                    return alias.asname or "torch"
    return None


def _assigned_constants(scope) -> set:
    """The names (and attribute chains) some statement of ``scope`` binds to a constant (a
    number, None): ``.detach()`` on one of them could meet that instead of a tensor."""
    out = set()
    for node in ast.walk(scope):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Constant):
            out.update(ast.unparse(t) for t in _targets(node))
    return out


def _read_before_written(loop) -> set:
    """Names the loop body reads before assigning them: what flows in from the last iteration."""
    written: set = set()
    exposed: set = set()

    def reads(node):
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in written:
                exposed.add(n.id)

    def writes(target):
        for n in ast.walk(target):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                written.add(n.id)

    def visit(stmts):
        for st in stmts:
            if isinstance(st, ast.Assign):
                reads(st.value)
                for t in st.targets:
                    writes(t)
            elif isinstance(st, ast.AugAssign):
                reads(st.value)
                if isinstance(st.target, ast.Name) and st.target.id not in written:
                    exposed.add(st.target.id)
                writes(st.target)
            elif isinstance(st, ast.If):  # written after it only if written on both branches
                reads(st.test)
                before = set(written)
                visit(st.body)
                in_body = set(written)
                written.intersection_update(before)
                visit(st.orelse)
                written.intersection_update(in_body)
                written.update(before)
            elif isinstance(st, (ast.While, ast.For, ast.AsyncFor)):  # may run no time at all
                before = set(written)
                if isinstance(st, ast.While):
                    reads(st.test)
                else:
                    reads(st.iter)
                    writes(st.target)
                visit(st.body)
                visit(st.orelse)
                written.intersection_update(before)
            elif isinstance(st, (ast.With, ast.AsyncWith)):
                for item in st.items:
                    reads(item.context_expr)
                visit(st.body)
            elif isinstance(st, ast.Try):
                visit(st.body)
            elif not isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                reads(st)

    visit(loop.body)
    return exposed


def _constructs_object(call: ast.Call) -> bool:
    """A call of a class by its capitalised name (a Distribution, a dataclass): not a tensor."""
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
    return name[:1].isupper()


def _tensor_part(value, site):
    """The expression to detach: the assigned value, or the element of a container literal
    (or the element expression of a comprehension) that holds the graph."""
    while True:
        if isinstance(value, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            value = value.elt
        elif isinstance(value, ast.DictComp):
            value = value.value
        elif isinstance(value, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
            parts = value.values if isinstance(value, ast.Dict) else value.elts
            inner = [p for p in parts if p is not None and _within(site, p)]
            if not inner:
                return value
            value = inner[0]
        elif isinstance(value, ast.Call) and _constructs_object(value):
            # Categorical(logits=policy(x)): the object has no .detach(); its argument does
            parts = list(value.args) + [k.value for k in value.keywords]
            inner = [p for p in parts if _within(site, p)]
            if not inner:
                return value
            value = inner[0]
        else:
            return value


def _chain_before(scope, segs, main_path, parents) -> list:
    """The assignments before ``scope``, in the same function, that built these segments, in
    order (to recompute them at its start)."""
    home = _function_of(scope, parents)
    stmts = {id(s.stmt): s.stmt for s in segs
             if s.path == main_path and isinstance(s.stmt, (ast.Assign, ast.AnnAssign))
             and s.stmt.end_lineno < scope.lineno and _function_of(s.stmt, parents) is home}
    return sorted(stmts.values(), key=lambda s: (s.lineno, s.col_offset))


def _function_of(node, parents):
    cur = parents.parent(node)
    while cur is not None and not isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        cur = parents.parent(cur)
    return cur


def _targets(stmt):
    return stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]


def _retain(call, locate, main_path, preferred) -> Fix:
    return Fix("retain_graph", f"Keep the graph for the later backward: `retain_graph=True` in {short(call)}",
               (("call0", locate(call, main_path)),), preferred=preferred)


_GRAD_CALLS = ("autograd.grad", "torch.autograd.grad", "grad")


def _differentiated_names(tree) -> set:
    """Names whose graph an ``autograd.grad(outputs, inputs)`` of the file needs: the inputs, the
    names they are computed from in their function, and what the callers of that function pass
    for its parameters (a gradient penalty's ``interpolates`` from ``fake``).  Cutting the graph
    of one of these (detach, no_grad) would make that call raise, so those fixes are not offered."""
    functions = {n.name: n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    names: set = set()
    for call in calls:
        if ast.unparse(call.func) not in _GRAD_CALLS:
            continue
        inputs = call.args[1] if len(call.args) > 1 else next(
            (k.value for k in call.keywords if k.arg == "inputs"), None)
        if inputs is None:
            continue
        home = next((f for f in functions.values() if _within(call, f)), None)
        found = {n.id for n in ast.walk(inputs) if isinstance(n, ast.Name)}
        scope = home if home is not None else tree
        for _ in range(3):  # names computed from names, within the function
            for st in ast.walk(scope):
                if isinstance(st, ast.Assign) and {t.id for t in st.targets if isinstance(t, ast.Name)} & found:
                    found |= {n.id for n in ast.walk(st.value) if isinstance(n, ast.Name)}
        names |= found
        if home is not None:  # what the callers pass for the parameters among them
            params = [a.arg for a in home.args.posonlyargs + home.args.args]
            for site in calls:
                if isinstance(site.func, ast.Name) and site.func.id == home.name:
                    for i, arg in enumerate(site.args):
                        if i < len(params) and params[i] in found:
                            names |= {n.id for n in ast.walk(arg) if isinstance(n, ast.Name)}
                    for k in site.keywords:
                        if k.arg in found:
                            names |= {n.id for n in ast.walk(k.value) if isinstance(n, ast.Name)}
    return names


def _loop_of(node, parents):
    """The innermost loop around ``node`` in its own function."""
    cur = parents.parent(node)
    while cur is not None and not isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        if isinstance(cur, (ast.For, ast.While, ast.AsyncFor)):
            return cur
        cur = parents.parent(cur)
    return None


def _in_comprehension(node, parents) -> bool:
    """``node`` is part of a comprehension's element (its steps repeat it)."""
    cur = parents.parent(node)
    while cur is not None and not isinstance(cur, ast.stmt):
        if isinstance(cur, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            return True
        cur = parents.parent(cur)
    return False


def _repeating_scope(node, parents):
    """What repeats around ``node``: the innermost loop within its function, else the function
    itself (a closure an optimizer evaluates again and again)."""
    cur = parents.parent(node)
    while cur is not None:
        if isinstance(cur, (ast.For, ast.While, ast.AsyncFor, ast.FunctionDef, ast.AsyncFunctionDef)):
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


def _where_zh(loc, main_path: str) -> str:
    where = f"第 {loc.line} 行"
    if loc.cell is not None:
        where = f"单元格 {loc.cell} {where}"
    if loc.path != main_path:
        where = f"{loc.path.rsplit('/', 1)[-1]} {where}"
    return where


def _within(node, outer) -> bool:
    return (outer.lineno, outer.col_offset) <= (node.lineno, node.col_offset) \
        and (node.end_lineno, node.end_col_offset) <= (outer.end_lineno, outer.end_col_offset)


def _accumulates(call) -> bool:
    """A call that adds its gradients into ``.grad`` (``backward()``, ``torch.autograd.backward``),
    unlike ``autograd.grad``, which returns them."""
    func = getattr(call, "func", None)
    return (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)) == "backward"


def _is_plain_backward(call) -> bool:
    return (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and call.func.attr == "backward" and not call.args and not call.keywords)


def _statement_of(call, parents):
    stmt = parents.statement(call)
    if isinstance(stmt, ast.Expr) and stmt.value is call:
        return stmt
    return None
