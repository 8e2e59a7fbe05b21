"""The abstract state at one program point, and how states meet at joins and loop back edges.

``freed`` holds the segments that are freed on *every* path here (must-freed): a later backward
that reaches one of them certainly raises. Joins therefore intersect it. ``wfreed`` holds
segments freed *weakly*: a backward reached them through one element of a container whose
summary they are, so only some of the graphs they stand for are freed. A loop that walks the
whole container frees all of them; at its exit they become freed.
"""
from __future__ import annotations

import ast
from itertools import compress
from operator import is_, is_not
from typing import Optional

from .values import UNKNOWN, After, Box, Const, Iter, Layer, Tensor, Tup, Unknown, Val, join


class FreeInfo:
    """Which backward freed a segment, the expression through which that backward reached it,
    and whether parameters were updated in place since (then retain_graph is no fix)."""

    __slots__ = ("call", "path", "via", "stepped", "inplace", "maker")

    def __init__(self, call: ast.Call, path: str, via: Optional[ast.AST], stepped: bool = False,
                 inplace: Optional[ast.stmt] = None, maker=None):
        self.call, self.path, self.via, self.stepped = call, path, via, stepped
        # not freed but spoilt: ``call``, in the statement ``inplace``, modified in place a tensor
        # the segment saved (the backward that walks it raises the in-place error instead)
        self.inplace = inplace
        self.maker = maker  # (constructor call, path) of the in-place layer that wrote it

    def __eq__(self, other):
        return (type(other) is FreeInfo and other.call is self.call
                and other.stepped == self.stepped and other.inplace is self.inplace)

    def __hash__(self):
        return id(self.call)


# ``State.owned``: which of its two large dicts a state may write in place. The globals and the
# heap are shared, not copied, when a state is copied (at every branch and loop pass) and are
# copied by the first write (``own_globals`` / ``own_heap``); a join of states that left one
# untouched shares it too. Reads use ``st.globals`` / ``st.heap`` as they are.
GLOBALS, HEAP = 1, 2
OWNED = GLOBALS | HEAP
# heap entries: a backward() whose reach is not known has run on this path, so any parameter may
# hold a .grad; (GRAD_OF, root): that parameter may hold one (a backward reached it, and no
# ``zero_grad()`` set it to None since)
GRADS_FILLED, FILLED = ("$grads", "filled"), Const(True)
GRAD_OF = "$grad"
# (GRAD_GONE, root): ``zero_grad()`` set that parameter's .grad to None since the last backward
# of unknown reach (which may have filled it)
GRAD_GONE = "$grad_gone"
# a call's keyword for arguments it passes that no parameter can be matched to (``**options``,
# ``*xs`` of unknown length): the parameters left are unknown, not their defaults
UNBOUND = "**"


