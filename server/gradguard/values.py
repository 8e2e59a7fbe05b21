"""The abstract values of the analysis: what a variable may hold, as far as autograd cares.

A tensor value records whether it requires grad, which graph segments it depends on, the
``requires_grad`` origins (roots) those segments came from, and through which expression each
segment entered it (``via``, used to place a ``.detach()`` fix).

A graph segment (:class:`Seg`) is the node an op built at one code site, in one call context.
Recency abstraction: ``old=None`` is the segment built by the most recent execution of its
site; ``old=L`` summarises the executions in earlier iterations of loop ``L``. Aging at the back
edge of ``L`` turns what its iteration built into ``L``'s old segments, so a graph rebuilt every
iteration is fresh while one carried across iterations is recognisably stale.
"""
from __future__ import annotations

import ast
from typing import Optional

from . import shapes

# Whether a tensor requires grad. NO: nothing known makes it (it may, through code that is not
# followed); NEVER: it certainly does not (made without grad recording, detached, a plain
# factory). Joins take the maximum, so NEVER survives only where every path agrees.
NEVER, NO, MAYBE, YES = -1, 0, 1, 2


class Root:
    """A ``requires_grad`` origin: a leaf tensor, or the parameters of a module."""

    __slots__ = ("node", "stmt", "path", "kind")

    def __init__(self, node: ast.AST, stmt: ast.stmt, path: str, kind: str):
        self.node, self.stmt, self.path, self.kind = node, stmt, path, kind  # kind: tensor|params

    @property
    def name(self) -> str:
        return target_text(self.stmt, self.node)

    def __repr__(self):
        return f"Root({self.name}@{self.node.lineno})"

    def place(self) -> tuple:
        """Where it was made: the order roots are shown in (a set's order varies by run)."""
        return self.path, self.node.lineno, self.node.col_offset


class Seg:
    """A graph segment: the backward node(s) built by one op site in one context."""

    __slots__ = ("site", "ctx", "old", "saves", "path", "stmt", "roots", "order", "current", "uid",
                 "direct", "deps", "kept", "born", "older", "base", "key")

    def __init__(self, site, ctx, old, saves, path, stmt, roots, order, uid):
        self.site: ast.AST = site
        self.ctx: tuple = ctx
        self.old: bool = old
        self.saves: Optional[bool] = saves
        self.path: str = path
        self.stmt: ast.stmt = stmt
        self.roots: frozenset = roots
        self.order: int = order
        self.current: Optional["Seg"] = None  # for an old segment: its current counterpart
        self.uid = uid  # creation rank: orders choices between segments so results are stable
        self.direct = False  # built straight from a requires_grad leaf, not only from other graph
        self.deps: frozenset = frozenset()  # the segments its inputs carried: the graph below it
        # the storages (Tensor.storage) of the tensors it saved, as far as known for sure
        self.kept: frozenset = frozenset()
        self.born = 0  # when its op last ran (Engine.clock): which run of the site a walk saw
        # an old segment stands for the loop's previous iteration; an older one for all before
        # it: a value that holds both (an EMA of weights, a sum carried along) tells them apart
        self.older = False
        # a keyed read's alias (``fast["fc1.weight"]`` of a dict whose values summarise several
        # graphs): the part of ``base`` that the element at ``key`` holds
        self.base: Optional["Seg"] = None
        self.key = None

    @property
    def what(self) -> str:
        """What the user calls the value this segment built: its assignment target."""
        return target_text(self.stmt, self.site)

    def __repr__(self):
        return f"Seg({self.what}@{self.site.lineno}{('/older' if self.older else '/old') if self.old else ''})"


