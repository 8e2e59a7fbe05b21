"""The autograd state: which graph segments ops build and what their nodes keep, which
backwards walk and free them, which in-place writes spoil them; and the events the rules
hear about it. A mixin of the interpreter (``engine.Engine``)."""
from __future__ import annotations

import ast
from typing import Optional

from . import torch_api as api
from .rules import SUBSCRIBERS, Event
from .rules.freed import Walk
from .state import FILLED, GRAD_GONE, GRAD_OF, GRADS_FILLED, UNBOUND, FreeInfo, State
from .values import (MAYBE, NEVER, NO, NONE, UNKNOWN, YES, After, Box, Builtin, Class, Const, Func, GradCtx, Iter,
                     Layer, LibRef, ModRef, Number, Optim, Seg, Tensor, Tup, Val, join, strong, tensors_in)


class Autograd:
    """Graph bookkeeping: ops, segments, backwards, in-place writes, rule events."""

    __slots__ = ()  # its attributes are Engine's slots

    def op(self, site, inputs, saves, st: State, keeps=None, storage=None, layout=None) -> Val:
        """A differentiable op: its result carries its inputs' graphs plus a node of its own.
        ``keeps``: which of its tensors the node saves (``torch_api.KEEPS_*``); ``storage``:
        the memory the result is written to when the op works in place, or that it views.
        ``layout``: True when the result may not be contiguous whatever its inputs (a
        transposed view), False when it is (``contiguous()``); None: strided as an input is."""
        ts = []
        heap = st.heap
        unsure = False  # an input may be a tensor we do not see (or may require grad after all)
        cpu = True  # every tensor it is given lives on the CPU: so does its result
        for v, n in inputs:
            tv = type(v)
            if tv is Tensor:
                cpu = cpu and v.cpu
                if v.leaf and v.roots:
                    for r in v.roots:  # graph an in-place update wrote into these weights
                        absorbed = heap.get((r, "absorbed"))
                        if absorbed is not None:
                            ts.append((absorbed, n))
                    if all((r, "frozen") in heap for r in v.roots):
                        # frozen (on some path, or for sure): it adds no graph of its own
                        unsure = unsure or any(heap.get((r.node, "frozen_all")) != Const(True) for r in v.roots)
                        continue
                elif v.grad == NEVER and v.storage is not None:
                    absorbed = heap.get((v.storage, "absorbed"))  # a buffer updated in place
                    if absorbed is not None:
                        ts.append((absorbed, n))
                ts.append((v, n))
                continue
            if tv is Box:  # torch.cat([a, b]) / torch.stack(xs): every element is consumed
                elems = heap.get((v.oid, "*"), UNKNOWN)
                v = self._some(elems) if v.some else strong(elems, self.several)
            elif tv is not Tup:
                unsure = unsure or tv not in _NOT_TENSORS
                continue
            unsure = unsure or _holds_unknown(v)
            for t in tensors_in(v):
                cpu = cpu and t.cpu
                ts.append((t, n))
        cpu = cpu and not unsure and any(type(v) in (Tensor, Tup, Box) for v, _ in inputs)
        # (a result without graph is new memory each run: an earlier run's savers did not save it)
        fresh = storage
        strided = layout if layout is not None else any(t.strided for t, _ in ts)
        if st.grad is False:  # nothing made without grad recording requires grad
            return Tensor(NEVER, exact=all(t.exact for t, _ in ts),
                          why=frozenset({("grad_off", self.grad_off[-1] if self.grad_off else None)}),
                          storage=fresh if fresh is not None else self.fresh_storage(site, st), strided=strided,
                          cpu=cpu)
        if not ts:
            if any(type(v) is Tensor for v, _ in inputs):
                # of parameters frozen for sure only (``w.sum()`` after ``requires_grad_(False)``)
                return Tensor(NO if unsure else NEVER, exact=not unsure, storage=self.fresh_storage(site, st), cpu=cpu)
            return Tensor(MAYBE if any(v is UNKNOWN for v, _ in inputs) else NO, exact=False)
        grad = max(t.grad for t, _ in ts)
        if grad <= NO:
            never = grad == NEVER and not unsure
            return Tensor(NEVER if never else NO, exact=all(t.exact for t, _ in ts),
                          why=frozenset().union(*(t.why for t, _ in ts)) if never else frozenset(),
                          storage=fresh if fresh is not None else self.fresh_storage(site, st), strided=strided,
                          cpu=cpu)
        roots = ts[0][0].roots if len(ts) == 1 else frozenset().union(*(t.roots for t, _ in ts))
        seg = self.new_seg(site, saves, roots)
        info = st.freed.get(seg) if self.frame.truncated else None
        if info is not None and info.inplace is None:
            # the op run again in a context already seen (calls nested deeper than the contexts
            # kept tell two callers apart no more): a new graph, not the one a backward freed
            del st.freed[seg]
        if not seg.direct and any(t.leaf and t.roots for t, _ in ts):
            seg.direct = True  # consumes a requires_grad leaf (a parameter) itself
        below = ts[0][0].segs if len(ts) == 1 else frozenset().union(*(t.segs for t, _ in ts))
        if not seg.deps:
            seg.deps = below
        elif not below <= seg.deps:
            seg.deps = seg.deps | below
        via = _merge_entries(ts)
        out = storage if storage is not None else seg
        if keeps is not None:
            self.keep(seg, _kept(keeps, [t for t, _ in ts], out), st)
        if len(ts) == 1:  # (one input: its weak and maybe segments are the result's)
            weak, maybe = ts[0][0].weak, ts[0][0].maybe
        else:
            weak = frozenset().union(*(t.weak for t, _ in ts))
            if weak:  # held for sure by one input: walked for sure
                weak -= frozenset().union(*(t.segs - t.weak for t, _ in ts))
            maybe = _NONE_MAYBE
            for t, _ in ts:
                if t.maybe:  # (likewise; rare: a branch cut a graph)
                    maybe = frozenset().union(*(t.maybe for t, _ in ts)) - frozenset().union(*(t.segs - t.maybe for t, _ in ts))
                    break
        return Tensor(grad if st.grad else MAYBE, False, below | {seg}, roots, via,
                      all(t.exact for t, _ in ts), weak, storage=out, maybe=maybe, strided=strided, cpu=cpu)

    def keep(self, seg: Seg, kept: frozenset, st: State) -> None:
        """``seg`` (run now) saved the tensors held in ``kept``."""
        info = st.freed.get(seg)
        if info is not None and info.inplace is not None:
            del st.freed[seg]  # run again: what it saved now is what it finds
        seg.kept = kept
        for storage in kept:
            self.savers.setdefault(storage, set()).add(seg)

    def modified(self, storage, node, st: State, expr=None, maker=None, written=None) -> None:
        """The memory ``storage`` is written in place at ``node`` (version counter bumped, with
        grad recording on or off): every segment that saved it and is still to be walked fails.
        ``written``: the tensor written, when known."""
        if storage is None or self.mutation_allowed:
            return
        ctx = self.frame.ctx
        for seg in self.savers.get(storage, ()):
            # (not the op's own segment: an in-place op saves what it wrote; a container's
            # layers share its call site, each in a context of its own)
            if seg not in st.freed and storage in seg.kept and not (seg.site is node and seg.ctx == ctx):
                st.freed[seg] = FreeInfo(node, self.frame.module.path, expr, inplace=self.stmt, maker=maker)
        made = storage.current if type(storage) is Seg and storage.old else storage
        if type(written) is Tensor and type(made) is Seg and made in made.kept:
            # the output of an op that saved it, made in a loop that has ended since: its segment
            # aged at the loop's back edge, and is the one that saved this very tensor
            for seg in written.segs:
                if seg.old and seg.current is made and seg not in st.freed:
                    st.freed[seg] = FreeInfo(node, self.frame.module.path, expr, inplace=self.stmt, maker=maker)

    def grads_filled(self, ts, segs, st: State) -> None:
        """A backward over ``ts`` walked ``segs``: the parameters they reach hold a ``.grad`` now.
        Where a tensor went through code the analysis did not follow, any parameter may."""
        heap = st.own_heap()
        if not all(t.exact for t in ts):
            heap[GRADS_FILLED] = FILLED
            for key in [k for k in heap if type(k) is tuple and k[0] == GRAD_GONE]:
                del heap[key]  # (any parameter may hold a .grad again)
        for root in frozenset().union(*(s.roots for s in segs), *(t.roots for t in ts)):
            heap[(GRAD_OF, root)] = FILLED

    def grads_gone(self, roots, st: State) -> None:
        """``zero_grad()`` (``set_to_none``, torch's default) or ``p.grad = None``: optimizers
        skip these parameters until a backward fills their ``.grad`` again (a backward of
        unknown reach run before this left none there)."""
        heap = st.heap
        if not roots or all((GRAD_OF, root) not in heap and (GRAD_GONE, root) in heap for root in roots):
            return
        heap = st.own_heap()
        for root in roots:
            heap.pop((GRAD_OF, root), None)
            heap[(GRAD_GONE, root)] = FILLED

    def has_grad(self, root, st: State) -> bool:
        heap = st.heap
        return self.entry or (GRAD_OF, root) in heap or GRADS_FILLED in heap and (GRAD_GONE, root) not in heap

    def new_seg(self, site, saves, roots) -> Seg:
        key = (site, self.frame.ctx, None)
        seg = self.segs.get(key)
        if seg is None:
            stmt, path = self.naming_statement()
            seg = Seg(site, self.frame.ctx, None, saves, path, stmt, roots, len(self.segs), len(self.segs))
            self.segs[key] = seg
        elif roots - seg.roots:
            seg.roots = seg.roots | roots
        self.clock += 1
        seg.born = self.clock
        self.created[-1].add(seg)
        return seg

    def naming_statement(self):
        """The statement a user would name the value by: this one if it assigns, else the
        nearest call site up the stack that does (``h = cell(x, h)`` for ``return tanh(...)``)."""
        stmt, path = self.stmt, self.frame.module.path
        if isinstance(stmt, _ASSIGNS):
            return stmt, path
        for frame in reversed(self.frames):
            if frame.caller is None:
                break
            if isinstance(frame.caller[0], _ASSIGNS):
                return frame.caller
        return stmt, path

    def enter(self, v: Val, node) -> Val:
        """An argument passed by name into a user function: remember where its graph entered."""
        if type(node) not in (ast.Name, ast.Attribute):
            return v
        if type(v) is Tup:
            return v.like(self.enter(item, node) for item in v.items)
        if type(v) is Tensor and v.segs:
            missing = [s for s in v.segs if s not in v.via]
            if missing:
                via = dict(v.via)
                via.update((s, node) for s in missing)
                return v.but(via=via)
        return v

    def release_segs(self) -> None:
        """Break the cycles among this analysis' segments (an old segment and its current one,
        an alias and its base, a segment and the graph below it), so that reference counting
        frees them, and the syntax trees they point into, once the analysis is dropped: a full
        collector pass over everything the run keeps would cost far more."""
        for seg in self.segs.values():
            seg.current = seg.base = None
            seg.deps = seg.kept = frozenset()
        self.segs.clear()
        self.aliases.clear()
        self.savers.clear()

    def old_of(self, seg: Seg, loop, older=False, part=None) -> Seg:
        """The aged copy of ``seg`` at the back edge of ``loop``: one for every earlier run, or
        (``part``: the pass of a loop unrolled item by item) the one of that pass."""
        key = (seg.site, seg.ctx, loop, older, part)
        old = self.segs.get(key)
        if old is None:
            old = Seg(seg.site, seg.ctx, loop, seg.saves, seg.path, seg.stmt, seg.roots, seg.order, len(self.segs))
            old.current = seg.current or seg
            old.direct = seg.direct
            old.older = older
            self.segs[key] = old
        # what an earlier iteration's node saved of memory that outlives the iteration (a tensor
        # written row by row, the weights) is spoilt by a write in a later one; its own output
        # is made anew each iteration (the same site), so it is not shared, nor is the output of
        # another op of the same iteration
        made_now = self.created[-1]
        lasting = frozenset(k for k in seg.kept if k is not seg and k is not old.current and k not in made_now) \
            if seg.kept and not seg.kept <= old.kept else frozenset()
        if lasting - old.kept:
            old.kept = old.kept | lasting
            for storage in lasting:
                self.savers.setdefault(storage, set()).add(old)
        return old

    def alias_of(self, base: Seg, key) -> Seg:
        """The segment for the part of ``base`` held by one element of a container, read by a
        key that names the same element at every read (see ``Engine.keyed``)."""
        index = ("alias", base, key)
        alias = self.segs.get(index)
        if alias is None:
            alias = Seg(base.site, base.ctx, base.old, base.saves, base.path, base.stmt, base.roots, base.order,
                        len(self.segs))
            for name in ("current", "direct", "deps", "kept", "born", "older"):
                setattr(alias, name, getattr(base, name))
            alias.base, alias.key = base, key
            self.segs[index] = alias
            self.aliases.setdefault(base, []).append(alias)
        return alias

    def backward(self, node, spec, target: Val, args, kwargs, st) -> Val:
        if UNBOUND not in kwargs and not set(kwargs).issubset(spec["parameters"]):
            self.killed = True  # a keyword it does not take: a TypeError, before anything runs
            return NONE
        retain = _flag(args, kwargs, api.RETAIN_GRAPH, spec["retain_pos"])
        create = _flag(args, kwargs, api.CREATE_GRAPH, spec["create_pos"])
        if retain is None:  # retain_graph defaults to create_graph, which defaults to False
            retain = create if create is not None else False
        ts = list(tensors_in(target))
        if type(target) in (Box, Iter):
            ts = list(tensors_in(self.iter_elem(target, st, node)))
        pos, keyword = spec["gradient"]
        given = kwargs.get(keyword, args[pos] if len(args) > pos else None)
        if given is None or given[0] == NONE:  # torch seeds the outputs with ones
            self.emit("implicit_gradient", node, st, tuple(ts), target=_outputs_node(node, spec), detail=keyword)
            if self.killed:
                return NONE
        self.emit("backward", node, st, tuple(self.as_now(t, st) for t in ts), target=_outputs_node(node, spec),
                  detail=spec.get("returns") or "backward")
        if self.killed:
            return NONE
        if _holds_unknown(target) or (type(target) in (Box, Iter) and not ts):
            self.walk_unknown()  # ``torch.autograd.backward(inputs, grads)`` of values not followed
        segs = frozenset().union(*(t.segs for t in ts)) if ts else frozenset()
        everything, held_weakly = segs, frozenset().union(*(t.weak for t in ts)) if ts else frozenset()
        walked = self.walked(segs, args, kwargs, spec, st)
        if walked is not None:  # gradients asked for some inputs only: the rest is not run
            segs = walked
            ts = [t.but(segs=t.segs & walked, weak=t.weak & walked) for t in ts]
        self.walk(segs)  # (a walk that raises is a walk too: what a retain kept was needed)
        if spec.get("returns") != "grads":  # backward() fills .grad (autograd.grad does not)
            self.grads_filled(ts, segs, st)
        hits = [s for s in segs if s in st.freed]
        freed = [s for s in hits if st.freed[s].inplace is None]
        # what a backward over the values walks on every path (not what a branch may have cut)
        sure = frozenset().union(*(t.segs - t.maybe for t in ts)) if hits else frozenset()
        if freed and held_weakly:
            # an element read out of a container by an index not pinned: its graph is one of
            # the elements', surely walked only if every one of them is freed
            weak_only = held_weakly - frozenset().union(*(t.segs - t.weak - t.maybe for t in ts))
            if any(s not in st.freed for s in weak_only):
                sure -= weak_only
        # torch's engine runs the nodes nearest the outputs first: a hit built on another is
        # met before it, and of the rest the latest made; the first hit it meets, freed or
        # overwritten, is the error it raises
        # (only a node that saved tensors raises: one that saved none runs again)
        first = max(_topmost([s for s in hits if s.saves is not False or st.freed[s].inplace is not None] or hits),
                    key=_made) if freed and len(freed) < len(hits) else None
        if freed and (first is None or st.freed[first].inplace is None):
            self.reuse(node, ts, freed, st, not sure.isdisjoint(freed))
        elif hits:  # graph whose saved tensors were overwritten in place since
            spoilt = sorted((s for s in hits if st.freed[s].inplace is not None), key=lambda s: (s.order, s.uid))
            info, main = st.freed[spoilt[0]], self.main.path
            places = (("modified", info.call), ("modified_stmt", info.inplace), ("modified_expr", info.via)) \
                if info.path == main else ()
            places += tuple(("saved", s.site) for s in spoilt[:2] if s.path == main)
            if info.maker is not None and info.maker[1] == main:  # the in-place layer's constructor
                places += (("modified_layer", info.maker[0]),)
            if spoilt[0].site in self.saved_reads and spoilt[0].path == main:
                places += (("raises_at", self.saved_reads[spoilt[0].site]),)
            # the other writes it walks into (a second optimizer's step): a fix must move them all
            others = {id(i.inplace): i.inplace for i in (st.freed[s] for s in spoilt)
                      if i.path == main and i.via is None and i.inplace is not info.inplace}
            places += tuple(("also_modified_stmt", stmt) for stmt in others.values())
            # and the other writes through a name (``Z += K`` and ``S += ...``): a fix must rewrite them all
            written = {id(i.inplace): i.inplace for i in (st.freed[s] for s in spoilt)
                       if i.path == main and i.via is not None and i.inplace is not info.inplace}
            places += tuple(("also_written_stmt", stmt) for stmt in written.values())
            if sure.isdisjoint(spoilt):  # walked on some paths only: a maybe
                places += (("branched", None),)
            elif held_weakly.issuperset(spoilt):  # in the graph of some element, maybe not this one's
                places += (("several", None),)
            elif not frozenset().union(*(t.segs - t.weak - t.maybe for t in ts)).isdisjoint(spoilt):
                # held for sure through resolved code (``F = C + unknown + lamb * G``: G's graph is
                # walked whatever the unknown part is)
                places += (("held", None),)
            self.emit("modified_saved", node, st, tuple(ts), target=_outputs_node(node, spec),
                      detail=spec.get("returns") or "backward", places=places)
            if self.killed:
                return NONE
        # (a call that raises keeps nothing; one in a comprehension keeps it for the next element's)
        if retain is True and not self.killed and not self.comprehending:
            self.emit("retained", node, st, tuple(ts), target=_outputs_node(node, spec),
                      detail=spec.get("returns") or "backward")
        if self.reporting and self.collect_facts:
            fact = self.backward_facts.get(id(node))
            merged = segs | fact[2] if fact else segs
            self.backward_facts[id(node)] = (node, self.frame.module, merged, retain is True)
        if retain is False:
            for t in ts:
                for s in t.segs:
                    info = FreeInfo(node, self.frame.module.path, t.via.get(s))
                    if s in t.weak or s in t.maybe:
                        if s not in st.freed:
                            st.wfreed[s] = info
                    else:
                        st.freed[s] = info
                        if s.base is not None and s.base not in st.freed:  # one element's part of it
                            st.wfreed[s.base] = info
        if spec.get("returns") != "grads":
            return NONE
        if create is True:
            # the gradients carry a graph that depends on the one walked and, through the saved
            # values of the ops it differentiated, on the inputs' own graph (an interpolate's
            # generator): all of the outputs' graph
            seg = self.new_seg(node, True, frozenset().union(*(t.roots for t in ts)) if ts else frozenset())
            grad = Tensor(YES, False, everything | {seg}, seg.roots, {}, all(t.exact for t in ts), held_weakly)
        elif create is False or create is None:  # plain gradients: no graph, never requiring grad
            grad = Tensor(NEVER, why=frozenset({("no_create_graph", node)}))
        else:
            grad = Tensor()
        inputs = args[spec["inputs_pos"]][0] if len(args) > spec["inputs_pos"] else \
            kwargs.get(api.INPUTS, (UNKNOWN, None))[0]
        if type(inputs) is Tup:
            return Tup(grad for _ in inputs.items)
        if type(inputs) is Tensor:
            return Tup((grad,))
        return Iter(grad)

    def walked(self, segs, args, kwargs, spec, st) -> Optional[frozenset]:
        """With ``inputs``, the segments on a path from the outputs down to an input: built
        from that input's own leaf, or from a value carrying all of the input's graph. None
        when every segment is walked (no inputs given); empty when the inputs are unknown."""
        pos = spec.get("inputs_pos")
        if api.INPUTS in kwargs:
            inputs = kwargs[api.INPUTS][0]
        elif pos is not None and len(args) > pos:
            inputs = args[pos][0]
        else:
            return None
        if type(inputs) in (Box, Iter):
            inputs = self.iter_elem(inputs, st, None)
        xs = [x for x in tensors_in(inputs)]
        if not xs:
            return frozenset()  # nothing known is asked for: nothing known is walked
        below = frozenset().union(*(x.segs for x in xs))
        return frozenset(s for s in segs if s not in below and any(
            (x.roots & s.roots) if x.leaf else (x.segs and x.segs <= s.deps) for x in xs))

    def reuse(self, node, ts, hits, st, sure=True) -> None:
        """A backward reaches the freed segments ``hits`` (``sure``: on every path, for one of
        them at least): the rules of ``walk_freed`` tell what."""
        walk = Walk({h: st.freed[h] for h in hits}, st.globals if st.locals is None else st.locals, st.heap,
                    self.frame.module, sure and all(t.exact for t in ts))
        self.emit("walk_freed", node, st, tuple(ts), cause=walk, anywhere=True)

    def walk(self, segs) -> None:
        """A backward walks ``segs``: withdraw the reports that held only while it did not."""
        if segs - self.walked_segs:
            # a walk of a site's graph from an enclosing loop's earlier pass walks that site's
            # graph too (a total summed in an inner loop, walked once the outer loop is done)
            segs = segs | frozenset(s.current for s in segs if s.current is not None)
            self.walked_segs |= segs
            for key, (report, _) in list(self.reports.items()):
                if report.unless_walked & segs:
                    del self.reports[key]
                    self.withdrawn.add(key)
        for key, borns in list(self.pending.items()):
            if any(borns.get(s) == s.born or (s.old is not None and s.current in borns) for s in segs):
                del self.pending[key]
                self.reports.pop(key, None)
                self.withdrawn.add(key)

    def walk_unknown(self) -> None:
        """A backward over values the analysis did not follow may walk any graph: the reports that
        held only while no backward walked theirs are withdrawn."""
        for key, (report, _) in list(self.reports.items()):
            if report.unless_walked or key in self.pending:
                del self.reports[key]
                self.pending.pop(key, None)
                self.withdrawn.add(key)

    # ----------------------------------------------------------------- rule events
    def emit(self, event: str, node, st: State, tensors=(), target=None, detail: str = "", places=(),
             roots=frozenset(), cause=None, anywhere: bool = False) -> None:
        """Tell the rules that handle ``event`` what happened at ``node``: in the analysed file
        (findings are the analysed file's), or ``anywhere`` (then even where nothing is reported,
        a raising rule's exact finding ends the path). A raising rule's exact finding ends it."""
        rules = SUBSCRIBERS.get(event)
        if not rules or (not anywhere and (not self.reporting or self.frame.module is not self.main)):
            return
        scope = self.frame.func.node if isinstance(self.frame.func, Func) else self.frame.module.tree
        ev = Event(node, tuple(tensors), st.grad, not self.entry, target, detail, self.stmt, scope, places,
                   frozenset(roots), st.own_heap(), cause,  # (rules may keep facts in it)
                   self.entry and not self.entry_trains and st.grad is True)
        for rule in rules:
            report = rule.events[event](ev)
            if report is None:
                continue
            ends = rule.raises and report.exact
            key = (id(report.node), report.code)  # one per place
            prior = self.reports.get(key)
            if not (not self.reporting or key in self.withdrawn or report.unless_walked & self.walked_segs
                    or (rule.first_stands and prior is not None and not (report.exact and not prior[0].exact))):
                self.reports[key] = (report, self.frame.module)
                if report.unless_walked_later:
                    self.pending[key] = {s: s.born for s in report.unless_walked_later}
                elif rule.raises and not self.tentative and not report.unless_walked:
                    self.sure[key] = self.reports[key]
            if ends:
                self.killed = True
                return

    def filled(self, base: Tensor, values, st: State) -> None:
        """``base`` is written in place with ``values``: with grad recording on, a value that
        may require grad makes ``base`` require grad too, wherever else it is held."""
        if base.grad == NEVER and st.grad is not False and any(
                (v.grad != NEVER if type(v) is Tensor else _holds_unknown(v)) for v in values):
            self.doubt(base)

    def doubt(self, t: Tensor) -> None:
        """``t`` may require grad from now on wherever else it is held, and so may what is
        computed from it: a tensor without grad is surely so no longer, but one computed with
        grad recording off in other memory."""
        if t.storage is None:
            self.doubt_never = True
        elif self.doubt_never is not True:
            self.doubt_never = (self.doubt_never or frozenset()) | {t.storage}

    def as_now(self, t: Tensor, st: State) -> Tensor:
        """The tensor as autograd sees it now: frozen parameters no longer require grad."""
        if t.leaf and t.roots and all((r, "frozen") in st.heap for r in t.roots):
            return Tensor(exact=t.exact, shape=t.shape)
        if t.grad == NEVER and self.doubt_never and not (
                # computed with grad recording off: what its inputs became does not reach it,
                # only a requires_grad_() of its own memory does
                t.why and all(r[0] == "grad_off" for r in t.why) and t.storage is not None
                and self.doubt_never is not True and t.storage not in self.doubt_never):
            return t.but(grad=NO, why=frozenset())
        return t

    def converted(self, args, st: State, tensors: bool) -> tuple:
        """The tensors a NumPy function converts: those of its list arguments, and its tensor
        arguments if ``tensors``."""
        out = []
        for v, _ in args:
            if type(v) is Box:
                out.extend(tensors_in(st.heap.get((v.oid, "*"), UNKNOWN)))
            elif type(v) is Tup or (tensors and type(v) is Tensor):
                out.extend(tensors_in(v))
        return tuple(out)

    def note_tensor(self, node, value, st) -> None:
        if not self.reporting or type(value) is not Tensor:
            return
        freed = {s: st.freed[s] for s in value.segs if s in st.freed}
        prior = self.tensor_facts.get(id(node))
        if prior is not None:
            value = join(prior[2], value)
            freed = {s: fi for s, fi in freed.items() if s in prior[3]}  # freed on every visit
        self.tensor_facts[id(node)] = (node, self.frame.module, value, freed)