class State:
    __slots__ = ("locals", "globals", "heap", "freed", "grad", "wfreed", "owned", "swaps")

    def __init__(self, locals_, globals_, heap, freed, grad, wfreed=None, owned=OWNED):
        self.locals: Optional[dict] = locals_  # None at module level: names live in globals
        self.globals: dict = globals_
        self.heap: dict = heap  # (oid, attribute) -> Val
        self.freed: dict = freed  # Seg -> FreeInfo
        self.grad: Optional[bool] = grad  # grad mode: True, False, or None when unknown
        self.wfreed: dict = {} if wfreed is None else wfreed  # Seg -> FreeInfo
        # a state made to run a call or a class body on its caller's dicts writes where the
        # caller would: pass the caller's ``owned``
        self.owned: int = owned
        # (old, new) of each object that changed itself on every path here (``retarget``): a
        # caller's names still hold ``old`` when the call returns
        self.swaps: tuple = ()

    def copy(self) -> "State":
        self.owned = 0
        out = State(None if self.locals is None else dict(self.locals), self.globals,
                    self.heap, dict(self.freed), self.grad, dict(self.wfreed), 0)
        out.swaps = self.swaps
        return out

    def own_globals(self) -> dict:
        if not self.owned & GLOBALS:
            self.globals = dict(self.globals)
            self.owned |= GLOBALS
        return self.globals

    def own_heap(self) -> dict:
        if not self.owned & HEAP:
            self.heap = dict(self.heap)
            self.owned |= HEAP
        return self.heap

    def become(self, other: "State") -> None:
        if other is self:
            return
        self.locals, self.globals, self.heap = other.locals, other.globals, other.heap
        self.freed, self.wfreed, self.grad = other.freed, other.wfreed, other.grad
        self.owned, other.owned = other.owned, 0
        self.swaps = other.swaps

    def adopt(self, other: "State") -> None:
        """Take the heap and freed graphs of the state a call or comprehension ended in."""
        self.heap, self.freed, self.wfreed = other.heap, other.freed, other.wfreed
        self.owned = (self.owned & ~HEAP) | (other.owned & HEAP)
        other.owned &= ~HEAP

    def promote_weak(self, segs=None) -> None:
        """A loop walked a whole container: what its elements (``segs``; None: not known which)
        freed weakly is now freed."""
        if segs is None:
            promoted, self.wfreed = self.wfreed, {}
        else:
            promoted = {s: info for s, info in self.wfreed.items() if s in segs}
            if promoted:
                self.wfreed = {s: info for s, info in self.wfreed.items() if s not in promoted}
        for seg, info in promoted.items():
            self.freed.setdefault(seg, info)

    def lookup(self, name: str) -> Optional[Val]:
        if self.locals is not None and name in self.locals:
            return self.locals[name]
        return self.globals.get(name)

    def bind(self, name: str, value: Val) -> None:
        (self.own_globals() if self.locals is None else self.locals)[name] = value

    def same(self, other: "State") -> bool:
        """Equal as far as graphs go: plain Python values (counters, flags) may differ, since
        a loop that changes only those repeats what it does to tensors."""
        return (self.freed.keys() == other.freed.keys() and self.wfreed.keys() == other.wfreed.keys()
                and self.grad == other.grad and _same_values(self.locals, other.locals)
                and _same_values(self.globals, other.globals) and _same_values(self.heap, other.heap))

    def mark_stepped(self) -> None:
        """Parameters were updated in place: every freed graph now predates an update."""
        self.freed = {s: fi if fi.stepped else FreeInfo(fi.call, fi.path, fi.via, True, fi.inplace)
                      for s, fi in self.freed.items()}


_SCALARS = (Const, After, Unknown)


def _same_values(a, b) -> bool:
    if a is b or a == b:
        return True
    if a is None or b is None or a.keys() != b.keys():
        return False
    return all(x == y or (type(x) in _SCALARS and type(y) in _SCALARS) for x, y in ((a[k], b[k]) for k in a))


def _join_dicts(a: dict, b: dict, branches: bool = False) -> dict:
    """The join of both: ``a`` itself when ``b`` adds nothing to it, else a new dict.

    States meeting at a join mostly hold the very same value objects, so the keys whose values
    differ are found by an identity test that runs entirely in C; only those are joined."""
    if a is b:
        return a
    differ = list(compress(b, map(is_not, map(a.get, b), b.values())))
    if not differ:
        return a
    out = dict(a)
    for k in differ:
        mine = out.get(k)
        out[k] = b[k] if mine is None else _one_of(mine, b[k]) if branches else join(mine, b[k])
    return out


def _one_of(a, b):
    """The value after an ``if`` whose test is unknown: a tensor with a graph that one branch
    cuts (``h = torch.zeros(...)``, ``self.v = 0.``, ``buf.detach_()``) holds it maybe: a
    backward over it may walk that graph or none."""
    out = join(a, b)
    if type(out) is Tensor and out.segs - out.maybe and (
            type(a) is not Tensor or type(b) is not Tensor or not a.segs or not b.segs):
        return out.but(maybe=out.segs)
    return out


def join_states(states, branches: bool = False) -> Optional[State]:
    states = [s for s in states if s is not None]
    if not states:
        return None
    first = states[0]
    if len(states) == 1:
        return first
    locals_, globals_, heap, freed, grad = first.locals, first.globals, first.heap, first.freed, first.grad
    wfreed = first.wfreed
    swaps = first.swaps if all(s.swaps is first.swaps for s in states) else _join_swaps(states)
    for s in states[1:]:
        if locals_ is not None and s.locals is not None:
            locals_ = _join_dicts(locals_, s.locals, branches)
            if locals_ is first.locals:
                locals_ = dict(locals_)  # (locals are copied with the state, never shared)
        globals_ = _join_dicts(globals_, s.globals, branches)
        heap = _join_dicts(heap, s.heap, branches)
        if freed is not s.freed:
            freed = {seg: s.freed[seg] if s.freed[seg].stepped else fi
                     for seg, fi in freed.items() if seg in s.freed}
        if wfreed is not s.wfreed:
            wfreed = {seg: fi for seg, fi in wfreed.items() if seg in s.wfreed or seg in s.freed}
        if grad != s.grad:
            grad = None
    owned = OWNED
    for s in states:  # a dict the join kept is now shared with the states it came from
        if s.globals is globals_:
            owned &= ~GLOBALS
            s.owned &= ~GLOBALS
        if s.heap is heap:
            owned &= ~HEAP
            s.owned &= ~HEAP
    out = State(locals_, globals_, heap, dict(freed), grad, dict(wfreed), owned)
    out.swaps = swaps
    return out