def target_text(stmt, fallback: ast.AST) -> str:
    """The name a statement binds (``Y``, ``self.prev_ft``), else the expression's own text."""
    targets = []
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
        targets = [stmt.target]
    for t in targets:
        if isinstance(t, (ast.Name, ast.Attribute)):
            return ast.unparse(t)
        if isinstance(t, ast.Tuple) and t.elts and isinstance(t.elts[-1], (ast.Name, ast.Attribute)):
            return ", ".join(ast.unparse(e) for e in t.elts)
    text = ast.unparse(fallback)
    return text if len(text) <= 40 else text[:37] + "..."


class Val:
    __slots__ = ()


class Unknown(Val):
    __slots__ = ()

    def __repr__(self):
        return "?"


UNKNOWN = Unknown()


class Const(Val):
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        return type(other) is Const and type(self.value) is type(other.value) and self.value == other.value

    def __hash__(self):
        return hash(("c", repr(self.value)))


NONE = Const(None)


class Number(Val):
    """A Python number, or sizes, whose value is not known (``t.item()``, ``x.shape[0]``,
    ``len(xs)``, ``float(loss)``): certainly no tensor, so no graph and no requires_grad."""

    __slots__ = ()

    def __eq__(self, other):
        return type(other) is Number

    def __hash__(self):
        return 5


NUMBER = Number()


class After(Val):
    """A loop counter past its first value: ``range(start, …)`` in the second and later iterations."""

    __slots__ = ("start",)

    def __init__(self, start):
        self.start = start

    def __eq__(self, other):
        return type(other) is After and other.start == self.start

    def __hash__(self):
        return hash(("after", self.start))


class Tensor(Val):
    __slots__ = ("grad", "leaf", "segs", "roots", "via", "exact", "weak", "shape", "why", "storage", "maybe",
                 "integral", "boolean", "strided", "params", "cpu")

    def __init__(self, grad=NO, leaf=True, segs=frozenset(), roots=frozenset(), via=None,
                 exact=True, weak=frozenset(), shape=None, why=frozenset(), storage=None, maybe=frozenset(),
                 integral=False, strided=False, boolean=False, params=None, cpu=False):
        self.grad = grad
        self.leaf = leaf
        self.segs: frozenset = segs
        self.roots: frozenset = roots
        self.via: dict = via or {}  # Seg -> the ast expression through which it entered
        self.exact = exact  # False once it went through something we could not resolve
        # segments read out of a container that summarises several tensors: a backward frees
        # only one of the graphs they stand for, so it frees them weakly
        self.weak: frozenset = weak
        self.shape = shape  # what is known of its shape (gradguard.shapes)
        # for a NEVER tensor: why it does not require grad, as (kind, ast node) pairs (grad
        # recording off, detached, rebuilt from numbers, gradients without create_graph)
        self.why: frozenset = why
        # which memory it is (the Seg that computed it, the Root of a parameter, the site of a
        # factory): an in-place write to it changes what ops that saved it will find
        self.storage = storage
        # segments it holds on some paths only (a branch whose test is unknown cut its graph on
        # the other): a backward over it may walk them or not, so they never make an error
        self.maybe: frozenset = maybe
        # known to be of an integer or bool dtype (``torch.tensor([2])``, ``x.long()``): torch
        # never lets such a tensor require grad (a cast to one cuts the graph); ``INDEX``: of an
        # integer dtype, surely not bool (joins keep the least of the two)
        self.integral = integral
        self.boolean = boolean  # known to be of bool dtype: indexing by it is masking
        # may be laid out other than contiguously (a transposed or sliced view, or an op's
        # result over one: element-wise ops keep their input's strides), so ``reshape`` of it
        # may copy; otherwise reshape, flatten and ravel return a view of its memory
        self.strided = strided
        # of a ``torch.distributions`` object (modelled as the tensor of its parameters' graphs):
        # its class and the values given for its parameters, by name
        self.params = params
        # known to live on the CPU (a factory's leaf made without a device, a parameter of one):
        # ``.cpu()`` and ``.to("cpu")`` of it return it itself, on any machine
        self.cpu = cpu

    def but(self, **changes) -> "Tensor":
        """A copy with some fields changed."""
        fields = {name: getattr(self, name) for name in self.__slots__}
        fields.update(changes)
        return Tensor(**fields)

    def __eq__(self, other):
        return (type(other) is Tensor and self.grad == other.grad and self.segs == other.segs
                and self.roots == other.roots and self.leaf == other.leaf
                and self.exact == other.exact and self.weak == other.weak
                and self.shape == other.shape and self.maybe == other.maybe and self.integral == other.integral
                and self.boolean == other.boolean)

    def __hash__(self):
        return hash((self.grad, self.segs, self.roots))

    def __repr__(self):
        return f"T(g={self.grad},{sorted(self.segs, key=lambda s: s.order)})"


