"""The torch model: what calls into torch do, read off the verified table (``torch_api``):
factories make leaves, functions, methods and modules are ops, optimizers step. A mixin of the
interpreter (``engine.Engine``)."""
from __future__ import annotations

import ast
from math import prod
from typing import Optional

from . import shapes
from . import torch_api as api
from .state import GRAD_OF, State, forget_items, note_keys, retarget
from .values import (INDEX, LAYER_BASE, MAYBE, MUTATION_ALLOWED, NEVER, NO, NONE, NUMBER, UNKNOWN, YES, Alt, Box, Builtin, Const, Func,
                     GradCtx, Iter, Layer,
                     LibRef, Number, Obj, Optim, Partial, Root, Tensor, Tup, TupleType, Val, join, merge_via, tensors_in,
                     truth)


class TorchModel:
    """Calls of torch functions, tensor methods, modules and optimizers."""

    __slots__ = ()  # its attributes are Engine's slots

    def run_closure(self, optim: Optim, closure: Func, node, st: State) -> None:
        """``optimizer.step(closure)``: some optimizers evaluate the closure repeatedly."""
        if optim.qual in api.OPTIMIZER_REPEATS_CLOSURE:
            def evaluate(s, first):
                self.invoke(closure, [], {}, s, node)
                if self.killed:
                    self.killed = False
                    return None
                return s

            out = self.loop(node, st, evaluate, [])
            if out is None:
                self.killed = True
            else:
                st.adopt(out)
        else:
            self.invoke(closure, [], {}, st, node)

    def parameters(self, module: Val, st: State) -> Val:
        roots = self.module_roots(module, st, 0)
        return Tensor(YES, True, roots=frozenset(roots)) if roots else Tensor()

    def roots_of(self, v: Val, st: State, depth: int) -> set:
        """The parameters in an optimizer's ``params``: tensors, modules' parameters, lists,
        parameter-group dicts."""
        t = type(v)
        if t is Tensor:
            return set(v.roots)
        if t in (Layer, Obj):
            return self.module_roots(v, st, 0)
        if depth > 3:
            return set()
        if t is Box:
            out = self.roots_of(st.heap.get((v.oid, "*"), UNKNOWN), st, depth + 1)
            items = st.heap.get((v.oid, "items"))
            if type(items) is Tup:  # a list of parameter groups, each a dict of its own
                out |= self.roots_of(items, st, depth + 1)
            for (oid, key), item in st.heap.items():
                if oid == v.oid and isinstance(key, tuple):
                    out |= self.roots_of(item, st, depth + 1)
            return out
        if t is Tup:
            return set().union(*(self.roots_of(x, st, depth + 1) for x in v.items)) if v.items else set()
        if t is Iter:
            if v.wrap is not None and v.wrap[0] == "view" and v.wrap[2] != "keys":  # optimizer(params_dict.values())
                return self.roots_of(v.wrap[1], st, depth + 1)
            if v.wrap is not None and v.wrap[0] in ("chain", "cycle"):  # optimizer(chain(g.parameters(), d.parameters()))
                return set().union(*(self.roots_of(x, st, depth + 1) for x in v.wrap[1]))
            if v.wrap is not None and v.wrap[0] == "params":  # optimizer(model.named_parameters())
                return self.roots_of(v.wrap[2], st, depth + 1)
            return self.roots_of(v.elem, st, depth + 1) if v.gen is None and v.wrap is None else set()
        return set()

    def named_roots(self, module: Val, st: State) -> Optional[tuple]:
        """``module.named_parameters()`` one origin at a time: a (name, parameter) pair for each
        root, the name a constant (an alternative of constants for a torch layer's several
        parameters, or a root that stands for several modules: blocks a comprehension made), in
        torch's order (a module's own parameters, then its children's, each as registered).
        None where a module's parameter names are not known (a layer without generated names, a
        Sequential built from a dict or grown by ``add_module``, blocks of a number not known)."""
        names: dict = {}  # root -> the names it stands for

        def add(root, prefixes, name):
            names.setdefault(root, []).extend(p + name for p in prefixes)

        def walk(m, prefixes: tuple, depth: int) -> bool:
            if depth > 6 or len(prefixes) > MAX_PIECES:
                return False
            if type(m) is Layer:
                if m.root is not None:
                    own = api.MODULE_PARAMETER_NAMES.get(m.qual)
                    if not own:
                        return False
                    for n in own:
                        add(m.root, prefixes, n)
                if not m.children:
                    return True
                if not (m.qual in api.MODULE_HOLDERS or m.qual in api.MODULE_CONTAINERS and m.spec.get("indexed")):
                    return False
                if m.spec.get("summary"):  # one block standing for ``count`` (a comprehension's)
                    count = m.spec.get("count")
                    return type(count) is int and len(m.children) == 1 and type(m.children[0]) in (Layer, Obj) \
                        and walk(m.children[0], tuple(f"{p}{i}." for p in prefixes for i in range(count)), depth + 1)
                return all(type(c) in (Layer, Obj) and walk(c, tuple(f"{p}{i}." for p in prefixes), depth + 1)
                           for i, c in enumerate(m.children))
            if type(m) is not Obj or m.some or not m.cls.is_module:
                return False
            held = [(attr, v) for (oid, attr), v in st.heap.items() if oid == m.oid]
            base = st.heap.get((m.oid, LAYER_BASE))
            if type(base) is Layer and not walk(base, prefixes, depth + 1):
                return False
            for attr, v in held:  # its own parameters first
                if type(v) is Tensor and v.grad == YES and v.leaf and v.roots:
                    if not isinstance(attr, str) or attr.startswith("$"):
                        return False  # registered under a name not known
                    for r in v.roots:
                        add(r, prefixes, attr)
                elif type(v) is Box and (st.heap.get((v.oid, "registered")) == Const(True)
                                         or type(st.heap.get((v.oid, "*"))) in (Layer, Obj, Alt)):
                    # an nn.ParameterList, or modules in a container that may be an nn.ModuleDict
                    # (registered) or a plain dict (not): their names are not followed
                    return False
            for attr, v in held:  # then its modules (those in plain lists are not registered)
                if type(v) is Alt:
                    return False
                if type(v) is Layer or type(v) is Obj and v.cls.is_module:
                    if not isinstance(attr, str) or attr.startswith("$") \
                            or not walk(v, tuple(f"{p}{attr}." for p in prefixes), depth + 1):
                        return False
            return True

        if not walk(module, ("",), 0) or not names or len(names) > MAX_PIECES:
            return None
        pairs = []
        for root, found in names.items():
            found = list(dict.fromkeys(found))  # (a parameter shared by two modules: torch lists it once)
            name = Const(found[0]) if len(found) == 1 else Alt(Const(n) for n in found)
            pairs.append(Tup((name, Tensor(YES, True, roots=frozenset({root}), storage=root))))
        return tuple(pairs)

    def module_roots(self, module: Val, st: State, depth: int) -> set:
        if type(module) is Layer:
            roots = {module.root} if module.root is not None else set()
            for child in module.children:
                roots |= self.module_roots(child, st, depth + 1)
            return roots
        if type(module) is Obj and depth < 4:
            roots = set()
            for (oid, attr), value in st.heap.items():
                if oid == module.oid:
                    if type(value) is Tensor and value.grad == YES and value.leaf:
                        roots |= value.roots
                    elif type(value) in (Layer, Obj):
                        roots |= self.module_roots(value, st, depth + 1)
                    elif type(value) is Box and st.heap.get((value.oid, "registered")) == Const(True):
                        roots |= self.roots_of(value, st, depth + 1)  # an nn.ParameterList
            return roots
        return set()

    # ----------------------------------------------------------------- torch
    def torch_call(self, qual: str, args, kwargs, node, st) -> Val:
        if qual in _NAMED_TUPLES and len(args) >= 2:
            names = _field_names(args[1][1])
            return TupleType(names) if names is not None else UNKNOWN
        if qual in _PARTIALS and args:
            return Partial(args[0][0], tuple(args[1:]), dict(kwargs))
        if qual in api.RETURNS_ITS_MODULE and args and type(args[0][0]) is Layer and args[0][0].root is not None:
            # ``spectral_norm(nn.Linear(2, 5))``: the module itself, changed (every holder sees it)
            old = args[0][0]
            new = Layer(old.qual, {**(old.spec or {}), "reparametrized": True}, old.root, old.children, old.config,
                        old.site)
            retarget(st, old, new)
            return new
        if qual in _DICT_CLASSES:
            return self.builtin_call("dict", args, kwargs, node, st)
        if qual in _REPEATS and args:  # the same object at every step
            return Iter(args[0][0])
        if qual in _ITERATES_ITEMS and args:
            kind = "cycle" if qual in _CYCLES else "chain"
            return Iter(wrap=(kind, tuple(v for v, _ in args[:_ITERATES_ITEMS[qual]])))
        if qual in api.CHECKPOINTS and args:
            return self.checkpointed(qual, args, kwargs, node, st)
        if qual in api.MODULE_WRAPPERS:  # ``nn.DataParallel(model)`` runs ``model`` itself
            pos, key = api.MODULE_WRAPPERS[qual]
            wrapped = args[pos][0] if len(args) > pos else kwargs[key][0] if key in kwargs else UNKNOWN
            return wrapped if type(wrapped) in (Layer, Obj) else UNKNOWN
        if qual in api.MUTATION_CONTEXTS and not args:
            return MUTATION_ALLOWED
        if qual in api.GRAD_MODE_QUERIES and not args:  # ``if not torch.is_grad_enabled():`` (a batch norm's eval path)
            if api.GRAD_MODE_QUERIES[qual] == "inference":
                return Const(self.inference > 0)
            return Const(st.grad) if st.grad is not None else UNKNOWN
        if qual == api.DEVICE and len(args) == 1 and not kwargs and type(args[0][0]) is Const \
                and args[0][0].value == api.CPU:
            return Const(api.CPU_DEVICE)  # ``torch.device("cpu")``
        if qual == api.SET_DEFAULT_DEVICE and not (args and _is_cpu(args[0][0])):
            self.default_device = None  # the factories' default device from now on: not known to be the CPU
        if qual in api.EAGER_QUERIES and not args and not kwargs:  # ``if not torch.onnx.is_in_onnx_export():``
            return Const(False)
        if qual == api.IS_TENSOR and len(args) == 1:  # known for a tensor and for a Python value
            kind = type(args[0][0])
            return Const(True) if kind is Tensor else Const(False) if kind in (Const, Number, Tup, Box) else UNKNOWN
        if qual in api.COPIES:
            return self.copy_value(args[0][0] if args else UNKNOWN, node, st)
        if qual in api.SHALLOW_COPIES and len(args) == 1:
            return self.shallow_copy(args[0][0], node, st)
        if qual in api.RETURNS_ITS_MODULE and args and type(args[0][0]) in (Layer, Obj):
            return args[0][0]  # ``weight_norm(conv)``: the same module, reparametrized
        if qual in api.DATA_LOADERS:
            return self.data_loader(args, kwargs)
        if qual in api.TENSOR_DATASETS and args and not kwargs:
            rows = Box((node, self.frame.ctx), "list")  # its items: a row of each tensor
            self.allocate(rows.oid, st)
            st.own_heap()[(rows.oid, "*")] = Tup(self._row(node, a, st) if type(a[0]) is Tensor else UNKNOWN
                                           for a in args)
            firsts = {a[0].shape[0] if type(a[0]) is Tensor and type(a[0].shape) is tuple and a[0].shape else None
                      for a in args}
            if len(firsts) == 1 and type(next(iter(firsts))) is int:  # ``len(dataset)``: its rows
                st.own_heap()[(rows.oid, "count")] = Const(next(iter(firsts)))
            return rows
        if qual in api.NUMPY_CONVERTERS:
            single = api.NUMPY_CONVERTERS[qual] and args and type(args[0][0]) is Tensor
            self.emit("to_numpy", node, st, self.converted(args[:1], st, api.NUMPY_CONVERTERS[qual]),
                      detail=qual, target=args[0][1] if single else None,
                      places=(("elements", args[0][1]),) if args and not single and args[0][1] is not None else ())
            held = self.converted(args[:1], st, True)
            if held and not self.killed:
                # ``np.sum([loss_a, loss_b])`` of tensors NumPy takes as objects: a tensor, with
                # their graphs (as an unresolved call's result, a maybe)
                return self.unknown_call([(Tup(held), None)] + list(args[1:]), kwargs)
        if qual in ("types.SimpleNamespace", "argparse.Namespace") and not args:
            box = Box((node, self.frame.ctx), "namespace")
            self.allocate(box.oid, st)
            for key, (value, _) in kwargs.items():
                st.own_heap()[(box.oid, ("k", key))] = value
            return box
        if qual in api.PACKED_SEQUENCE_MAKERS and args:
            where = api.PACKED_SEQUENCE_MAKERS[qual]
            rows = args[where] if where != "items" else \
                (st.heap.get((args[0][0].oid, "*"), UNKNOWN), args[0][1]) if type(args[0][0]) is Box else (UNKNOWN, None)
            if type(rows[0]) is not Tensor:
                return self.unknown_call(args, kwargs)
            return self.packed(self.op(node, [rows], False, st))
        if qual == api.PAD_PACKED_SEQUENCE and args and self.packed_rows(args[0][0]) is not None:
            # ``out, lengths = pad_packed_sequence(packed)``: the rows, padded (of their graph)
            padded = self.op(node, [(self.packed_rows(args[0][0]), args[0][1])], False, st)
            return Tup((padded, Tensor(NEVER, integral=True)))
        if qual == api.MODULE_DICT and len(args) == 1 and not kwargs and type(args[0][0]) is Box:
            # ``nn.ModuleDict(dict(wte=..., h=...))`` (nanoGPT): its modules by key, read as
            # ``md.h`` or ``md["h"]``, as a namespace's
            src, box = args[0][0], Box((node, self.frame.ctx), "namespace")
            self.allocate(box.oid, st)
            for (oid, key), value in list(st.heap.items()):
                if oid == src.oid and (key == "*" or (type(key) is tuple and key[0] == "k")):
                    st.own_heap()[(box.oid, key)] = value
            return box
        if qual in api.GRAD_READERS:
            # ``clip_grad_norm_(loss, 1.0)``: it reads the ``.grad`` of what it is given, which a
            # non-leaf has none of (torch warns and skips it)
            pos, key = api.GRAD_READERS[qual]
            given = args[pos] if len(args) > pos else kwargs.get(key)
            if given is not None:
                single = type(given[0]) is Tensor
                for t in tensors_in(given[0]) if type(given[0]) in (Tensor, Tup) else ():
                    self.emit("read_grad", node, st, (t,), target=given[1] if single else None, detail="reader")
        if qual.split(".", 1)[0] in api.NUMBER_MODULES and qual not in api.NUMBER_MODULES_EXCEPT:
            return NUMBER  # ``math.exp(-x ** 2)``: a float (of a one-element tensor too), never a graph
        if not is_torch(qual):
            return self.unknown_call(args, kwargs)
        if qual in api.GRAD_MODE:
            spec = api.GRAD_MODE[qual]
            given = args[0][0] if args else kwargs.get(api.GRAD_MODE_KEYWORD, (None, None))[0]
            flag = truth(given) if given is not None else None
            if spec == "not_arg0":  # inference_mode(mode=True)
                enabled = False if given is None else (None if flag is None else not flag)
            else:
                enabled = spec if isinstance(spec, bool) else flag
            if isinstance(self.stmt, ast.Expr) and self.stmt.value is node:
                # torch.set_grad_enabled(False) as a statement (inside ``inference_mode`` one
                # that enables grad records nothing still)
                st.grad = False if self.inference and enabled is not False else enabled
            return GradCtx(enabled, inference=spec == "not_arg0" and enabled is False)
        if qual in api.FACTORIES or qual in api.COPY_CONSTRUCTORS:
            why = frozenset()
            if qual in api.COPY_CONSTRUCTORS and args and _literal(args[0][1]) is None:
                why = frozenset({("detach" if type(args[0][0]) is Tensor else "rebuilt", node)})
            integral = _made_integral(qual, args, kwargs, st)
            requires = self.grad_allowed(_kw_truth(kwargs, api.REQUIRES_GRAD, False), integral)
            return self.shaped(self.leaf(node, requires, st, why, integral, self.made_on_cpu(args, kwargs)),
                               api.FACTORY_SHAPES.get(qual), args, kwargs, st, shapes.factory)
        if qual in api.PARAMETERS:  # (``nn.Parameter(data)`` is where data is)
            return self.shaped(self.leaf(node, _kw_truth(kwargs, api.REQUIRES_GRAD, True), st,
                                         cpu=self.made_on_cpu(args, {}) and bool(args) and type(args[0][0]) is Tensor),
                               api.FACTORY_SHAPES.get(qual), args, kwargs, st, shapes.factory)
        if qual in api.PARAMETER_CONTAINERS and len(args) <= 1 and not kwargs:
            # ``nn.ParameterList([nn.Parameter(...) for _ in range(n)])``: a list (dict) of the
            # parameters, which the module holding it registers
            kind = api.PARAMETER_CONTAINERS[qual]
            box = self.builtin_call(kind, args, {}, node, st) if args else self.builtin_call(kind, [], {}, node, st)
            if type(box) is not Box:
                return UNKNOWN
            if not all(t.leaf and t.grad == YES for t in tensors_in(st.heap.get((box.oid, "*"), Tensor(YES)))):
                return UNKNOWN  # (tensors it makes parameters of: not followed)
            st.own_heap()[(box.oid, "registered")] = Const(True)
            return box
        if qual in api.DATA_CONVERTERS and args and (_numbers(_data(*args[0], st)) or all(
                type(v) is Const and type(v.value) is int or type(v) is Number for v, _ in args)
                or api.FACTORY_SHAPES.get(qual) == "legacy" and len(args) >= 2
                and not any(type(v) in (Tensor, Box, Tup) for v, _ in args)) \
                and not kwargs.keys() - {"dtype"}:
            # (``torch.Tensor(n, 1)``: two or more arguments are sizes, whatever is known of them)
            # ``torch.Tensor([1, 3])``, ``torch.as_tensor([[0.5]])``, ``torch.Tensor(2, 3)``: a new
            # leaf of numbers (of that shape), without grad
            return self.shaped(self.leaf(node, False, st, integral=_made_integral(qual, args, kwargs, st),
                                         cpu=self.made_on_cpu(args, kwargs)),
                               api.FACTORY_SHAPES.get(qual), args, kwargs, st, shapes.factory)
        if qual in api.DATA_CONVERTERS and args and type(args[0][0]) is Box and args[0][0].kind == "list" \
                and _numbers_only(st.heap.get((args[0][0].oid, "*"))) and not kwargs.keys() - {"dtype"}:
            # ``torch.Tensor([m[2] for m in memory])`` of rewards: a leaf of so many numbers
            out = self.leaf(node, False, st, integral=_made_integral(qual, args, kwargs, st))
            out.shape = (None,)
            return out
        if qual in api.DATA_CONVERTERS and not any(any(tensors_in(v)) or type(v) is Box for v, _ in args[:1]):
            # data from lists, NumPy or a library: a leaf without grad (unless the data we do
            # not see is a tensor, which these return as it is)
            return Tensor(NEVER if args and type(args[0][0]) is Const else NO)
        if qual in api.FUNCTIONS and _dtype_grad(kwargs.get(api.DTYPE_KEYWORD, (None, None))[0]) is False:
            # ``torch.as_tensor(out, dtype=torch.long)``: a result of an integer dtype, without graph
            return self.shaped(Tensor(NEVER, storage=self.fresh_storage(node, st), integral=True),
                               api.SHAPE_FUNCTIONS.get(qual), args, kwargs, st)
        if qual in api.IN_PLACE_METHOD_FUNCTIONS and args and type(args[0][0]) is Tensor:
            # ``torch.relu_(x)``: ``x.relu_()``
            return self.tensor_method(args[0][0], qual[len(api.TORCH) + 1:], args[1:], kwargs, node, st,
                                      recv=args[0][1])
        if qual in api.IN_PLACE_FLAG_FUNCTIONS:  # ``F.elu_(x)``: ``F.elu(x, inplace=True)``
            return self.torch_call(api.IN_PLACE_FLAG_FUNCTIONS[qual], args,
                                   {**kwargs, api.IN_PLACE_ATTRIBUTE: (Const(True), None)}, node, st)
        if qual in api.FUNCTIONS:
            base = api.VIEW_FUNCTIONS.get(qual)
            viewed = args[base][0] if base is not None and len(args) > base else None
            if qual in api.RESHAPES and args and _dense(args[0][0]):
                viewed = args[0][0]  # ``torch.flatten(x, 1)`` of a contiguous x: a view
            renorm = api.RENORM_FUNCTIONS.get(qual)
            if renorm is not None and _given(args, kwargs, renorm[0], "max_norm") and len(args) > renorm[1] \
                    and type(args[renorm[1]][0]) is Tensor:
                # ``F.embedding(ids, w, max_norm=1.0)``: w rescaled in place (under no grad)
                self.modified(args[renorm[1]][0].storage, node, st, args[renorm[1]][1])
            if _writes_in_place(qual, args, kwargs):  # ``F.relu(x, inplace=True)``: its result is x
                viewed = args[0][0]
                self.emit("in_place", node, st, (self.as_now(viewed, st),), target=args[0][1], detail=qual)
                if self.killed:  # (a leaf that requires grad: torch refuses the write)
                    return UNKNOWN
                self.modified(viewed.storage, node, st, args[0][1], maker=(node, self.frame.module.path),
                              written=viewed)
            out = self.op(node, list(args) + list(kwargs.values()), api.FUNCTIONS[qual], st,
                          keeps=api.KEEPS_FUNCTIONS.get(qual),
                          storage=viewed.storage if type(viewed) is Tensor else None,
                          layout=True if base is not None and qual not in api.DENSE_VIEWS else None)
            kept = api.KEPT_ARGUMENTS_FUNCTIONS.get(qual)
            if kept is not None:
                self.keep_arguments(out, [args[p][0] for p in kept if type(p) is int and p < len(args)], st)
            if api.DEVICE_KEYWORD in kwargs and type(out) is Tensor:  # ``torch.as_tensor(x, device=dev)``
                out.cpu = out.cpu and _is_cpu(kwargs[api.DEVICE_KEYWORD][0])
            if qual in api.LOSS_SHAPES:
                kind, leading = api.LOSS_SHAPES[qual]
                out.shape = shapes.loss(kind, _shape_args(args, st), _shape_kwargs(kwargs, st), len(args) - leading)
                return out
            out = _split_outputs(qual, self.shaped(out, api.SHAPE_FUNCTIONS.get(qual), args, kwargs, st),
                                 _given_dim(args[1:], kwargs))
            return _cut(qual, out, args[0][0] if args else None, args[1:], kwargs)
        if qual in api.PRETRAINED_LAYERS and args:
            # ``nn.Embedding.from_pretrained(w)``: a layer whose weight is a new parameter
            # holding w's values, frozen by default
            layer_qual = api.PRETRAINED_LAYERS[qual]
            root = self.new_root(node, "params", st)
            freeze = truth(args[1][0]) if len(args) > 1 else _kw_truth(kwargs, api.PRETRAINED_FREEZE, True)
            if freeze is True:
                self.freeze((root,), st, every=True)
            return Layer(layer_qual, api.MODULES[layer_qual], root)
        if qual in api.MODULES:
            spec = api.MODULES[qual]
            root = self.new_root(node, "params", st) if spec["params"] else None
            config = None
            if qual in api.MODULE_SHAPES or qual in api.LOSS_SHAPES or qual in api.IN_PLACE_MODULES \
                    or qual in api.RNN_SHAPES or qual in api.RENORM_MODULES:
                config = (_shape_args(args, st), _shape_kwargs(kwargs, st))
            site = (node, self.frame.module.path) if qual in api.IN_PLACE_MODULES else None
            return Layer(qual, spec, root, config=config, site=site)
        if qual in api.MODULE_CONTAINERS or qual in api.MODULE_HOLDERS:
            children, summary, count = [], False, None  # summary: a child stands for several (count: how many)
            # indexed: its children are named 0, 1, ... (not a Sequential of an OrderedDict's)
            indexed = not kwargs and not any(type(v) is Box and v.kind != "list" for v, _ in args)
            for v, _ in args:
                if type(v) is Box:
                    items = st.heap.get((v.oid, "items" if v.kind == "list" else "blocks"))
                    if type(items) is Tup:
                        children.extend(items.items)
                    else:
                        children.append(st.heap.get((v.oid, "*"), UNKNOWN))
                        known = st.heap.get((v.oid, "count"))
                        count = known.value if type(known) is Const and type(known.value) is int and not summary \
                            and len(args) == 1 else None
                        summary = True
                elif type(v) is Tup and qual in api.MODULE_HOLDERS:
                    children.extend(v.items)
                elif type(v) is Iter and qual in api.MODULE_HOLDERS:  # ModuleList(Conv2d(c, …) for c in ch)
                    children.append(self.iter_elem(v, st, node))
                    summary = True
                else:
                    children.append(v)
            return Layer(qual, {"params": False, "saves": False, "summary": summary, "indexed": indexed,
                                **({"count": count} if summary and count is not None else {})}, None, tuple(children))
        if qual.startswith(api.OPTIMIZER_PREFIXES) and qual.rsplit(".", 1)[-1][:1].isupper() \
                and not qual.startswith(api.NOT_OPTIMIZER_PREFIXES):
            params = args[0][0] if args else kwargs.get("params", (UNKNOWN, None))[0]
            if type(params) is Iter and params.wrap == ("empty",):
                self.killed = True  # ValueError: "optimizer got an empty parameter list"
                return UNKNOWN
            self.trained |= self.roots_of(params, st, 0)
            return Optim(qual, params)
        backward = api.BACKWARD_CALLS.get(qual)
        if backward is not None:
            if args:
                target = args[backward["tensors"]][0]
            else:  # autograd.grad(outputs=..., inputs=...), autograd.backward(tensors=...)
                target = kwargs.get(backward["tensors_kw"], (UNKNOWN, None))[0]
            return self.backward(node, backward, target, args, kwargs, st)
        inputs = list(args) + list(kwargs.values())  # Categorical(logits=...) passes by keyword
        if any(type(v) is Tensor for v, _ in inputs):
            if any(type(v) is Tensor and v.grad > NO and v.leaf
                   for v in _named_arguments(args, kwargs, api.DISTRIBUTION_SHARED_NODES.get(qual, {}))):
                # ``Bernoulli(probs=p)`` of a leaf p: the node it computes of p, which every method
                # uses (of a computed p, the graph p carries is shared already, and the object
                # is no tensor a fix could detach)
                return self.op(node, inputs, True, st)
            if qual.rsplit(".", 1)[-1][:1].isupper():
                # a class (a Distribution): an object holding its arguments' graph, no node of
                # its own (what it computes, log_prob(), is the node, and the thing to detach)
                ts = [t for v, _ in inputs for t in tensors_in(v) if t.grad != NO]
                if not ts:
                    return Tensor()
                attributes = api.DISTRIBUTION_ATTRIBUTES.get(qual)
                given = None
                if attributes:  # what ``.mean`` and its kin give back: a parameter itself
                    names = {p: pos for params in attributes.values() for p, pos, _ in params}
                    given = (qual, tuple((name, kwargs[name][0] if name in kwargs else args[pos][0])
                                         for name, pos in names.items() if name in kwargs or len(args) > pos))
                return Tensor(max(t.grad for t in ts), False, frozenset().union(*(t.segs for t in ts)),
                              frozenset().union(*(t.roots for t in ts)), merge_via(ts),
                              all(t.exact for t in ts), frozenset().union(*(t.weak for t in ts)), params=given)
            return self.op(node, inputs, None, st)
        held = [st.heap[(v.oid, "*")] for v, _ in inputs if type(v) is Box and type(st.heap.get((v.oid, "*"))) is Tensor]
        if held:  # ``pad_sequence(rows)``: what it makes of a list of tensors is not known; it may hold their graphs
            return self.unknown_call([(Tup(held), None)], {})
        return UNKNOWN

    @staticmethod
    def packed(rows: Tensor) -> Tup:
        """A PackedSequence holding ``rows`` (its ``.data``, its item 0: a named tuple)."""
        return Tup((rows,) + tuple(Tensor(NEVER, integral=True) for _ in api.PACKED_SEQUENCE_FIELDS[1:]),
                   api.PACKED_SEQUENCE_FIELDS)

    @staticmethod
    def packed_rows(v: Val):
        """The rows of a PackedSequence, or None for any other value."""
        if type(v) is Tup and v.names == api.PACKED_SEQUENCE_FIELDS and type(v.items[0]) is Tensor:
            return v.items[0]
        return None

    def _row(self, node, arg, st: State) -> Tensor:
        """``t[i]`` of a TensorDataset's tensor: its shape without the first dim."""
        row = self.op(node, [arg], False, st)
        row.shape = shapes.index(arg[0].shape, [0])
        return row

    def data_loader(self, args, kwargs) -> Val:
        """``DataLoader(dataset, batch_size=n)`` as the default setup runs it: an iterator over
        batches of the dataset's items (see ``batch``). Anything else (workers, a collate_fn,
        a batch sampler) is not modelled: its batches are unknown."""
        given = dict(zip(api.DATA_LOADER_KEYWORDS, (v for v, _ in args)))
        known = {*api.DATA_LOADER_KEYWORDS, *api.DATA_LOADER_ORDER_KEYWORDS, *api.DATA_LOADER_WORKER_KEYWORDS}
        if len(args) > len(api.DATA_LOADER_KEYWORDS) or set(kwargs) - known or set(given) & set(kwargs):
            return UNKNOWN
        given.update({k: v for k, (v, _) in kwargs.items()})
        if "dataset" not in given:
            return UNKNOWN
        size = given.get("batch_size", Const(1))
        workers = given.get("num_workers", Const(0)) != Const(0)  # (a number not known may be some)
        # (how many items a batch holds, and whether a last short one is dropped, where known)
        per_batch = size.value if type(size) is Const and type(size.value) is int and size.value > 0 \
            and "sampler" not in given else None
        drop = given.get("drop_last", Const(False))
        drop = drop.value if type(drop) is Const and type(drop.value) is bool else None
        return Iter(wrap=("loader", given["dataset"], not (type(size) is Const and size.value is None), workers,
                          per_batch, drop))

    def batch(self, dataset: Val, stacked: bool, workers: bool, st: State, site) -> Val:
        """One batch: the item ``dataset[i]`` gives, each tensor in it stacked with the others
        (a node that saves nothing, over the item's graph), numbers made tensors. From worker
        processes, only an item that carries no graph (one that does is refused there)."""
        if type(dataset) is Obj and type(dataset.cls.lookup("__getitem__")) is Func:
            # (the default sampler's indices are ints)
            item = self.invoke(dataset.cls.lookup("__getitem__"), [dataset, NUMBER], {}, st, site, bound=True)
        elif type(dataset) is Box and dataset.kind == "list":
            item = self.iter_elem(dataset, st, site)
        else:
            return UNKNOWN
        if workers and _carries_graph(item, st, 0):
            return UNKNOWN
        return self.collate(item, site, st) if stacked else item

    def collate(self, item: Val, site, st: State, depth: int = 0) -> Val:
        """The default collate: tensors stacked along a new first dim (the last batch may be
        smaller: its size is not known), numbers made a tensor, tuples and dicts of known keys
        collated item by item."""
        t = type(item)
        if t is Tensor:
            out = self.op(site, [(item, None)], False, st)
            out.shape = shapes.insert(item.shape, 0, None)
            return out
        if t is Tup:
            return item.like(self.collate(x, site, st, depth + 1) for x in item.items)
        if t is Number or t is Const and isinstance(item.value, (int, float, bool)):
            return Tensor(NEVER, shape=(None,))
        keys = st.heap.get((item.oid, "kwkeys")) if t is Box and item.kind == "dict" else None
        if type(keys) is Tup and all(type(k) is Const for k in keys.items) and depth < MAX_COLLATE_DEPTH:
            box = Box(((site, depth), self.frame.ctx), "dict")
            self.allocate(box.oid, st)
            heap = st.own_heap()
            elem = None
            for key in keys.items:
                value = self.collate(st.heap.get((item.oid, ("k", key.value)), UNKNOWN), site, st, depth + 1)
                heap[(box.oid, ("k", key.value))] = value
                elem = value if elem is None else join(elem, value)
            if elem is not None:
                heap[(box.oid, "*")] = elem
            note_keys(st, box, [k.value for k in keys.items])
            heap[(box.oid, "kwkeys")] = keys
            return box
        return UNKNOWN

    def shallow_copy(self, v: Val, node, st) -> Val:
        """``copy.copy(obj)``: a new object holding the same values (a module: the same
        parameters, so the same layer as far as the analysis goes)."""
        if type(v) is Layer:
            return v
        if type(v) is Obj and not v.some:
            obj = Obj((node, self.frame.ctx), v.cls)
            self.allocate(obj.oid, st)
            heap = st.own_heap()
            for key in [k for k in st.heap if type(k) is tuple and k[0] == v.oid]:
                heap[(obj.oid,) + key[1:]] = st.heap[key]
            return obj
        if type(v) is Box and v.kind in ("list", "dict") and not v.some:
            return self.builtin_call(v.kind, [(v, None)], {}, node, st)
        return UNKNOWN

    def copy_value(self, v: Val, node, st, made=None) -> Val:
        """``copy.deepcopy(module)``: a module of the same kind with parameters of its own; a
        project's module (``copy.deepcopy(qvalue_net)``) is a new object whose attributes are
        copies too (its parameters the copy's own leaves: freezing them leaves the source's)."""
        made = {} if made is None else made
        if type(v) is Layer:
            root = self.new_root(node, "params", st) if v.root is not None else None
            return Layer(v.qual, v.spec, root, tuple(self.copy_value(c, node, st, made) for c in v.children),
                         v.config, v.site)
        if type(v) is Obj and not v.some and len(made) < MAX_COPIED_OBJECTS:
            if v.oid in made:  # (an attribute that refers back to an object copied already)
                return made[v.oid]
            obj = made[v.oid] = Obj((node, self.frame.ctx, len(made)), v.cls)
            self.allocate(obj.oid, st)
            for key in [k for k in st.heap if type(k) is tuple and k[0] == v.oid]:
                st.own_heap()[(obj.oid,) + key[1:]] = self.copy_value(st.heap[key], node, st, made)
            return obj
        if type(v) is Tensor and v.leaf and v.roots and v.grad != NEVER:  # ``nn.Parameter`` attributes
            root = self.new_root(node, "params", st)
            return Tensor(v.grad, True, roots=frozenset({root}), storage=root, shape=v.shape)
        return v

    def leaf(self, node, requires_grad, st, why=frozenset(), integral=False, cpu=False) -> Tensor:
        if requires_grad is False:
            return Tensor(NEVER, why=why, storage=self.fresh_storage(node, st), integral=integral, cpu=cpu)
        root = self.new_root(node, "tensor", st)
        return Tensor(YES if requires_grad else MAYBE, True, roots=frozenset({root}), storage=root, cpu=cpu)

    def made_on_cpu(self, args, kwargs) -> bool:
        """A factory (or copy) given these makes its tensor on the CPU: no device named, the
        default device is the CPU, and every tensor it copies is there."""
        device = kwargs.get(api.DEVICE_KEYWORD)
        named = device is None and self.default_device == api.CPU \
            or device is not None and _is_cpu(device[0])
        return named and all(t.cpu for v, _ in args for t in tensors_in(v))

    def grad_allowed(self, requires_grad, integral: bool):
        """What ``requires_grad`` a tensor gets: none for one of an integer or bool dtype, where
        asking for it raises ("only Tensors of floating point ... can require gradients"). A
        program stops there; a statement of a notebook's top level stops only its cell, and the
        later cells run on what it left (where a cell ends is not known here: the rest of the
        statement's cell is taken to run too)."""
        if not integral:
            return requires_grad
        if requires_grad is True:
            module = self.frame.module
            if not (self.frame.func is None and module.path.endswith(NOTEBOOK_SUFFIX)
                    and any(s is self.stmt for s in module.tree.body)):
                self.killed = True
        return False

    def checkpointed(self, qual, args, kwargs, node, st: State) -> Val:
        """``torch.utils.checkpoint.checkpoint(fn, *args)``: ``fn(*args)``, whose result, when
        reentrant, requires grad only if a tensor argument does."""
        given = {k: v for k, v in kwargs.items() if k not in api.CHECKPOINTS[qual]}
        out = self.call(args[0][0], list(args[1:]), given, node, st)
        reentrant = truth(kwargs[api.CHECKPOINT_REENTRANT][0]) if api.CHECKPOINT_REENTRANT in kwargs else True
        if reentrant is False or type(out) is not Tensor:
            return out
        inputs = [t.grad for v, _ in args[1:] for t in tensors_in(v)]
        if any(g == YES for g in inputs):
            return out
        if reentrant is True and all(g == NEVER for g in inputs) and all(type(v) in (Tensor, Const) for v, _ in args[1:]):
            return Tensor(NEVER, exact=out.exact, why=frozenset({("reentrant", node)}), storage=out.storage)
        return Tensor(MAYBE, False, out.segs, out.roots, out.via, False, out.segs)  # may have no graph

    def fresh_storage(self, node, st: State):
        """The memory of a tensor made now at ``node``: what an in-place update wrote into the
        one made there before (``eps = std.new_empty(n).normal_(); eps.mul_(std)`` in a loop)
        is not in it."""
        storage = (node, self.frame.ctx)
        if (storage, "absorbed") in st.heap:
            del st.own_heap()[(storage, "absorbed")]
        # nor does a write into this one reach what ops saved of the one made there before
        # (``coeff = torch.zeros(...); coeff[..., :k] = x_ft`` in each call of a layer)
        for seg in self.savers.pop(storage, ()):
            seg.kept = seg.kept - {storage}
        return storage

    def tensor_method(self, t: Tensor, name, args, kwargs, node, st, recv=False) -> Val:
        # the receiver's expression (none for a bound method called by another name: ``f = x.add_``;
        # the first argument's for the function form, ``torch.relu_(x)``)
        if recv is False:
            recv = node.func.value if type(node.func) is ast.Attribute else None
        if name == "backward":
            return self.backward(node, api.BACKWARD_CALLS["Tensor.backward"], t, args, kwargs, st)
        if name in api.TO_NUMPY_METHODS:
            self.emit("to_numpy", node, st, (t,), target=recv, detail=name)
        if name in api.SEVER_METHODS or name in api.SAMPLE_METHODS:
            if name == api.SIZE_METHOD and len(args) == 1 and not kwargs and type(args[0][0]) is Const \
                    and type(args[0][0].value) is int and type(t.shape) is tuple \
                    and -len(t.shape) <= args[0][0].value < len(t.shape) \
                    and type(t.shape[args[0][0].value]) is int:
                return Const(t.shape[args[0][0].value])  # ``x.size(0)`` of a known size
            if name == api.SIZE_METHOD and not args and not kwargs and type(t.shape) is tuple:
                return sizes_of(t.shape)  # ``x.size()``: a torch.Size, a tuple of its sizes
            if not args and not kwargs and type(t.shape) is tuple:
                if name == api.RANK_METHOD:
                    return Const(len(t.shape))  # ``if first.dim() == 0:`` decides
                if name in api.NUMEL_METHODS and all(type(d) is int for d in t.shape):
                    return Const(prod(t.shape))
            if name in api.PYTHON_VALUE_METHODS:
                return NUMBER if name in api.NUMBER_METHODS else UNKNOWN
            detach = name in api.DETACHES  # the same memory, without the graph
            why = frozenset({("detach", node)}) if detach else frozenset()
            integral = INDEX if name in api.INDEX_METHODS else name in api.INTEGRAL_METHODS or (
                t.integral if detach else False) or _dtype_grad(kwargs.get(api.DTYPE_KEYWORD, (None, None))[0]) is False
            # (``x.new_zeros(n)``: memory of its own, which later in-place writes change)
            return self.shaped(Tensor(NEVER, exact=t.exact, why=why, storage=t.storage if detach else self.fresh_storage(node, st),
                                      integral=integral, boolean=name in api.BOOL_METHODS),
                               api.SHAPE_METHODS.get(name),
                               [(t, recv)] + list(args), kwargs, st)
        if name in api.DETACH_IN_PLACE or name == api.REQUIRES_GRAD_SETTER:
            flag = name == api.REQUIRES_GRAD_SETTER and (truth(args[0][0]) if args else
                                                         _kw_truth(kwargs, api.REQUIRES_GRAD, True))
            if t.integral:  # refused (or nothing to change): it stays as it is
                self.grad_allowed(flag, True)
                return t
            if flag is False and t.leaf:
                self.freeze(t.roots, st, self.every_parameter(recv, st))
            elif flag is True and t.leaf:
                self.unfreeze(t.roots, st)
            receiver = recv
            # an attribute of an object we see is rebound below, like a name
            holder = self.ev(receiver.value, st) if isinstance(receiver, ast.Attribute) else None
            if flag is not False and t.grad == NEVER and not isinstance(receiver, ast.Call) and not (
                    isinstance(receiver, ast.Name) and receiver.id not in self.frame.elements) \
                    and type(holder) is not Obj:
                self.doubt(t)  # the tensor is held elsewhere too (a list, an attribute)
            out = self.leaf(node, flag, st) if t.leaf or not flag else t
            if flag and out is not t and t.storage is not None:
                # the tensor itself changed: a forward hook's ``output.requires_grad_()`` is seen
                # by the module's caller (``Engine.run_hooks``)
                st.own_heap()[(t.storage, "required")] = out
            if out is not t:
                out.shape = t.shape
                if name in api.DETACH_IN_PLACE and t.segs or flag is True and t.leaf:
                    # the tensor itself changed: every name and container holding it sees it (a
                    # caller's too: ``compute_importance(head_mask=mask)`` makes ``mask`` require grad)
                    retarget(st, t, out)
            if type(holder) is Obj:
                st.own_heap()[(holder.oid, receiver.attr)] = out
            if isinstance(receiver, ast.Name):
                st.bind(receiver.id, out)
                box = self.frame.elements.get(receiver.id)
                if box is not None and flag:  # ``for p in params: p.requires_grad_()`` changes the list's elements
                    key = (box.oid, "*")
                    st.own_heap()[key] = join(st.heap[key], out) if key in st.heap else out
                    forget_items(st, box)
            return out
        if t.cpu and (name == api.MOVE_TO_CPU and not args and not kwargs or name == api.MOVE_TO
                      and _names_cpu(args, kwargs)):
            return t  # ``w.to("cpu")`` of a tensor on the CPU: the very tensor (a leaf stays one)
        if name in api.CAST_METHODS and not args and not kwargs:
            return UNKNOWN  # ``x.type()``: the name of its type, a string
        if name in api.CAST_METHODS and _cast_grad(name, args, kwargs) is False:
            # ``x.type(torch.LongTensor)``, ``x.to(torch.long)``: a tensor of an integer dtype,
            # without graph (a cast to a floating dtype keeps it: ToCopyBackward0, below)
            return Tensor(NEVER, exact=t.exact, shape=t.shape, storage=self.fresh_storage(node, st), integral=True)
        if name in api.TENSOR_METHODS:
            operands = list(args) + list(kwargs.values())
            if name in api.LIKE_METHODS or name in api.RECEIVER_ONLY_METHODS:
                operands = []
            out = self.op(node, [(t, recv)] + operands,
                          api.TENSOR_METHODS[name], st, keeps=api.KEEPS_METHODS.get(name),
                          storage=t.storage if name in api.VIEW_METHODS or name in api.RESHAPES and _dense(t) else None,
                          layout=False if name in api.DENSE_RESULTS else
                          True if name in api.VIEW_METHODS and name not in api.DENSE_VIEWS else None)
            kept = api.KEPT_ARGUMENTS_METHODS.get(name)
            if kept is not None:  # (position 0 is the tensor itself)
                self.keep_arguments(out, [args[p - 1][0] for p in kept if type(p) is int and 0 < p <= len(args)], st)
            if name in api.DEVICE_METHODS and type(out) is Tensor:
                # moved: on the CPU only when moved there (``x.cuda()``, ``x.to(device)`` may be elsewhere)
                out.cpu = name == api.MOVE_TO_CPU or name == api.MOVE_TO and _names_cpu(args, kwargs)
            return _cut(name, _split_outputs(name, self.shaped(
                out, api.SHAPE_METHODS.get(name), [(t, recv)] + list(args), kwargs, st), _given_dim(args, kwargs)),
                        t, args, kwargs)
        if api.is_in_place_method(name):
            self.emit("in_place", node, st, (self.as_now(t, st),), target=recv, detail=name)
            self.modified(t.storage, node, st, recv, written=t)
            self.filled(t, [v for v, _ in args] + [v for v, _ in kwargs.values()], st)
            frozen = t.leaf and t.roots and all((r, "frozen") in st.heap for r in t.roots)
            if frozen and st.grad is not False:
                self.absorb(t.roots, args, st)
            elif t.grad == NEVER and t.leaf and not t.roots and t.storage is not None and st.grad is not False:
                self.absorb((t.storage,), args, st)  # ``running_mean.mul_(m).add_(x.mean(0))``
            elif t.leaf and t.grad == YES:
                st.mark_stepped()
                self.trained |= t.roots
                if t.storage is None and t.roots and self.every_parameter(recv, st):
                    # ``for p in net.parameters(): p.add_(...)``: the loop writes each of them
                    for root in t.roots:
                        self.modified(root, node, st)
                self.emit("step", node, st, roots=t.roots)
            if name in api.GRAD_TENSOR_RESETS:  # p.grad.zero_(), p.grad.data.zero_()
                owner = _grad_owner(recv)
                if owner is not None:
                    value = self.ev(owner, st)
                    if type(value) is Tensor:
                        self.emit("grad_reset", node, st, roots=value.roots)
            if name not in api.IN_PLACE_KEEPS_RESULT and not t.leaf and st.grad is not False and any(
                    type(v) is Tensor and v.grad >= MAYBE and not v.segs <= t.segs for v, _ in args):
                # ``h.add_(attn(ln(h)))``: the tensor itself now ends in this op, over its old graph
                # and the argument's (every holder of it walks both; ``h += y`` rebinds one name)
                out = self.op(node, [(t, recv)] + list(args), False, st, storage=t.storage)
                out.shape = t.shape
                retarget(st, t, out)
                return out
            if name in api.IN_PLACE_KEEPS_RESULT and not t.leaf:
                # ``exp_``, ``sigmoid_``, ``tanh_``, ``relu_``, ``sqrt_``: as their out-of-place
                # forms, the node saves what it wrote (a later write in place spoils it)
                out = self.op(node, [(t, recv)] + list(args), True, st, keeps="result", storage=t.storage)
                out.shape = t.shape
                if t.segs and all(("retained", s) in st.heap for s in t.segs):
                    heap = st.own_heap()  # (torch keeps ``retain_grad()`` through a write in place)
                    for seg in out.segs - t.segs:
                        heap[("retained", seg)] = Const(True)
                return out
            return t
        if name == api.RETAIN_GRAD:  # .grad of this non-leaf will be kept
            heap = st.own_heap()
            for seg in t.segs:
                heap[("retained", seg)] = Const(True)
        if name in api.TENSOR_HOOK_METHODS or name == api.RETAIN_GRAD:
            return NONE
        return self.op(node, [(t, recv)] + list(args) + list(kwargs.values()), None, st)

    def call_layer(self, layer: Layer, args, node, st) -> Val:
        if layer.qual in api.MODULE_CONTAINERS:
            # each layer is a call of its own: one context each, so that the second layer's
            # saved input (the first's output) is not taken for the container's output
            x = args
            out = args[0][0] if len(args) == 1 else UNKNOWN  # an empty Sequential returns its input
            frame = self.frame
            ctx = frame.ctx
            try:
                for i, child in enumerate(layer.children):
                    frame.ctx = ((node, i),) + ctx
                    out = self.call(child, x, {}, node, st)
                    x = [(out, None)]
            finally:
                frame.ctx = ctx
            return out
        if layer.qual in api.IDENTITY_MODULES and len(args) == 1:
            return args[0][0]
        rows = self.packed_rows(args[0][0]) if args and layer.qual in api.RNN_SHAPES else None
        if rows is not None:  # ``rnn(packed, h)``: a PackedSequence of its output rows, and its state
            out = self.call_layer(layer, [(rows, args[0][1])] + list(args[1:]), node, st)
            if type(out) is not Tup or not out.items or type(out.items[0]) is not Tensor:
                return UNKNOWN
            return Tup((self.packed(out.items[0].but(shape=None)),) + tuple(out.items[1:]))
        inputs = list(args)
        if layer.root is not None and (layer.root, "frozen") not in st.heap:
            weight = Tensor(YES, True, roots=frozenset({layer.root}), storage=layer.root)
            if layer.spec.get("reparametrized"):  # its weight computed from its parameters, which that saves
                ctx = self.frame.ctx
                self.frame.ctx = ((node, "weight"),) + ctx  # (a node of its own, apart from the layer's)
                try:
                    weight = self.op(node, [(weight, None)], True, st, keeps="self")
                finally:
                    self.frame.ctx = ctx
            inputs.append((weight, None))
        elif layer.root is not None and st.heap.get((layer.root.node, "frozen_all")) != Const(True):
            # frozen on some path, or only some of its parameters: its output may still require grad
            inputs.append((st.heap.get((layer.root, "absorbed"), Tensor()), None))
        elif layer.root is not None and (layer.root, "absorbed") in st.heap:
            inputs.append((st.heap[(layer.root, "absorbed")], None))
        storage = None
        if _in_place_layer(layer, st) and args and type(args[0][0]) is Tensor:  # nn.ReLU(inplace=True)
            self.emit("in_place", node, st, (self.as_now(args[0][0], st),), target=args[0][1], detail=layer.qual)
            if self.killed:  # (a leaf that requires grad: torch refuses the write)
                return UNKNOWN
            storage = args[0][0].storage
            self.modified(storage, node, st, args[0][1], maker=layer.site, written=args[0][0])
        if layer.qual in api.RENORM_MODULES and layer.root is not None and layer.config is not None \
                and _given(*layer.config, api.RENORM_MODULES[layer.qual][1], api.RENORM_MODULES[layer.qual][0]):
            # ``nn.Embedding(n, d, max_norm=1.0)``: its weight rescaled in place by each lookup
            self.modified(layer.root, node, st)
        out = self.op(node, inputs, layer.spec.get("saves"), st, keeps=api.KEEPS_MODULES.get(layer.qual),
                      storage=storage)
        kept = api.KEPT_ARGUMENTS_MODULES.get(layer.qual)
        if kept is not None:  # ``nn.CrossEntropyLoss()(logits, labels)``: the labels too
            self.keep_arguments(out, [args[p][0] for p in kept if type(p) is int and p < len(args)], st)
        if layer.spec.get("keeps_state") and len(args) > 1 and type(out) is Tensor and out.segs:
            # ``lstm(x, (h, c))``: its node saved the state too (a stateful model that copies the
            # new state into it, in place, spoils this backward)
            seg = max(out.segs, key=lambda s: s.born)
            state = frozenset(t.storage for t in tensors_in(args[1][0]) if t.storage is not None)
            if state - seg.kept:
                self.keep(seg, seg.kept | state, st)
        returns = layer.spec.get("returns", "tensor")
        if layer.qual in api.RNN_SHAPES and layer.config is not None and type(out) is Tensor:
            # the output and the state, each of its own shape (of one graph)
            shaped = shapes.rnn(api.RNN_SHAPES[layer.qual], *layer.config, _shape_args(args, st))
            output, h, c = (out.but(shape=shape) for shape in shaped)
            return Tup((output, Tup((h, c)))) if returns == "output_and_hidden_pair" else Tup((output, h))
        out.shape = _layer_shape(layer, _shape_args(args, st))
        if returns == "output_and_hidden_pair":  # LSTM: (output, (h, c))
            return Tup((out, Tup((out, out))))
        if returns != "tensor":
            return Tup((out, out))
        return out

    def keep_arguments(self, out: Val, values: list, st: State) -> None:
        """The op that made ``out`` (its newest segment) saved these arguments too, tensors that
        need no grad (``torch_api.KEPT_ARGUMENTS_*``): a write in place to one spoils it."""
        if type(out) is not Tensor or not out.segs:
            return
        storages = frozenset(v.storage for v in values if type(v) is Tensor and v.storage is not None)
        seg = max(out.segs, key=lambda s: s.born)
        if storages - seg.kept:
            self.keep(seg, seg.kept | storages, st)

    def absorb(self, roots, args, st: State) -> None:
        """``t.mul_(a).add_((1 - a) * s)`` with grad on, on weights that do not require grad
        (an EMA teacher's) or a buffer (running statistics): they now hold the graph of what
        was added, and pass it on. ``roots``: the parameters' roots, or the buffer's storage."""
        graphs = [t for v, _ in args for t in tensors_in(v) if t.segs]
        if not graphs:
            return
        added = graphs[0]
        for t in graphs[1:]:
            added = join(added, t)
        for r in roots:
            key = (r, "absorbed")
            st.own_heap()[key] = join(st.heap[key], added) if key in st.heap else added

    def new_root(self, node, kind: str, st: State) -> Root:
        """A ``requires_grad`` origin made at ``node`` (see ``freeze`` for its flag)."""
        st.own_heap()[(node, "frozen_all")] = Const(False)
        # one per site, calling context and pass of the unrolled loops around, like segments: a
        # loop making one each iteration reaches its fixpoint (a new one each time grew its roots
        # until the passes ran out)
        key = (node, self.frame.ctx, kind, self.unrolled_passes())
        root = self.made_roots.get(key)
        if root is None:
            root = self.made_roots[key] = Root(node, self.stmt, self.frame.module.path, kind)
        elif (GRAD_OF, root) in st.heap:
            # the tensors made here before may hold a .grad; this new one holds none (what is
            # said of the root from now on is said of the newest: a step over an older one,
            # still held, is missed rather than mistaken)
            self.grads_gone((root,), st)
            self.emit("grad_reset", node, st, roots=(root,), anywhere=True)
        return root

    def freeze(self, roots, st: State, every=False) -> None:
        """``requires_grad_(False)`` on parameters: modules built from them no longer add graph.
        ``every``: on all of each root's parameters (a module's ``requires_grad_(False)``, a loop
        over all its parameters), so "frozen" holds for the root itself. That flag is kept per
        site that makes roots (a bounded number of keys), set False each time one is made there,
        so a path that did not freeze makes it unknown at a join; it is trusted only for a root
        that is frozen itself."""
        for root in roots:
            st.own_heap()[(root, "frozen")] = Const(True)
            if every:
                st.own_heap()[(root.node, "frozen_all")] = Const(True)

    def unfreeze(self, roots, st: State) -> None:
        """``requires_grad_(True)`` on parameters frozen before: they add graph again. (The
        site's "all frozen" flag goes: parameters made there may now differ.)"""
        for root in roots:
            if (root, "frozen") in st.heap:
                del st.own_heap()[(root, "frozen")]
                st.own_heap()[(root.node, "frozen_all")] = Const(False)

    def shaped(self, out: Val, kind, args, kwargs, st: State, rule=shapes.result) -> Val:
        """Give ``out``, a tensor just made by an op, the shape ``kind`` of the shape table says."""
        if kind is None or type(out) is not Tensor:
            return out
        if kind == "legacy":
            kind = "literal" if args and type(_data(*args[0], st)) is list else "sizes"
        if kind == "literal":
            out.shape = shapes.literal(_data(*args[0], st)) if args else None
        else:
            out.shape = rule(kind, _shape_args(args, st), _shape_kwargs(kwargs, st))
        return out