def _join_swaps(states) -> tuple:
    """What each changed object is after the join: the same new object on every path, or the
    join of what each path made of it (itself where a path left it: ``if flag: h.detach_()``)."""
    olds: dict = {}  # id(old) -> old (the very objects: values compare equal by content)
    for s in states:
        for old, _ in s.swaps:
            olds.setdefault(id(old), old)
    out = []
    for key, old in olds.items():
        news = [next((new for o, new in s.swaps if o is old), old) for s in states]
        new = news[0]
        for other in news[1:]:
            if other is not new:
                new = _one_of(new, other)
        out.append((old, new))
    return tuple(out)


_AGED = frozenset((Tensor, Tup, Iter))  # the values that may hold segments


class Ager:
    """Turns the current segments built during one loop iteration into old ones. The old
    segment stands for every earlier run of its op, freed only if each of them is; where a
    value holds a freed old run next to the live current one (an EMA of weights, an alpha an
    update kept), merging them would lose that a backward over the value walks freed graph:
    the old run becomes *older* first (``deepen``: old -> older mapping entries)."""

    def __init__(self, mapping: dict, deepen=None):
        self.mapping = mapping  # Seg -> the old Seg it becomes
        self.deepen = deepen
        self.live: set = set()  # segments some value still depends on
        self.track = True  # whether ``live`` is needed (only where something is freed)

    def tensor(self, t: Tensor) -> Tensor:
        m = self.mapping
        if self.track:
            self.live.update(t.segs)
        if m.keys().isdisjoint(t.segs):
            return t
        via = {m.get(s, s): n for s, n in t.via.items()}
        return Tensor(t.grad, t.leaf, frozenset(m.get(s, s) for s in t.segs), t.roots, via,
                      t.exact, frozenset(m.get(s, s) for s in t.weak) if t.weak else t.weak, t.shape,
                      t.why, m.get(t.storage, t.storage),
                      frozenset(m.get(s, s) for s in t.maybe) if t.maybe else t.maybe, cpu=t.cpu)

    def _kept_apart(self, st: State) -> set:
        """The freed old segments some value holds together with their live current run."""
        m, freed, found = self.mapping, st.freed, set()
        for d in (st.globals, st.heap) + (() if st.locals is None else (st.locals,)):
            for v in d.values():
                for t in _tensors_held(v):
                    for s in t.segs:
                        old = m.get(s)
                        if old is not None and old in t.segs and old in freed and s not in freed:
                            found.add(old)
        return found

    def value(self, v: Val) -> Val:
        tv = type(v)
        if tv is Tensor:
            return self.tensor(v)
        if tv is Tup:
            items = [self.value(x) for x in v.items]
            return v if all(map(is_, items, v.items)) else v.like(items)
        if tv is Iter and v.gen is None:
            elem = self.value(v.elem)
            return v if elem is v.elem else Iter(elem, None, v.wrap)
        return v

    def apply(self, st: State) -> State:
        out = st.copy()
        if self.deepen is not None and any(old in st.freed for old in self.mapping.values()):
            for old in self._kept_apart(st):
                self.mapping.update(self.deepen(old))
        self.track = bool(out.freed or out.wfreed)
        for d, own in ((out.globals, out.own_globals), (out.heap, out.own_heap), (out.locals, None)):
            if d is None:
                continue
            changed = {k: aged for k, v in d.items() if type(v) in _AGED
                       for aged in (self.value(v),) if aged is not v}
            if changed:
                (own() if own is not None else d).update(changed)
        groups: dict = {}
        for cur, old in self.mapping.items():
            groups.setdefault(old, []).append(cur)
        for freed in (out.freed, out.wfreed):
            if not freed:
                continue
            before = dict(freed)
            statuses = {}
            for old, curs in groups.items():
                # an aged segment is freed iff a walk into any execution it now stands for
                # meets a freed one: those of the segments mapped to it, and its own unless they
                # moved on (old -> older); a run built on a freed run that ages with it (an
                # inner loop's recurrence, ``s = a + w * s``) leads the walk into that one
                sources = curs if old in self.mapping else curs + [old]
                sources = [s for s in sources if s in before or s in self.live]
                gone = [s for s in sources if s in before]
                if gone and (len(gone) == len(sources) or all(
                        s in before or not s.deps.isdisjoint([g for g in gone if g is not old]) for s in sources)):
                    # torch's walk meets the latest run first (the one a carried value leads
                    # to; its nodes have the highest sequence numbers): its status, a freed
                    # graph or an overwritten saved tensor, is what the walk raises (of the runs
                    # some value still holds: one that none holds is walked by no backward)
                    statuses[old] = before[min(gone, key=lambda s: (s not in self.live,) + _recency(s))]
            for s in self.mapping:
                freed.pop(s, None)
            for old in groups:
                if old in statuses:
                    freed[old] = statuses[old]
                else:
                    freed.pop(old, None)
        return out