class LibRef(Val):
    """A name from a library outside the project (torch, copy, numpy…), fully qualified."""

    __slots__ = ("qual",)

    def __init__(self, qual: str):
        self.qual = qual

    def __eq__(self, other):
        return type(other) is LibRef and other.qual == self.qual

    def __hash__(self):
        return hash(self.qual)


class Builtin(Val):
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __eq__(self, other):
        return type(other) is Builtin and other.name == self.name

    def __hash__(self):
        return hash(self.name)


class Partial(Val):
    """``functools.partial(func, *args, **kwargs)``: calling it calls ``func`` with those first."""

    __slots__ = ("func", "args", "kwargs")

    def __init__(self, func, args: tuple, kwargs: dict):
        self.func, self.args, self.kwargs = func, args, kwargs  # args/kwargs: (value, node) pairs


class TupleType(Val):
    """A named tuple class made by ``namedtuple("P", "a b")``: calling it makes a ``Tup``."""

    __slots__ = ("names",)

    def __init__(self, names: tuple):
        self.names = names

    def __eq__(self, other):
        return type(other) is TupleType and other.names == self.names

    def __hash__(self):
        return hash(self.names)


class ModRef(Val):
    """A user module of the project, analysed on import."""

    __slots__ = ("module",)

    def __init__(self, module):
        self.module = module


class Func(Val):
    __slots__ = ("node", "module", "defaults", "is_gen", "grad_mode", "owner", "closure", "grad_site")

    def __init__(self, node, module, defaults, is_gen, grad_mode, closure=None, grad_site=None):
        self.node, self.module, self.defaults = node, module, defaults
        self.is_gen, self.grad_mode = is_gen, grad_mode
        self.grad_site = grad_site  # the decorator that sets its grad mode
        self.owner = None  # the Class whose body defines it
        # a nested def: the enclosing function's variables as they were when it was defined
        self.closure: Optional[dict] = closure


class Class(Val):
    __slots__ = ("node", "module", "bases", "attrs", "is_module", "name", "fields", "named_tuple")

    def __init__(self, node, module, bases, attrs, is_module, fields=None, named_tuple=False):
        self.node, self.module, self.bases, self.attrs = node, module, bases, attrs
        self.is_module, self.name = is_module, node.name
        # a dataclass's fields, in order: (name, "factory" | "default" | "required", expression)
        self.fields: Optional[tuple] = fields
        self.named_tuple = named_tuple  # its instances are tuples (``Tup``) with these field names

    def lookup(self, name):
        if name in self.attrs:
            return self.attrs[name]
        for base in self.bases:
            if isinstance(base, Class):
                found = base.lookup(name)
                if found is not None:
                    return found
        return None


class Obj(Val):
    """An instance of a user class; its attributes live in the state's heap under ``oid``.
    ``some``: read out of a container by an index the analysis cannot pin (``agents[i]``), it is
    one of several instances made at one place: what its attributes hold is a maybe."""

    __slots__ = ("oid", "cls", "some")

    def __init__(self, oid, cls, some=False):
        self.oid, self.cls, self.some = oid, cls, some

    def __eq__(self, other):
        return type(other) is Obj and other.oid == self.oid

    def __hash__(self):
        return hash(self.oid)