def sizes_of(shape: tuple) -> Tup:
    """``x.shape`` of a known shape: a tuple of its sizes (a number where a size is not known)."""
    return Tup(Const(d) if type(d) is int else NUMBER for d in shape)


NOTEBOOK_SUFFIX = ".ipynb"
MAX_PIECES = 64  # more pieces than this stay one tensor standing for each


def _dtype_grad(v: Val, strings: bool = False):
    """Whether a tensor of the dtype ``v`` names can require grad (``api.DTYPES``); None when it
    names none the analysis knows. ``strings``: a string names one (``x.type("torch.LongTensor")``)."""
    if type(v) is LibRef:
        return api.DTYPES.get(v.qual)
    if type(v) is Builtin:
        return api.DTYPES.get(v.name)
    if strings and type(v) is Const and type(v.value) is str:
        return api.DTYPES.get(v.value)
    return None


def _cast_grad(name: str, args, kwargs):
    """Whether the result of a cast (``x.to(...)``, ``x.type(...)``, ``x.type_as(y)``) can
    require grad, as the dtype it is given says: False for an integer one, also that of a
    tensor of one (``x.to(labels)``); None when not known."""
    given = [v for v, _ in args] + [v for k, (v, _) in kwargs.items() if k == api.DTYPE_KEYWORD]
    for v in given:
        if type(v) is Tensor and v.integral:
            return False
        can = _dtype_grad(v, name in api.DTYPE_STRING_METHODS)
        if can is not None:
            return can
    return None