def _recency(seg) -> tuple:
    """Sorts the runs an aged segment stands for, the latest first: this pass's own run, then
    the runs an inner loop aged, then the earlier passes'."""
    return (seg.old is not None, seg.older, seg.uid)


def _tensors_held(v: Val):
    tv = type(v)
    if tv is Tensor:
        yield v
    elif tv is Tup:
        for x in v.items:
            yield from _tensors_held(x)
    elif tv is Iter and v.gen is None:
        yield from _tensors_held(v.elem)


def retarget(st: State, old: Val, new: Val) -> None:
    """The object ``old`` stands for changed itself (``t.detach_()``, ``seq.add_module(...)``), so
    every name, tuple item, attribute and container slot that holds it (the same value, not an
    equal one) holds ``new`` now (``for s in state: s.detach_()`` cuts the tuple's tensors)."""
    def swap(v):
        if v is old:
            return new
        if type(v) is Tup:
            items = tuple(swap(x) for x in v.items)
            if any(a is not b for a, b in zip(items, v.items)):
                return v.like(items)
        elif type(v) is Layer and v.children:  # a container within a container
            children = tuple(swap(x) for x in v.children)
            if any(a is not b for a, b in zip(children, v.children)):
                return Layer(v.qual, v.spec, v.root, children, v.config, v.site)
        return v

    for names, own in ((st.locals, None), (st.globals, st.own_globals)):
        if names is None:
            continue
        changed = {k: w for k, v in names.items() if (w := swap(v)) is not v}
        if changed:
            (own() if own is not None else names).update(changed)
    changed = {k: w for k, v in st.heap.items() if (w := swap(v)) is not v}
    if changed:
        st.own_heap().update(changed)
    st.swaps += ((old, new),)


_ITEM_FACTS = ("items", "blocks", "sealed", "kwkeys", "count", "last")


def forget_items(st: State, box: Box) -> None:
    """The container changed in place: what was known item by item, or key by key, no more."""
    known = [key for key in ((box.oid, fact) for fact in _ITEM_FACTS) if st.heap.get(key, UNKNOWN) is not UNKNOWN]
    if known:
        # marked unknown, not dropped: a join keeps a key that only one side holds, so a path
        # where the items are still known would win over this one, which changed them
        heap = st.own_heap()
        for key in known:
            heap[key] = UNKNOWN
    if st.heap.get((box.oid, "keyed")) == KNOWN:
        # the keys known present may be gone: no longer known (False, not dropped, so that a
        # join with a path where they are still there does not keep them)
        heap = st.own_heap()
        for key in [k for k in heap if k[0] == box.oid and type(k[1]) is tuple and k[1][0] == "has"]:
            heap[key] = UNSURE
        heap[(box.oid, "keyed")] = UNSURE


def note_keys(st: State, box: Box, keys) -> None:
    """A dict made with these constant keys: ``'k' in d`` is True, and ``d`` is not empty."""
    heap = st.own_heap()
    for key in keys:
        heap[(box.oid, ("has", key))] = KNOWN
    if keys:
        heap[(box.oid, "keyed")] = KNOWN


def has_key(st: State, box: Box, key) -> bool:
    return st.heap.get((box.oid, ("has", key))) == KNOWN


def surely_not_empty(st: State, box: Box) -> bool:
    return st.heap.get((box.oid, "keyed")) == KNOWN


KNOWN, UNSURE = Const(True), Const(False)