def _flag(args, kwargs, name, pos):
    """A boolean argument's value: True/False, or None when absent or not a constant."""
    if name in kwargs:
        v = kwargs[name][0]
    elif pos is not None and len(args) > pos:
        v = args[pos][0]
    elif UNBOUND in kwargs:  # ``f(**options)`` of keywords the analysis cannot name: may hold it
        return "unknown"
    else:
        return None
    if type(v) is Const and (v.value is None or isinstance(v.value, bool)):
        return bool(v.value)
    return "unknown"  # not a literal: neither frees nor retains for certain

_ASSIGNS = (ast.Assign, ast.AnnAssign, ast.AugAssign)

def _merge_entries(ts) -> dict:
    """The ``via`` map of an op's result: each input's entries, and the input's own name for
    segments that had none. Dicts are shared, never changed once built."""
    via, owned = None, False
    for t, n in ts:
        if via is None:
            via = t.via
        elif t.via is not via:
            missing = t.via.keys() - via.keys()
            if missing:
                if not owned:
                    via, owned = dict(via), True
                for s in missing:
                    via[s] = t.via[s]
        if n is not None and type(n) in (ast.Name, ast.Attribute):
            unnamed = t.segs - via.keys()
            if unnamed:
                if not owned:
                    via, owned = dict(via), True
                via.update(dict.fromkeys(unnamed, n))
    return via