def _made_integral(qual: str, args, kwargs, st: State) -> bool:
    """A factory's result is known to be of an integer or bool dtype: named so (``dtype=torch.long``,
    ``torch.LongTensor(...)``), always so (``torch.randint``), or made of Python ints
    (``torch.tensor([2])``, ``torch.arange(5)``) or of such a tensor (``torch.tensor(labels)``)."""
    if api.DTYPE_KEYWORD in kwargs:
        return _dtype_grad(kwargs[api.DTYPE_KEYWORD][0]) is False
    if qual in api.INTEGRAL_FUNCTIONS or api.DTYPES.get(qual) is False:
        return INDEX if qual in api.INDEX_FUNCTIONS else True
    positions = api.DATA_TYPED.get(qual)
    if positions is None:
        return False
    given = [args[i] for i in positions if i < len(args)]
    return bool(given) and all(_integral_data(v, n, st) for v, n in given)


def _integral_data(v: Val, node, st: State) -> bool:
    """Data that makes a tensor of an integer or bool dtype: ints and bools only, known to the
    last (``[1, 2]``, ``True``), or a tensor of such a dtype."""
    if type(v) is Tensor:
        return v.integral
    data = _literal(node) if node is not None else None
    if data is None:
        data = _known_data(v, st, 0)
    return _ints(data)


