"""Tensor shapes, as far as "is it a single element" goes (GG105: a backward without a gradient
argument needs a tensor of exactly one element).

A shape is ``None`` (nothing known), a tuple of dimensions (each an ``int`` or ``None`` for a size
not known), or :data:`NONSCALAR`: the rank is not known but some dimension is not 1, so the
tensor does not hold exactly one element. That last fact survives broadcasting (a dimension other
than 1 stays in the result) and every op that keeps the number of elements (views, casts,
element-wise maths), which is what lets it cross code whose shapes are not followed.

Which op follows which rule is data: ``torch_api.SHAPES`` and friends, checked against torch.
"""
from __future__ import annotations

import math
from math import prod
from typing import Optional, Sequence

NONSCALAR = "nonscalar"

Shape = object  # None | tuple[int | None, ...] | NONSCALAR


def not_single(shape: Shape) -> bool:
    """The tensor certainly does not hold exactly one element (0 or several)."""
    if shape == NONSCALAR:
        return True
    return type(shape) is tuple and any(d is not None and d != 1 for d in shape)


def unsized(shape: Shape) -> bool:
    """The tensor holds one element only if every dimension whose size is not known is 1: its
    rank is known, some size is not, and none is 0."""
    return type(shape) is tuple and None in shape and 0 not in shape


def single(shape: Shape) -> bool:
    """The tensor certainly holds exactly one element."""
    return type(shape) is tuple and all(d == 1 for d in shape)


def join(a: Shape, b: Shape) -> Shape:
    if a == b:
        return a
    if type(a) is tuple and type(b) is tuple and len(a) == len(b):
        return tuple(x if x == y else None for x, y in zip(a, b))
    if not_single(a) and not_single(b):
        return NONSCALAR
    return None


def _numel_kept(shape: Shape) -> Shape:
    """What is known of a shape after an op that keeps the number of elements."""
    return NONSCALAR if not_single(shape) else (() if single(shape) else None)


def broadcast(shapes: Sequence[Shape]) -> Shape:
    if all(type(s) is tuple for s in shapes):
        rank = max((len(s) for s in shapes), default=0)
        out = []
        for i in range(rank):
            dims = {s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0}
            sized = {d for d in dims if d is not None and d != 1}
            if len(sized) > 1:
                return None  # torch refuses to broadcast these
            if sized:
                out.append(sized.pop())
            elif None in dims:
                out.append(None)
            else:
                out.append(1)
        return tuple(out)
    return NONSCALAR if any(not_single(s) for s in shapes) else None


def _dim(d, rank: int) -> Optional[int]:
    if type(d) is not int or not -rank <= d < rank:
        return None
    return d % rank


def reduce(shape: Shape, dims, keepdim) -> Shape:
    """``x.sum()`` is a scalar; ``x.sum(dim)`` drops ``dim`` (keeps it as 1 with keepdim).
    ``dims``: None for "no dim given", an int or a tuple of ints, or ... for unknown."""
    if dims is None:
        return ()
    if type(shape) is not tuple or keepdim not in (True, False):
        return None
    dims = dims if type(dims) is tuple else (dims,)
    picked = {_dim(d, len(shape)) for d in dims}
    if None in picked:
        return None
    if keepdim:
        return tuple(1 if i in picked else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in picked)


def sizes(values: Sequence) -> Shape:
    """``torch.zeros(2, 3)`` / ``torch.zeros((2, 3))``: python ints (``None`` where unknown)."""
    if len(values) == 1 and type(values[0]) in (tuple, list):
        values = values[0]
    if not all(v is None or (type(v) is int and v >= 0) for v in values):
        return None
    return tuple(values)


def literal(data) -> Shape:
    """The shape of ``torch.tensor(data)`` for literal data: nested lists/tuples of numbers
    (``None`` stands for an element whose value is not known)."""
    if isinstance(data, (int, float, bool)) and data is not None:
        return ()
    if type(data) in (list, tuple):
        inner = {literal(x) for x in data}
        if len(inner) == 1 and data:
            sub = inner.pop()
            return None if sub is None else (len(data),) + sub
        return (len(data),) if not data else None
    return None