_NONE_MAYBE: frozenset = frozenset()

# values that are certainly not tensors: an op's other arguments of these kinds hide no graph
_NOT_TENSORS = (Const, Number, After, LibRef, Builtin, Func, Class, ModRef, GradCtx, Layer, Optim)

def _made(seg: Seg) -> tuple:
    """When the op last ran (a loop's earlier runs: when its current one did), for torch's
    sequence numbers."""
    return ((seg.current or seg).born, seg.order, seg.uid)


def _topmost(hits: list) -> list:
    """The hits that no other hit is built on (a loop's runs of a site stand for the current
    run's: the graph below it), unless they are built on each other (a recurrence)."""
    def below(a, b):
        return a in b.deps or (a.current or a) in (b.current or b).deps

    top = [h for h in hits if not any(o is not h and below(h, o) and not below(o, h) for o in hits)]
    return top or hits


def _holds_unknown(v: Val) -> bool:
    if type(v) is Tup:
        return any(_holds_unknown(x) for x in v.items)
    return type(v) is not Tensor and type(v) not in _NOT_TENSORS

def _kept(keeps: str, ts: list, out) -> frozenset:
    """The storages an op's node saves, for its kind (``torch_api.KEEPS_*``), as far as sure."""
    if keeps == "result":
        return frozenset({out})
    if keeps == "self":
        return frozenset({ts[0].storage}) if ts and ts[0].storage is not None else frozenset()
    if keeps == "self_result":
        return frozenset({out} | ({ts[0].storage} if ts and ts[0].storage is not None else set()))
    if keeps == "both" and len(ts) >= 2:  # both operands, whatever requires grad (a convolution)
        return frozenset(x.storage for x in ts[:2] if x.storage is not None)
    if keeps == "each_other" and len(ts) >= 2:  # each operand is saved for the other's gradient
        a, b = ts[0], ts[1]
        return frozenset(x.storage for x, other in ((a, b), (b, a))
                         if other.grad == YES and x.storage is not None)
    return frozenset()


def _outputs_node(call, spec):
    """The expression of the outputs a backward call walks from: ``loss`` in ``loss.backward()``
    and in ``torch.autograd.grad(loss, …)``."""
    if not isinstance(call, ast.Call):
        return None
    if spec["tensors"] is None:
        return call.func.value if isinstance(call.func, ast.Attribute) else None
    if len(call.args) > spec["tensors"] and not isinstance(call.args[spec["tensors"]], ast.Starred):
        return call.args[spec["tensors"]]
    return next((k.value for k in call.keywords if k.arg == spec.get("tensors_kw")), None)