class Layer(Val):
    """A torch nn.Module instance (built-in layer or container)."""

    __slots__ = ("qual", "spec", "root", "children", "config", "site")

    def __init__(self, qual, spec, root, children=(), config=None, site=None):
        self.qual, self.spec, self.root, self.children = qual, spec, root, children
        self.config = config  # constructor arguments its output shape follows (shapes.Of/values)
        self.site = site  # (its constructor call, that file's path): for a layer that may work in place

    def __eq__(self, other):
        return type(other) is Layer and other.qual == self.qual and other.root is self.root

    def __hash__(self):
        return hash((self.qual, id(self.root)))


INDEX = 2  # ``Tensor.integral`` of an integer tensor, never a bool one (``randperm``, ``argmax``)
LAYER_BASE = "$layer"  # the heap slot of the torch layer a project's subclass of one is built on


class Optim(Val):
    """An optimizer over ``params``. ``some``: read out of a list of optimizers by an index the
    analysis cannot pin (``optimizers[i]``), it steps one of their parameter sets: a maybe."""

    __slots__ = ("qual", "params", "some")

    def __init__(self, qual, params, some=False):
        self.qual, self.params, self.some = qual, params, some

    def __eq__(self, other):
        return type(other) is Optim and other.qual == self.qual and other.params == self.params

    def __hash__(self):
        return 1


# Tuples and iterators hold values, which a program can nest without end (``x = (x, a)`` on
# 3,000 lines, ``it = zip(it, ys)`` in a loop), and every walk over them (join, equality,
# ageing) recurses as deep. Each knows its depth; what would lie deeper than this is unknown
# (widened where it is made; unknown never supports an error).
MAX_VALUE_DEPTH = 24


def _depth(x) -> int:
    t = type(x)
    return x.depth if t is Tup or t is Iter else 0


def _part_depth(part) -> int:
    """Of a part of an iterator's ``wrap``: a value, a tuple of values, or anything else."""
    if type(part) is tuple:
        return max(map(_depth, part), default=0)
    return _depth(part)


def _capped(x):
    return UNKNOWN if _depth(x) >= MAX_VALUE_DEPTH - 1 else x


def _capped_part(part):
    return tuple(map(_capped, part)) if type(part) is tuple else _capped(part)


class Tup(Val):
    """A tuple with known elements (a named tuple's have names too)."""

    __slots__ = ("items", "names", "depth")

    def __init__(self, items, names: Optional[tuple] = None):
        items = tuple(items)
        depth = 0
        for x in items:
            t = type(x)
            if (t is Tup or t is Iter) and x.depth > depth:
                depth = x.depth
        if depth >= MAX_VALUE_DEPTH:
            items, depth = tuple(_capped(x) for x in items), MAX_VALUE_DEPTH - 1
        self.items, self.names, self.depth = items, names, depth + 1

    def like(self, items) -> "Tup":
        """A tuple of the same kind with other items."""
        return Tup(items, self.names)

    def __eq__(self, other):
        return type(other) is Tup and other.items == self.items and other.names == self.names

    def __hash__(self):
        return hash(self.items)


class Box(Val):
    """A mutable container (list, dict, set); its elements' join lives in the heap. ``some``: it
    was read out of a container of containers by an index the analysis cannot pin, so it stands
    for one of several (``per_agent[i]``): what it holds is one of their graphs, a maybe."""

    __slots__ = ("oid", "kind", "some")

    def __init__(self, oid, kind, some=False):
        self.oid, self.kind, self.some = oid, kind, some

    def __eq__(self, other):
        return type(other) is Box and other.oid == self.oid

    def __hash__(self):
        return hash(self.oid)