def _known_data(v: Val, st: State, depth: int):
    """The numbers of a value known to the last (no number standing for an unknown one)."""
    tv = type(v)
    if tv is Const:
        return v.value if type(v.value) in (int, float, bool) else None
    items = v.items if tv is Tup else None
    if tv is Box:
        known = st.heap.get((v.oid, "items"))
        items = known.items if type(known) is Tup else None
    if items is None or depth > MAX_DATA_DEPTH:
        return None
    return [_known_data(x, st, depth + 1) for x in items]


def _ints(data) -> bool:
    """Data of ints and bools only (an empty list makes a float tensor)."""
    if type(data) is list:
        return bool(data) and all(_ints(x) for x in data)
    return type(data) in (int, bool)


def _names_cpu(args, kwargs) -> bool:
    """``to("cpu")`` / ``to(device="cpu")``: a move to the CPU and nothing else (no dtype, no copy)."""
    given = [v for v, _ in args] + [v for k, (v, _) in kwargs.items() if k == api.DEVICE_KEYWORD]
    return len(given) == 1 and len(args) + len(kwargs) == 1 and _is_cpu(given[0])


def _is_cpu(v: Val) -> bool:
    """``"cpu"`` or ``torch.device("cpu")`` (not ``"cpu:0"``, a move that copies: checked against torch)."""
    return type(v) is Const and (v.value == api.CPU or v.value is api.CPU_DEVICE)