def insert(shape: Shape, dim, size) -> Shape:
    """``x.unsqueeze(dim)`` (size 1) and ``torch.stack(xs, dim)`` (size ``len(xs)``)."""
    if type(shape) is not tuple:
        return NONSCALAR if size is not None and size != 1 or not_single(shape) else None
    pos = _dim(dim, len(shape) + 1)
    if pos is None:
        return NONSCALAR if not_single(shape) or (size is not None and size != 1) else None
    return shape[:pos] + (size,) + shape[pos:]


def pieces(kind: str, shape: Shape, size, dim) -> Optional[tuple]:
    """``x.chunk(n, dim)`` (kind "chunk"), ``x.split(size_or_sizes, dim)`` ("split"),
    ``x.unbind(dim)`` ("unbind"): (how many tensors, the shape of each) where the count is
    known, else None. chunk(n) makes pieces of ceil(s / n) rows, so it may make fewer than n."""
    if type(shape) is not tuple or type(dim) is not int or _dim(dim, len(shape)) is None:
        return None
    d = _dim(dim, len(shape))
    s = shape[d]
    if kind == "split" and type(size) in (list, tuple) and all(type(x) is int for x in size):
        piece = size[0] if len(set(size)) == 1 else None
        return len(size), shape[:d] + (piece,) + shape[d + 1:]
    if type(s) is not int or s <= 0:
        return None
    if kind == "unbind":
        return s, shape[:d] + shape[d + 1:]
    if type(size) is not int or size <= 0:
        return None
    step = -(-s // size) if kind == "chunk" else size
    count = -(-s // step)
    return count, shape[:d] + ((step if s % step == 0 else None),) + shape[d + 1:]


def squeeze(shape: Shape, dim) -> Shape:
    if type(shape) is tuple:
        if dim is None and all(d is not None for d in shape):
            return tuple(d for d in shape if d != 1)
        pos = _dim(dim, len(shape)) if dim is not None else None
        if pos is not None and shape[pos] is not None:
            return shape[:pos] + shape[pos + 1:] if shape[pos] == 1 else shape
    return _numel_kept(shape)


def view(shape: Shape, target: Sequence) -> Shape:
    """``x.view(2, -1)`` / ``x.reshape((2, -1))``: the sizes given, a -1 inferred."""
    if len(target) == 1 and type(target[0]) in (tuple, list):
        target = target[0]
    got = sizes([None if v == -1 else v for v in target])
    if type(got) is not tuple:
        return _numel_kept(shape)
    if [v == -1 for v in target].count(True) == 1 and type(shape) is tuple \
            and all(d is not None for d in shape) and all(v is not None for v in target):
        known = prod(d for d in got if d is not None)
        if known:
            return tuple(prod(shape) // known if d is None else d for d in got)
    return got


def flatten(shape: Shape, start=0, end=-1) -> Shape:
    if type(shape) is tuple:
        if not shape:
            return (1,)
        s, e = _dim(start, len(shape)), _dim(end, len(shape))
        if s is not None and e is not None and s <= e:
            middle = shape[s:e + 1]
            size = prod(middle) if all(d is not None for d in middle) else None
            return shape[:s] + (size,) + shape[e + 1:]
    return _numel_kept(shape)


def transpose(shape: Shape, a=0, b=1) -> Shape:
    if type(shape) is tuple and len(shape) <= 2 and (a, b) in ((0, 1), (1, 0), (-1, -2), (-2, -1), (0, -1), (-1, 0)):
        return tuple(reversed(shape))
    if type(shape) is tuple:
        i, j = _dim(a, len(shape)), _dim(b, len(shape))
        if i is not None and j is not None:
            out = list(shape)
            out[i], out[j] = out[j], out[i]
            return tuple(out)
    return _numel_kept(shape)


def last_dim(shape: Shape, size) -> Shape:
    """``nn.Linear(in, out)`` on ``(…, in)``: ``(…, out)``."""
    if type(shape) is tuple and shape:
        return shape[:-1] + (size if type(size) is int else None,)
    return None


def matmul(a: Shape, b: Shape) -> Shape:
    if type(a) is tuple and type(b) is tuple and len(a) == 2 and len(b) == 2:
        return (a[0], b[1])
    if type(a) is tuple and type(b) is tuple and len(a) == 1 and len(b) == 1:
        return ()
    return None


def drop_class_dim(shape: Shape) -> Shape:
    """A per-sample class loss (``cross_entropy(…, reduction='none')``): the input's shape
    without its class dimension (dim 1; a 1-D input is one sample)."""
    if type(shape) is tuple:
        return () if len(shape) == 1 else shape[:1] + shape[2:]
    return None


SOME_SLICE = slice(None, None, 0)  # a slice of bounds not known (no slice Python makes has step 0)


def index(shape: Shape, items: Sequence) -> Shape:
    """Basic indexing: ``items`` are ``int`` (drops a dim), ``slice`` (keeps it, of the size its
    bounds give; ``SOME_SLICE``, bounds not known), ``None`` (a new dim of 1), ``...``; anything
    else unknown."""
    if type(shape) is not tuple:
        return None
    if sum(1 for i in items if i is Ellipsis) > 1:
        return None
    used = sum(1 for i in items if i is not None and i is not Ellipsis)
    if used > len(shape):
        return None
    if Ellipsis not in items:
        items = list(items) + [slice(None)] * (len(shape) - used)
    else:
        at = list(items).index(Ellipsis)
        items = list(items[:at]) + [slice(None)] * (len(shape) - used) + list(items[at + 1:])
    out, dim = [], 0
    for item in items:
        if item is None:
            out.append(1)
            continue
        if type(item) is int:
            dim += 1
            continue
        if type(item) is slice:
            size = shape[dim]
            if item != slice(None):
                size = len(range(size)[item]) if type(size) is int and item is not SOME_SLICE else None
            out.append(size)
            dim += 1
            continue
        return None
    return tuple(out)


class Of:
    """A tensor argument, by its shape."""

    __slots__ = ("shape",)

    def __init__(self, shape: Shape):
        self.shape = shape

    def __repr__(self):
        return f"Of({self.shape})"


OPAQUE = object()  # an argument whose value is not known (it may even be a tensor)
NUMBER = object()  # a Python number whose value is not known: 0-dim as an operand


class Seq:
    """A list of tensors whose length is not known: ``elem`` is what is known of each one."""

    __slots__ = ("elem",)

    def __init__(self, elem):
        self.elem = elem


def _arg(args, kwargs, pos: int, name: str, default=None):
    if name in kwargs:
        return kwargs[name]
    return args[pos] if len(args) > pos else default


def _operand(v) -> Shape:
    if type(v) is Of:
        return v.shape
    if isinstance(v, (int, float)) and not isinstance(v, bool) or v is NUMBER:
        return ()
    return None if v is OPAQUE else False  # False: not a tensor operand (a string, None)


def _dims(v):
    """A ``dim`` argument: None (not given), an int or tuple of ints, or ... (unknown)."""
    if v is None or type(v) is int:
        return v
    if type(v) in (tuple, list) and all(type(d) is int for d in v):
        return tuple(v)
    return ...


def result(kind: str, args: Sequence, kwargs: dict) -> Shape:
    """The shape of an op's result; ``args`` start with the receiver of a method. Arguments
    are :class:`Of` for tensors, python values for constants, :data:`NUMBER` for numbers,
    :data:`OPAQUE` otherwise."""
    first = args[0].shape if args and type(args[0]) is Of else None
    if kind == "same":
        return first
    if kind == "where" and len(args) + len(kwargs) != 3:
        return None  # ``torch.where(cond)``: a tuple of index tensors
    if kind in ("broadcast", "where"):
        operands = [_operand(v) for v in list(args) + list(kwargs.values())]
        return broadcast([s for s in operands if s is not False])
    if kind in ("reduce", "norm", "spread"):
        dims = _dims(_arg(args, kwargs, 2 if kind == "norm" else 1, "dim"))
        keepdim = _arg(args, kwargs, 2 if kind == "reduce" else 3, "keepdim", False)
        return None if dims is ... else reduce(first, dims, keepdim)
    if kind == "reverse":
        return tuple(reversed(first)) if type(first) is tuple else _numel_kept(first)
    if kind == "swap_last":
        return transpose(first, -2, -1) if type(first) is tuple and len(first) >= 2 else _numel_kept(first)
    if kind == "whole":
        return () if len(args) == 1 and not kwargs else None
    if kind.startswith("functional_"):  # F.max_pool2d(x, 3, 1, 1): as the module of that kind does
        return module(kind[len("functional_"):], list(args[1:]), {k: v for k, v in kwargs.items() if k != "input"},
                      args[:1])
    if kind == "view":
        target = kwargs["shape"] if "shape" in kwargs else tuple(args[1:])
        return view(first, target if type(target) in (tuple, list) else (target,))
    if kind == "flatten":
        return flatten(first, _arg(args, kwargs, 1, "start_dim", 0), _arg(args, kwargs, 2, "end_dim", -1))
    if kind == "unsqueeze":
        return insert(first, _arg(args, kwargs, 1, "dim", OPAQUE), 1)
    if kind == "squeeze":
        dim = _arg(args, kwargs, 1, "dim")
        return squeeze(first, dim) if dim is None or type(dim) is int else _numel_kept(first)
    if kind == "transpose":
        return transpose(first, _arg(args, kwargs, 1, "dim0", 0), _arg(args, kwargs, 2, "dim1", 1))
    if kind == "gathered":
        index = _arg(args, kwargs, 2, "index")
        return index.shape if type(index) is Of else None
    if kind == "einsum":
        return einsum(args[0] if args else None, list(args[1:]))
    if kind == "matmul":
        other = _arg(args, kwargs, 1, "other")
        return matmul(first, other.shape if type(other) is Of else None)
    if kind == "cat":
        seq = _arg(args, kwargs, 0, "tensors")
        dim = _arg(args, kwargs, 1, "dim", 0)
        if type(seq) not in (list, tuple) or not seq or type(dim) is not int:
            return None
        elems = [s.shape if type(s) is Of else None for s in seq]
        ranks = {len(s) for s in elems if type(s) is tuple}
        if len(ranks) != 1:
            return None
        rank = ranks.pop()
        if not -rank <= dim < rank:
            return None
        dim %= rank
        out = []
        for i in range(rank):
            dims = [s[i] if type(s) is tuple else None for s in elems]
            if i == dim:
                out.append(sum(dims) if all(d is not None for d in dims) else None)
            else:
                known = [d for d in dims if d is not None]
                out.append(known[0] if known else None)
        return tuple(out)
    if kind == "cdist":  # (..., P, M) and (..., R, M): (..., P, R), the batch dims broadcast
        other = _arg(args, kwargs, 1, "x2")
        second = other.shape if type(other) is Of else None
        if type(first) is not tuple or type(second) is not tuple or len(first) < 2 or len(second) < 2:
            return None
        batch = broadcast([first[:-2], second[:-2]])
        return None if batch is None else batch + (first[-2], second[-2])
    if kind == "pad":  # F.pad(x, (left, right, top, bottom, ...)): the last dims grow by each pair
        pad = _arg(args, kwargs, 1, "pad")
        if type(first) is not tuple or type(pad) not in (tuple, list) or len(pad) % 2 \
                or len(pad) // 2 > len(first) or not all(type(p) is int for p in pad):
            return None
        out = list(first)
        for i in range(len(pad) // 2):
            d = len(first) - 1 - i
            out[d] = first[d] + pad[2 * i] + pad[2 * i + 1] if first[d] is not None else None
        return tuple(out)
    for family in ("irfft", "rfft", "fft"):
        if kind.startswith(family):
            return fourier(family, kind[len(family):], first, args, kwargs)
    if kind == "stack" and type(_arg(args, kwargs, 0, "tensors")) is Seq:
        elem = _arg(args, kwargs, 0, "tensors").elem
        return insert(elem.shape if type(elem) is Of else None, _arg(args, kwargs, 1, "dim", 0), None)
    if kind == "permute":
        dims = args[1:] if len(args) > 2 or (len(args) == 2 and type(args[1]) is int) else \
            (tuple(args[1]) if len(args) == 2 and type(args[1]) in (tuple, list) else None)
        if type(first) is tuple and dims is not None and sorted(d % len(first) if type(d) is int else -1
                                                                for d in dims) == list(range(len(first))):
            return tuple(first[d] for d in dims)
        return _numel_kept(first)
    if kind == "stack":
        seq = _arg(args, kwargs, 0, "tensors")
        if type(seq) not in (list, tuple) or not seq:
            return None
        elems = [s.shape if type(s) is Of else None for s in seq]
        joined = elems[0]
        for s in elems[1:]:
            joined = join(joined, s)
        return insert(joined, _arg(args, kwargs, 1, "dim", 0), len(seq))
    return None


def factory(kind: str, args: Sequence, kwargs: dict) -> Shape:
    """The shape of a tensor a factory makes (``FACTORY_SHAPES``)."""
    if kind == "sizes":
        given = kwargs.get("size", tuple(args))
        return sizes(given if type(given) in (tuple, list) else (given,))
    if kind == "full":
        size = _arg(args, kwargs, 0, "size")
        return sizes((size,)) if type(size) in (tuple, list) else None
    if kind == "randint":
        size = kwargs.get("size", args[-1] if args else None)
        return sizes((size,)) if type(size) in (tuple, list) else None
    if kind == "steps":
        steps = _arg(args, kwargs, 2, "steps")
        return (steps,) if type(steps) is int and steps >= 0 else None
    if kind == "count":  # ``randperm(n)``
        n = _arg(args, kwargs, 0, "n")
        return (n,) if type(n) is int and n >= 0 else None
    if kind == "arange":  # ``arange(end)``, ``arange(start, end, step)`` of numbers
        if len(args) >= 2:
            start, end, step = args[0], args[1], _arg(args, kwargs, 2, "step", 1)
        elif args:
            start, end = (args[0], kwargs["end"]) if "end" in kwargs else (0, args[0])
            step = kwargs.get("step", 1)
        else:
            start, end, step = kwargs.get("start", 0), kwargs.get("end"), kwargs.get("step", 1)
        if not all(type(b) in (int, float) for b in (start, end, step)) or not step:
            return None
        return (max(0, math.ceil((end - start) / step)),)
    if kind == "eye":
        n = _arg(args, kwargs, 0, "n")
        return sizes((n, _arg(args, kwargs, 1, "m", n)))
    if kind == "like":
        return args[0].shape if args and type(args[0]) is Of else None
    if kind == "legacy":  # ``torch.Tensor([1, 3])``: data; ``torch.Tensor(2, 3)``: sizes
        kind = "literal" if args and type(args[0]) in (list, tuple) else "sizes"
        if kind == "sizes":
            return sizes(tuple(args)) if not kwargs.keys() - {"dtype"} else None
    if kind == "literal":
        return literal(args[0]) if args else None
    return None


def loss(kind: str, inputs: Sequence, options: dict, beyond: int) -> Shape:
    """A loss's result (``LOSS_SHAPES``): one element unless ``reduction="none"``. ``options``:
    the keyword arguments that set the reduction; ``beyond``: how many positional arguments
    came after those that leave it alone (then nothing is claimed)."""
    if beyond > 0:
        return None
    reduction = options.get("reduction", "mean")
    if "size_average" in options or "reduce" in options:  # the legacy flags, when given, decide
        legacy = [options.get(k) for k in ("size_average", "reduce")]
        if any(v is not None and type(v) is not bool for v in legacy):
            return None
        reduction = "none" if legacy[1] is False else "mean"  # (or "sum": one element too)
    if reduction in ("mean", "sum", "batchmean"):
        return ()
    if reduction != "none":
        return None
    if kind == "class":
        per = drop_class_dim(inputs[0].shape if inputs and type(inputs[0]) is Of else None)
        if per is None and len(inputs) > 1 and type(inputs[1]) is Of and type(inputs[1].shape) is tuple:
            per = inputs[1].shape  # class indices: one per sample, the target's shape (torch checks)
        return per
    return result("broadcast", list(inputs[:2]), {})


def rnn(params: Sequence, args: Sequence, kwargs: dict, inputs: Sequence) -> tuple:
    """A recurrent layer's (output, h_n, c_n) shapes (``RNN_SHAPES``): the input is
    (L, N, H_in), (N, L, H_in) with ``batch_first`` or unbatched (L, H_in); None where unknown."""
    def given(name, default):
        if name in kwargs:
            return kwargs[name]
        at = params.index(name) if name in params else len(args)
        return args[at] if at < len(args) else default

    first = inputs[0].shape if inputs and type(inputs[0]) is Of else None
    hidden, layers, proj = given("hidden_size", None), given("num_layers", 1), given("proj_size", 0)
    batch_first, both = given("batch_first", False), given("bidirectional", False)
    if type(first) is not tuple or len(first) not in (2, 3) or type(hidden) is not int or type(layers) is not int \
            or type(proj) is not int or type(batch_first) is not bool or type(both) is not bool:
        return None, None, None
    d = 2 if both else 1
    out_size = proj if proj > 0 else hidden
    if len(first) == 2:
        return (first[0], d * out_size), (d * layers, out_size), (d * layers, hidden)
    n = first[0] if batch_first else first[1]
    out = first[:2] + (d * out_size,)
    return out, (d * layers, n, out_size), (d * layers, n, hidden)


def module(kind: str, args: Sequence, kwargs: dict, inputs: Sequence) -> Shape:
    """A built-in module's output (``MODULE_SHAPES``), from its constructor's arguments."""
    first = inputs[0].shape if inputs and type(inputs[0]) is Of else None
    if kind == "same":
        return first
    if kind == "linear":
        return last_dim(first, _arg(args, kwargs, 1, "out_features"))
    if kind == "flatten":
        return flatten(first, _arg(args, kwargs, 0, "start_dim", 1), _arg(args, kwargs, 1, "end_dim", -1))
    if kind == "unflatten":
        dim, sizes = _arg(args, kwargs, 0, "dim"), _arg(args, kwargs, 1, "unflattened_size")
        if type(first) is not tuple or type(dim) is not int or type(sizes) not in (tuple, list) \
                or not -len(first) <= dim < len(first):
            return _numel_kept(first)
        dim %= len(first)
        return first[:dim] + tuple(d if type(d) is int and d >= 0 else None for d in sizes) + first[dim + 1:]
    if kind.startswith("adaptive"):
        spatial = int(kind[-1])
        size = _arg(args, kwargs, 0, "output_size")
        sizes = size if type(size) in (tuple, list) else (size,) * spatial
        if type(first) is not tuple or len(first) not in (spatial + 1, spatial + 2) or len(sizes) != spatial:
            return None
        return first[:len(first) - spatial] + tuple(
            s if type(s) is int else (first[len(first) - spatial + i] if s is None else None) for i, s in enumerate(sizes))
    if kind == "upsample":
        scale = _arg(args, kwargs, 1, "scale_factor")
        if type(first) is not tuple or len(first) < 3 or type(scale) is not int or "size" in kwargs:
            return None
        return first[:2] + tuple(d * scale if type(d) is int else None for d in first[2:])
    if kind.startswith(("conv", "pool")):
        # (N, C, *spatial) or unbatched (C, *spatial): the batch stays, a convolution's channels
        # become its out_channels, a pooling's stay; the spatial sizes follow the arguments
        spatial = int(kind[-1])
        if type(first) is not tuple or len(first) not in (spatial + 1, spatial + 2):
            return NONSCALAR if kind.startswith("pool") and not_single(first) else None
        channels = _arg(args, kwargs, 1, "out_channels") if kind.startswith("conv") else first[-spatial - 1]
        channels = channels if type(channels) is int else None
        return first[:len(first) - spatial - 1] + (channels,) + _spatial_out(kind, args, kwargs, first[-spatial:])
    return None


def _spatial_out(kind: str, args, kwargs, sizes: tuple) -> tuple:
    """A convolution's or a pooling's output sizes, ``(n + 2p - d(k - 1) - 1) // s + 1`` per dim
    (a transposed convolution's, its inverse), where the constructor's arguments are plain
    numbers; None where they are not."""
    conv = kind.startswith("conv")
    transposed = kind.startswith("convT")  # ConvTranspose(in, out, kernel_size, stride, padding, output_padding, groups, bias, dilation)
    base = 2 if conv else 0  # Conv(in, out, kernel_size, stride, padding, dilation); Pool(kernel_size, ...)
    kernel = _arg(args, kwargs, base, "kernel_size")
    stride = _arg(args, kwargs, base + 1, "stride", 1 if conv else None)
    padding = _arg(args, kwargs, base + 2, "padding", 0)
    dilation = _arg(args, kwargs, base + 6 if transposed else base + 3, "dilation", 1)
    extra = _arg(args, kwargs, base + 3, "output_padding", 0) if transposed else 0
    if stride is None:  # a pooling's stride defaults to its kernel
        stride = kernel
    if not conv and (kwargs.get("ceil_mode") not in (None, False) or len(args) > 3):
        return (None,) * len(sizes)  # (a pooling's 4th argument: MaxPool's dilation, AvgPool's ceil_mode)
    if padding == "valid":
        padding = 0
    out = []
    for i, n in enumerate(sizes):
        k, st_, p, d, o = (v[i] if type(v) in (tuple, list) and len(v) == len(sizes) else v
                           for v in (kernel, stride, padding, dilation, extra))
        if padding == "same" and conv:
            out.append(n)
        elif not all(type(v) is int for v in (n, k, st_, p, d, o)) or st_ <= 0:
            out.append(None)
        elif transposed:  # ``(n - 1)s - 2p + d(k - 1) + output_padding + 1``
            out.append((n - 1) * st_ - 2 * p + d * (k - 1) + o + 1)
        else:
            out.append((n + 2 * p - d * (k - 1) - 1) // st_ + 1)
    return tuple(out)



def by_tensor(shape: Shape, idx: Shape, mask: bool, indices: bool = False) -> Shape:
    """``x[idx]`` for one tensor index: integer indices give idx's shape then x's other dims; a
    bool mask of rank r gives one dim of unknown size then x's dims past r. When the index is
    known to be neither, the result is what both say."""
    if type(shape) is not tuple or type(idx) is not tuple or not shape:
        return None
    as_mask = (None,) + shape[len(idx):] if len(idx) <= len(shape) else None
    if mask:
        return as_mask
    as_indices = idx + shape[1:]
    if indices:
        return as_indices
    return as_indices if as_mask is None else join(as_indices, as_mask)


def fourier(family: str, rank: str, shape: Shape, args: Sequence, kwargs: dict) -> Shape:
    """``torch.fft.<family><rank>``: ``rank`` "1" transforms one dim (``n``, ``dim=-1``), "2"
    two (``s``, ``dim=(-2, -1)``), "n" the last ``len(s)`` or all. "fft" keeps each transformed
    size (or takes the given one), "rfft" then makes the last ``m // 2 + 1``, "irfft" makes the
    last the given size or ``2 (m - 1)``."""
    given = _arg(args, kwargs, 1, "n" if rank == "1" else "s")
    dim = _arg(args, kwargs, 2, "dim", -1 if rank == "1" else ((-2, -1) if rank == "2" else None))
    if given is OPAQUE or dim is OPAQUE:
        return None
    if type(shape) is not tuple:
        return _numel_kept(shape) if family == "fft" and given is None else None
    given = (given,) if rank == "1" else given
    if given is not None and (type(given) not in (tuple, list) or not all(type(g) is int for g in given)):
        return None
    if dim is None:  # all dims, or as many last ones as ``s`` has
        dim = tuple(range(len(shape) - len(given), len(shape))) if given is not None else tuple(range(len(shape)))
    dims = (dim,) if type(dim) is int else dim
    if type(dims) not in (tuple, list) or not dims or not all(type(d) is int and -len(shape) <= d < len(shape)
                                                              for d in dims):
        return None
    dims = [d % len(shape) for d in dims]
    if given is not None and len(given) != len(dims):
        return None
    out = list(shape)
    for i, d in enumerate(dims):
        size = given[i] if given is not None and given[i] != -1 else None
        last = i == len(dims) - 1
        if family == "irfft" and last:
            out[d] = size if size is not None else (2 * (shape[d] - 1) if shape[d] is not None else None)
        else:
            m = size if size is not None else shape[d]
            out[d] = m // 2 + 1 if family == "rfft" and last and m is not None else m
    return tuple(out)


def einsum(equation, operands: Sequence) -> Shape:
    """``torch.einsum("bixy,ioxy->boxy", a, b)``: each output letter's size is that letter's
    size in an operand (an implicit output: the letters used once, in alphabetical order)."""
    if type(equation) is not str or "." in equation:
        return None
    if len(operands) == 1 and type(operands[0]) in (list, tuple):
        operands = list(operands[0])  # (the operands given as one list)
    inputs, _, output = equation.replace(" ", "").partition("->")
    terms = inputs.split(",")
    if len(terms) != len(operands):
        return None
    sizes: dict = {}
    for term, operand in zip(terms, operands):
        shape = operand.shape if type(operand) is Of else None
        if type(shape) is tuple and len(shape) != len(term):
            return None
        for i, letter in enumerate(term):
            if type(shape) is tuple and type(shape[i]) is int and shape[i] != 1:
                sizes[letter] = shape[i]  # (a 1 broadcasts: another operand's size wins)
            else:
                sizes.setdefault(letter, shape[i] if type(shape) is tuple else None)
    if "->" not in equation:
        output = "".join(sorted(c for c in set(inputs) if c.isalpha() and inputs.count(c) == 1))
    return tuple(sizes.get(letter) for letter in output)