class Iter(Val):
    """Something a ``for`` loop can walk: ``elem`` is what each step yields.

    ``gen`` is a pending generator call, re-run at every step so that what it builds is fresh.
    """

    __slots__ = ("elem", "gen", "wrap", "depth")

    def __init__(self, elem=UNKNOWN, gen=None, wrap=None):
        depth = _depth(elem)
        if gen is not None:
            depth = max(depth, max(map(_depth, gen[1]), default=0), max((_depth(x) for _, x in gen[2]), default=0))
        if wrap is not None:
            depth = max(depth, max(map(_part_depth, wrap[1:]), default=0))
        if depth >= MAX_VALUE_DEPTH:
            elem = _capped(elem)
            if gen is not None:
                gen = (gen[0], tuple(map(_capped, gen[1])), tuple((k, _capped(x)) for k, x in gen[2])) + gen[3:]
            if wrap is not None:
                wrap = (wrap[0],) + tuple(_capped_part(x) for x in wrap[1:])
            depth = MAX_VALUE_DEPTH - 1
        self.elem, self.gen, self.wrap, self.depth = elem, gen, wrap, depth + 1

    def __eq__(self, other):
        return type(other) is Iter and other.elem == self.elem and other.gen == self.gen and other.wrap == self.wrap

    def __hash__(self):
        return 2


class Bound(Val):
    """A method looked up on a value: ``recv.name``."""

    __slots__ = ("recv", "name", "func")

    def __init__(self, recv, name, func=None):
        self.recv, self.name, self.func = recv, name, func

    def __eq__(self, other):
        return type(other) is Bound and other.recv == self.recv and other.name == self.name

    def __hash__(self):
        return hash(self.name)


class MutationCtx(Val):
    """``torch.autograd.graph.allow_mutation_on_saved_tensors()``: within it, a saved tensor
    written in place is copied first, so the backward finds what it saved."""

    __slots__ = ()


MUTATION_ALLOWED = MutationCtx()


class GradCtx(Val):
    """A grad-mode context manager or decorator (``torch.no_grad()``…); enabled may be None.
    ``inference``: ``torch.inference_mode()``, which an ``enable_grad`` inside does not lift."""

    __slots__ = ("enabled", "inference")

    def __init__(self, enabled, inference=False):
        self.enabled, self.inference = enabled, inference

    def __eq__(self, other):
        return type(other) is GradCtx and other.enabled == self.enabled and other.inference == self.inference

    def __hash__(self):
        return 3


class Super(Val):
    __slots__ = ("obj", "cls")

    def __init__(self, obj, cls):
        self.obj, self.cls = obj, cls


class Alt(Val):
    """One of a few objects (e.g. a model class picked from a registry dict by name)."""

    __slots__ = ("options",)

    def __init__(self, options):
        self.options = tuple(options)

    def __eq__(self, other):
        return type(other) is Alt and set(other.options) == set(self.options)

    def __hash__(self):
        return hash(frozenset(self.options))


MAX_ALTERNATIVES = 4


def _alternatives(v: Val) -> tuple:
    return v.options if type(v) is Alt else (v,)


def _or_unknown(t: Tensor) -> Tensor:
    """A tensor, or a value not followed (which may be a tensor that requires grad): no longer
    surely without grad, nor exact."""
    if not t.exact and t.grad != NEVER:
        return t
    return t.but(exact=False, grad=NO if t.grad == NEVER else t.grad, why=frozenset())