def _kw_truth(kwargs, name, default):
    if name not in kwargs:
        return default
    return truth(kwargs[name][0])

MAX_COPIED_OBJECTS = 32  # a deepcopy follows this many of the project's objects
_DICT_CLASSES = frozenset({"collections.OrderedDict", "typing.OrderedDict"})
# Library callables known to read their arguments without changing them (any other may: an
# unresolved call forgets what was known of the lists it is given)
READS_ITS_ARGUMENTS = _DICT_CLASSES

MAX_DATA_DEPTH = 8  # nested lists a tensor's data is followed into

_PARTIALS = frozenset({"functools.partial"})

# ``namedtuple("P", ["a", "b"])``, ``namedtuple("P", "a b")``, ``NamedTuple("P", [("a", T)])``
_NAMED_TUPLES = frozenset({"collections.namedtuple", "typing.NamedTuple"})


def _field_names(node) -> tuple | None:
    """The field names a named tuple factory is given, if written out."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        names = tuple(node.value.replace(",", " ").split())
    elif isinstance(node, (ast.List, ast.Tuple)):
        names = tuple(e.value if isinstance(e, ast.Constant) else
                      e.elts[0].value if isinstance(e, ast.Tuple) and e.elts and isinstance(e.elts[0], ast.Constant)
                      else None for e in node.elts)
    else:
        return None
    return names if names and all(isinstance(n, str) and n.isidentifier() for n in names) else None

# Iterators that yield the items of their first n arguments (``None``: all), and those that
# start over when done: ``for x, y in cycle(batches)`` walks the same tensors again.
_ITERATES_ITEMS = {"itertools.cycle": 1, "itertools.islice": 1, "itertools.chain": None}
_CYCLES = frozenset({"itertools.cycle"})
_REPEATS = frozenset({"itertools.repeat"})

def _writes_in_place(qual: str, args, kwargs) -> bool:
    """A function of ``IN_PLACE_FUNCTIONS`` called so that it surely writes into its first
    argument: ``inplace`` true, ``training`` true where it has one, ``p`` not 0."""
    spec = api.IN_PLACE_FUNCTIONS.get(qual)
    if spec is None or not args or type(args[0][0]) is not Tensor:
        return False
    inplace, training, training_default, p = spec

    def given(pos: int, name: str, default):
        value = args[pos][0] if len(args) > pos else kwargs[name][0] if name in kwargs else default
        return value.value if type(value) is Const else (value if value is None or type(value) is bool else UNKNOWN)

    if given(inplace, "inplace", False) is not True:
        return False
    if training is not None and given(training, "training", training_default) is not True:
        return False
    if p is not None:
        rate = given(p, "p", None)
        return rate is None or (type(rate) in (int, float) and rate != 0)
    return True


def in_place_key(layer: Layer) -> tuple:
    """The heap entry of a layer's ``inplace`` flag set after it was built: its construction's
    arguments stand for the layer (layers without parameters are equal by kind)."""
    return ("inplace", id(layer.config))


def _named_arguments(args, kwargs, positions: dict) -> list:
    """The values given for these parameters (name: position), by keyword or position."""
    return [kwargs[name][0] if name in kwargs else args[pos][0]
            for name, pos in positions.items() if name in kwargs or len(args) > pos]


def _given(args, kwargs, pos: int, keyword: str) -> bool:
    """A number surely given for an argument (at ``pos`` or by ``keyword``): of a call, values
    with their nodes; of a layer's construction, as its ``config`` keeps them (``_shape_arg``)."""
    given = kwargs.get(keyword, args[pos] if len(args) > pos else None)
    value = given[0] if type(given) is tuple and len(given) == 2 and isinstance(given[0], Val) else given
    if type(value) is Const:
        value = value.value
    return type(value) is Number or value is shapes.NUMBER \
        or (isinstance(value, (int, float)) and not isinstance(value, bool))


def _in_place_layer(layer: Layer, st: State) -> bool:
    """A module built to modify its input (``nn.ReLU(inplace=True)``), or switched to it since
    (``m.inplace = True``)."""
    spec = api.IN_PLACE_MODULES.get(layer.qual)
    if spec is None or layer.config is None:
        return False
    flag = st.heap.get(in_place_key(layer))
    if flag is not None:
        return type(flag) is Const and flag.value is True
    args, kwargs = layer.config
    keyword, pos = spec
    return kwargs.get(keyword, args[pos] if len(args) > pos else False) is True

def is_torch(qual: str) -> bool:
    return qual == api.TORCH or qual.startswith(api.TORCH + ".")

def _grad_owner(expr):
    """``p`` in ``p.grad`` / ``p.grad.data``: whose gradient an expression is, if it is one."""
    while isinstance(expr, ast.Attribute) and expr.attr in api.SEVER_ATTRIBUTES:
        if expr.attr == api.GRAD_ATTRIBUTE:
            return expr.value
        expr = expr.value
    return None

MAX_COLLATE_DEPTH = 4  # dicts in tuples in dicts ...: a bound for a self-referencing item


def _carries_graph(item: Val, st: State, depth: int) -> bool:
    """A dataset's item holds a tensor that may require grad (a dict's values too)."""
    t = type(item)
    if t is Tensor:
        return item.grad != NEVER
    if t is Tup:
        return any(_carries_graph(x, st, depth + 1) for x in item.items)
    if t is Box:
        return depth >= MAX_COLLATE_DEPTH or _carries_graph(st.heap.get((item.oid, "*"), UNKNOWN), st, depth + 1)
    return False  # (what is not known collates to nothing known)