def join(a: Val, b: Val) -> Val:
    if a is b:
        return a
    ta, tb = type(a), type(b)
    if ta is Tensor and tb is Tensor:
        if a == b and a.via is b.via:
            return a
        via = dict(b.via)
        via.update(a.via)
        return Tensor(max(a.grad, b.grad), a.leaf and b.leaf, a.segs | b.segs, a.roots | b.roots,
                      via, a.exact and b.exact, a.weak | b.weak, shapes.join(a.shape, b.shape),
                      a.why | b.why if a.grad == b.grad == NEVER else frozenset(),
                      a.storage if a.storage == b.storage else None, a.maybe | b.maybe,
                      min(a.integral, b.integral), a.strided or b.strided, a.boolean and b.boolean,
                      cpu=a.cpu and b.cpu)
    if ta is Tensor:  # the other side is None or not a tensor: keep what we know of the tensor
        return a if tb is not Unknown else _or_unknown(a)
    if tb is Tensor:
        return b if ta is not Unknown else _or_unknown(b)
    if ta is Tup and tb is Tup and len(a.items) == len(b.items):
        return Tup((join(x, y) for x, y in zip(a.items, b.items)), a.names if a.names == b.names else None)
    if a == b:
        return b if tb in (Box, Optim, Obj) and b.some else a
    if _flat_tuples(a) and _flat_tuples(b):
        # ``outputs += (target,)`` on one branch: a tuple of one length or of the other (each
        # length once, those of a length joined)
        by_length = {}
        for option in _alternatives(a) + _alternatives(b):
            n = len(option.items)
            by_length[n] = join(by_length[n], option) if n in by_length else option
        if len(by_length) <= MAX_ALTERNATIVES:
            return Alt(by_length.values()) if len(by_length) > 1 else next(iter(by_length.values()))
        return UNKNOWN
    if ta is Iter and tb is Iter and a.gen is None and b.gen is None:
        return Iter(join(a.elem, b.elem))
    if ta in _OBJECTS and tb in _OBJECTS:
        options = list(_alternatives(a))
        options += [o for o in _alternatives(b) if o not in options]
        if len(options) <= MAX_ALTERNATIVES:
            return Alt(options)
    if _number(a) and _number(b):
        return NUMBER  # ``0.0 if done else 1.0``: some number, never a tensor
    return UNKNOWN


def _flat_tuples(v: Val) -> bool:
    """A tuple of no containers, or one of several of them (of different lengths)."""
    return all(type(o) is Tup and o.depth == 1 and not any(type(x) is Alt for x in o.items)
               for o in _alternatives(v)) if type(v) in (Tup, Alt) else False


def _number(v: Val) -> bool:
    return type(v) is Number or (type(v) is Const and type(v.value) in (int, float))


def join_elements(a: Val, b: Val) -> Val:
    """The value that stands for two elements of one container: a graph only one of them holds
    is walked by a backward over that one only, so it is weak (what they share stays strong)."""
    out = join(a, b)
    if type(out) is Tensor and type(a) is Tensor and type(b) is Tensor:
        only = a.segs ^ b.segs
        if only - out.weak:
            return out.but(weak=out.weak | only)
    elif type(out) is Tup and type(a) is Tup and type(b) is Tup and len(a.items) == len(b.items):
        return Tup((join_elements(x, y) for x, y in zip(a.items, b.items)), a.names if a.names == b.names else None)
    return out


def tensors_in(v: Val):
    """The tensors a value holds directly (a tensor, or the items of a tuple)."""
    if type(v) is Tensor:
        yield v
    elif type(v) is Tup:
        for item in v.items:
            yield from tensors_in(item)
    elif type(v) is Alt:  # (tuples of one length or another)
        for option in v.options:
            yield from tensors_in(option)


_OBJECTS = (Func, Class, Obj, Layer, Bound, Optim, Alt)


def truth(v: Val):
    if type(v) is Const:
        try:
            return bool(v.value)
        except Exception:
            return None
    if type(v) in (Func, Class, Layer, Obj, Optim, LibRef):
        return True
    return None

def strong(v: Val, several=frozenset()) -> Val:
    """Elements consumed all together (stacked, summed): each graph is walked, none is weak.
    (Unless they went through unresolved code: what that holds stays a maybe; nor what
    ``several`` holds: graphs of several containers or objects, of which these elements came
    from one.)"""
    if type(v) is Tensor and v.weak and v.exact:
        return v.but(weak=v.weak & several)
    if type(v) is Tup:
        return Tup(strong(x, several) for x in v.items)
    return v

def merge_via(ts) -> dict:
    via = {}
    for t in ts:
        for s, n in t.via.items():
            via.setdefault(s, n)
    return via