def _shape_arg(v: Val, node, st: State):
    """An argument as the shape rules see it (``shapes.result``)."""
    tv = type(v)
    if tv is Tensor:
        return shapes.Of(v.shape)
    if tv is Const:
        return v.value
    if tv is Number:
        return shapes.NUMBER
    if tv is Tup:
        return tuple(_shape_arg(x, None, st) for x in v.items)
    if tv is Box and type(st.heap.get((v.oid, "items"))) is Tup:
        return [_shape_arg(x, None, st) for x in st.heap[(v.oid, "items")].items]
    count = st.heap.get((v.oid, "count")) if tv is Box else None
    if type(count) is Const:  # ``[p.sum() for p in parts]`` over two parts: two of them
        return [_shape_arg(st.heap.get((v.oid, "*"), UNKNOWN), None, st)] * count.value
    if tv is Box and v.kind == "list" and not isinstance(node, (ast.List, ast.Tuple)):
        return shapes.Seq(_shape_arg(st.heap.get((v.oid, "*"), UNKNOWN), None, st))
    if tv is Box and isinstance(node, (ast.List, ast.Tuple)) \
            and not any(isinstance(e, ast.Starred) for e in node.elts):
        elem = _shape_arg(st.heap.get((v.oid, "*"), UNKNOWN), None, st)
        return [elem] * len(node.elts)  # torch.stack([a, b]): a sequence of known length
    return shapes.OPAQUE

def _shape_args(args, st: State) -> list:
    return [_shape_arg(v, n, st) for v, n in args]

def _shape_kwargs(kwargs, st: State) -> dict:
    return {k: _shape_arg(v, n, st) for k, (v, n) in kwargs.items()}

def _literal(node):
    """Literal data as written (``[[1., 2.], [3., 4.]]``); None for what is not a literal."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, bool)):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return _literal(node.operand)
    if isinstance(node, (ast.List, ast.Tuple)) and not any(isinstance(e, ast.Starred) for e in node.elts):
        return [_literal(e) for e in node.elts]
    return None

def _data(v: Val, node, st: State, depth: int = 0):
    """The numbers a tensor is made from: a literal as written (``_literal``), or a list or tuple
    whose items the analysis knows (``values`` bound to ``[1, 2, 3]`` by the caller), a number
    whose value is not known standing as 0. None for anything else."""
    data = _literal(node) if node is not None else None
    if _numbers(data) or depth > MAX_DATA_DEPTH:
        return data
    tv = type(v)
    if tv is Const:
        return v.value if type(v.value) in (int, float, bool) else data
    if tv is Number:
        return 0
    items = v.items if tv is Tup else None
    if tv is Box:
        known = st.heap.get((v.oid, "items"))
        items = known.items if type(known) is Tup else None
        count = st.heap.get((v.oid, "count"))
        if items is None and type(count) is Const and type(st.heap.get((v.oid, "*"))) in (Const, Number):
            # ``[exp(-(x - c) ** 2) for x in range(n)]``: n numbers
            return [_data(st.heap[(v.oid, "*")], None, st, depth + 1)] * count.value
    return data if items is None else [_data(x, None, st, depth + 1) for x in items]


def _numbers_only(v) -> bool:
    """A list's element that is a Python number for sure (not a tensor, not a list)."""
    return type(v) is Number or (type(v) is Const and type(v.value) in (int, float, bool))


def _numbers(data) -> bool:
    """Literal data (``_literal``) made of numbers only, at any depth."""
    if type(data) is list:
        return all(_numbers(x) for x in data)
    return data is not None


def _layer_shape(layer: Layer, inputs: list):
    """The shape of a built-in module's output (``MODULE_SHAPES``, ``LOSS_SHAPES``)."""
    if layer.config is None:
        return None
    args, kwargs = layer.config
    if layer.qual in api.LOSS_SHAPES:
        kind, leading = api.LOSS_SHAPES[layer.qual]
        return shapes.loss(kind, inputs, kwargs, len(args) - leading)
    kind = api.MODULE_SHAPES.get(layer.qual)
    return shapes.module(kind, args, kwargs, inputs) if kind is not None else None


def _split_outputs(name: str, out: Val, by_dim: bool) -> Val:
    """``values, indices = x.max(1)``, ``x.topk(k)``: the op's result as torch returns it, a
    named pair whose indices never require grad."""
    if name in api.MULTI_OUTPUTS and type(out) is Tensor:
        return Tup((out,) * api.MULTI_OUTPUTS[name])
    wants = api.SPLIT_OUTPUTS.get(name)
    if wants is None and by_dim and name in api.BY_DIM_SPLIT_OUTPUTS:
        wants = (True, False)
    if wants is None or type(out) is not Tensor:
        return out
    return Tup((out if grad else Tensor(NEVER, exact=out.exact) for grad in wants),
               api.SPLIT_OUTPUT_NAMES if len(wants) == 2 else None)


def _dense(t: Val) -> bool:
    """Known to be laid out contiguously: a tensor the analysis followed, no transposed view."""
    return type(t) is Tensor and t.exact and not t.strided


def _cut(name: str, out: Val, t: Val, rest, kwargs) -> Val:
    """``x.chunk(2)``, ``x.split(4)``, ``x.unbind()``: a tuple of its pieces where their number
    is known from the shape (``[f(p) for p in x.chunk(2)]`` then makes two), else the op's result
    as it was (a tensor standing for every piece)."""
    spec = api.PIECES.get(name)
    if spec is None or type(out) is not Tensor or type(t) is not Tensor:
        return out
    kind, pos, key = spec
    size = None
    if pos is not None:
        given = rest[pos][0] if len(rest) > pos else kwargs[key][0] if key in kwargs else None
        size = given.value if type(given) is Const else \
            tuple(x.value for x in given.items) if type(given) is Tup and all(type(x) is Const for x in given.items) \
            else None
    at = (pos + 1) if pos is not None else 0
    dim = rest[at][0] if len(rest) > at else kwargs["dim"][0] if "dim" in kwargs else Const(0)
    cut = shapes.pieces(kind, t.shape, size, dim.value if type(dim) is Const else None)
    if cut is None or not 0 < cut[0] <= MAX_PIECES:
        return out
    return Tup([out.but(shape=cut[1])] * cut[0])


def _given_dim(rest, kwargs) -> bool:
    """``max(x, 1)``, ``x.max(dim=1)``: a dim, not another tensor (``torch.max(a, b)``)."""
    return "dim" in kwargs or bool(rest) and type(rest[0][0]) is Const and type(rest[0][0].value) is int
