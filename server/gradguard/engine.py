"""The abstract interpreter: one visitor that walks the code, statement by statement, carrying
an abstract :class:`State`, the way pyflakes' checker walks it carrying scopes.

- Branches are analysed on copies of the state and joined.
- Loops run to a fixpoint; the state at the head of the second and later iterations is the
  *aged* join of the back edges (see ``values``), so the second iteration -- where most of these
  bugs fire -- is analysed on its own. Loops are assumed to run at least twice.
- User functions and methods are analysed at each call site with the actual abstract
  arguments (context-sensitive inlining, bounded in depth); generators are re-run at every step
  of the loop that consumes them.
- What the torch API does comes only from ``torch_api``; anything unresolved becomes UNKNOWN or
  an inexact tensor, which never yields an error-severity finding.

Three parts, one per concern: this module knows Python (statements, expressions, calls, user
functions and classes); ``torch_model.TorchModel`` turns calls into torch into ops, leaves,
layers and steps, reading ``torch_api``; ``autograd.Autograd`` keeps the autograd state
(segments, what their nodes keep, freed and spoilt graphs) and tells the rules what happened.
``Engine`` is the three together; the parts call each other through it.

The engine never imports or executes the analysed code.
"""
from __future__ import annotations

import ast
import itertools
import re
import builtins
import operator
from itertools import compress
from operator import is_not
from typing import Optional

from . import shapes
from . import torch_api as api
from .autograd import Autograd
from .invariants import settled_names, written_attributes
from .reach import calls_backward
from .skeleton import LazyBody
from .sources import SourceError
from .state import (GLOBALS, UNBOUND, Ager, State, forget_items, has_key, join_states, note_keys, retarget,
                    surely_not_empty)
from .torch_model import _DICT_CLASSES, READS_ITS_ARGUMENTS, TorchModel, in_place_key, is_torch, sizes_of
from .values import (INDEX, LAYER_BASE, MAYBE, MUTATION_ALLOWED, NEVER, NO, NONE, NUMBER, UNKNOWN, YES, After, Alt, Bound, Box, Builtin, Class, Const, Func,
                     GradCtx, Iter, Layer, ModRef, Number, Obj, Optim, Seg, Super, Tensor, LibRef, Partial, Tup, TupleType, Unknown,
                     Val, join, join_elements, merge_via, strong, tensors_in, truth)

MAX_LOOP_PASSES = 6
MAX_CALL_DEPTH = 12
# A function may run inside itself this many times (``repackage_hidden`` recurses once into the
# tuple it was given); deeper, its result is unknown.
MAX_RECURSION = 3
OPTIM_BASE = "$optim"  # the heap slot of the optimizer a project's optimizer class is built on
GRAD_SCALER = "grad_scaler"  # the kind of the box an AMP loss scaler is
BUILT = "$built"  # the heap slot saying an object's __init__ ran to its end, every attribute it set seen
_PLAIN_MODULE = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})
MAX_UNROLLED = 64  # loops over a model's known submodules unroll, up to this many
MAX_UNROLLED_RANGE = 4  # ``range(n)`` of a known n up to this unrolls: each pass knows its i
MAX_UNROLLED_KEYS = 16  # loops over a dict whose keys are all known, up to this many, unroll
MAX_UNROLLED_BLOCKS = 8  # loops over a ModuleList's blocks, up to this many (each runs a forward)
TENSOR_TYPE = LibRef("torch.Tensor")  # ``type(t)`` of a tensor: some tensor class
MAX_SUBMODULE_DEPTH = 6
# call sites that tell an op's segments and storages apart: a model called twice from the
# training loop (``net(x)``, ``net(x2)``) runs its layers' in-place ops four calls deep
CONTEXT_DEPTH = 4
# plain objects made of their keywords, read by attribute
NAMESPACES = frozenset({"types.SimpleNamespace", "argparse.Namespace"})
# double-ended queues: lists, as far as the tensors they hold go (appendleft, popleft, maxlen)
DEQUES = frozenset({"collections.deque"})
# Budgets, in abstract steps (statements and calls) executed. Past its budget a call is
# abandoned and its result is unknown (as if it were an unresolved library call); past the
# file's budget the rest of the file is. Unknown never yields an error-severity finding, so a
# budget costs recall, not truth. (What the raising rules found before the cut, outside a loop's
# tentative fixpoint passes, stands: the code up to there ran as analysed.)
FILE_BUDGET = 10_000
CALL_BUDGET = 1_000
# A call from a module's top level (``main()``, ``train(args)``) is the program: it has this many
# calls' budgets (the whole file's would cost a quarter more time over the corpus for little more)
TOP_LEVEL_CALLS = 4
CANCEL_EVERY = 256  # steps between two looks at the cancel callback (some 2 ms)
# Evaluations one inside another (``ev``, ``exec``, ``iter_elem``): past this, an expression's
# value is unknown and a statement abandons its call, as over budget. Counted, in both builds
# alike: compiled calls use the C stack, which Python's recursion limit does not guard, and a
# bound well under that limit keeps the pure build from ever meeting it (a unit is at most a
# few Python frames).
MAX_NESTING = 500
_nesting_left = MAX_NESTING  # a C int in the compiled build (engine.pxd)

try:
    import cython
    COMPILED = cython.compiled  # True only in the module Cython compiled (setup.py)
except ImportError:
    COMPILED = False


# The .grad of a tensor that is certainly not a leaf (and not retained): None. Only this value,
# not every None the analysis meets, is known for sure to make arithmetic and attributes raise.
UNFILLED_GRAD = Const(None)


class OverBudget(Exception):
    """The innermost budget in force ran out; whoever set it abandons its work."""


class Cancelled(Exception):
    """The caller asked the analysis to stop (a newer version of the document arrived)."""

PYTHON_BUILTINS = frozenset(dir(builtins))
# what IPython binds in a notebook besides Python's builtins
NOTEBOOK_NAMES = frozenset({"display", "get_ipython", "In", "Out", "exit", "quit"})
# code that may bind module names the analysis does not see being bound
_BINDS_UNSEEN = ("import *", "globals()", "exec(", "locals()", "__builtins__", "builtins.", "setattr(sys.modules",
                 "vars()")
BUILTINS = frozenset({
    "range", "len", "enumerate", "zip", "list", "tuple", "dict", "set", "sorted", "reversed",
    "iter", "next", "sum", "min", "max", "abs", "float", "int", "str", "bool", "print",
    "isinstance", "hasattr", "getattr", "setattr", "super", "open", "round", "type", "map",
    "filter", "repr", "format", "any", "all", "id", "hash", "vars", "dir", "object", "staticmethod",
})


# Builtins whose result depends on how many arguments they get (given ``*xs``, unknown).
_COUNTS_ARGUMENTS = frozenset({"zip", "map", "min", "max", "range", "enumerate", "sum", "isinstance", "hasattr",
                               "getattr", "type", "all", "any", "sorted", "reversed", "iter", "next", "len",
                               "list", "tuple", "set", "dict", "filter", "round", "abs", "int", "float"})


# Each run of a frame and each pass of a loop body has a serial of its own: tests correlated
# within one pass (``pass_flag``) are told apart from the same tests in another pass
_SERIALS = itertools.count()


class Frame:
    __slots__ = ("func", "module", "ctx", "returns", "loops", "caller", "elements", "declared", "truncated", "serial")

    def __init__(self, func, module, ctx, caller=None, truncated=False):
        self.func, self.module, self.ctx = func, module, ctx
        self.serial = next(_SERIALS)
        # ``ctx`` lost its outermost calls (nested deeper than CONTEXT_DEPTH): calls from two
        # places above may share it
        self.truncated = truncated
        self.caller = caller  # (statement, path) of the call that made this frame
        self.returns: list = []
        self.loops: list = []
        self.elements: dict = {}  # loop variable -> the list whose elements it walks (``for p in ps``)
        self.declared: set = set()  # names declared ``global`` here


class LoopCtx:
    __slots__ = ("breaks", "continues", "node", "unrolled", "made", "part", "bound", "folded", "serial")

    def __init__(self, node=None, unrolled=False, bound=frozenset()):
        self.bound = bound  # the names bound (on some path) when the loop starts
        self.breaks: list = []
        self.continues: list = []
        self.node = node  # the loop statement
        self.unrolled = unrolled  # one pass per known item, not a fixpoint
        self.made: set = set()  # the containers allocated in this pass over the body
        self.part = None  # the pass of an unrolled loop running now
        self.folded = False  # an ordering of constants was decided in a pass (``step > warmup``)
        self.serial = next(_SERIALS)  # of the pass running now


class Engine(TorchModel, Autograd):
    """The interpreter: Python semantics here, torch and autograd from its two mixins."""

    # the mixins' attributes too (they declare none): read at every step, slots are cheaper than a dict
    __slots__ = ("project", "segs", "aliases", "reporting", "reports", "entry", "entry_trains", "tensor_facts",
                 "backward_facts", "called", "created", "frame", "frames", "stmt", "killed",
                 "doubt_never", "grad_off", "savers", "walked_segs", "clock", "pending",
                 "withdrawn", "executed", "collect_facts", "limit", "truncated", "cancel",
                 "next_look", "main", "summaries", "several", "several_roots", "trained", "allocated", "flag_vars",
                 "repeated_tests", "pass_tests", "pass_records",
                 "written_memo", "made_roots", "costly", "comprehending", "alternatives", "inference",
                 "mutation_allowed", "saving", "saved_reads", "tentative", "sure", "default_device")

    def __init__(self, project):
        self.project = project
        self.segs: dict = {}
        self.aliases: dict = {}  # Seg -> the keyed-read aliases of it (Autograd.alias_of)
        self.reporting = True
        self.reports: dict = {}  # (id(node), code) -> (rules.Report, module): the event rules' findings
        self.entry = False  # analysing a function nothing called, with unknown arguments
        self.entry_trains = False  # ... whose own text calls a backward (so it runs with grad on)
        self.tensor_facts: dict = {}  # id(Name node) -> (node, module, Tensor, {Seg: FreeInfo})
        self.backward_facts: dict = {}  # id(call) -> (node, module, segs, retains)
        self.called: set = set()
        self.created: list = [set()]
        self.frame: Optional[Frame] = None
        self.frames: list = []
        self.stmt: Optional[ast.stmt] = None
        self.killed = False
        # where a factory given no device puts its tensor: the CPU, until the program sets
        # another default (``torch.set_default_device``, ``with torch.device("cuda"):``)
        self.default_device = "cpu"
        # a tensor seen as NEVER requiring grad may have been made to (in place, through an
        # alias: a buffer filled with a graph, requires_grad_() on a list's elements): from
        # then on NEVER is not trusted for that memory (a frozenset of them), or for any (True)
        self.doubt_never = False
        self.grad_off: list = []  # the with-items / decorators that turned grad recording off
        self.savers: dict = {}  # Tensor.storage -> the segments that saved a tensor held there
        self.walked_segs: set = set()  # every segment some backward walked
        self.clock = 0  # counts op runs (Seg.born)
        self.pending: dict = {}  # report key -> {seg: born} a later walk withdraws it by
        self.withdrawn: set = set()  # report keys withdrawn: not made again
        # loop passes run now whose reports hold only if the pass turns out to be the last
        self.tentative = 0
        # what the raising rules reported outside such passes: it stands when work is abandoned
        self.sure: dict = {}
        self.executed = 0
        self.collect_facts = True  # hover facts cost time; the CLI does not need them
        self.limit = FILE_BUDGET  # the innermost budget in force: a count of ``executed``
        self.truncated: list = []  # (node, module path) of work abandoned over budget
        self.cancel = None  # a callable: True when the analysis is no longer wanted
        self.next_look = CANCEL_EVERY  # when ``cancel`` is asked next
        self.main = None  # the analysed module (its syntax tree is not kept after the analysis)
        self.summaries: set = set()  # segments built by comprehensions: one per element
        self.several: set = set()  # segments read through one of several containers (``_some``)
        self.several_roots: set = set()  # parameters of modules that stand for several (``unpack``)
        self.comprehending = 0  # comprehension steps being run (one step stands for every element)
        self.alternatives = 0  # ``each``: an alternative being run (one of several objects, maybe not this one)
        self.inference = 0  # ``torch.inference_mode()`` blocks being run
        # ``allow_mutation_on_saved_tensors()`` blocks being run: torch keeps a copy of a saved
        # tensor written in place there, so the write spoils no backward
        self.mutation_allowed = 0
        # the storages a custom autograd function's forward hands to ``ctx.save_for_backward``
        # (while it runs), and for each such function's node, where its backward reads them
        # back: torch checks their versions there, so an in-place write since raises there
        self.saving: Optional[set] = None
        self.saved_reads: dict = {}
        self.trained: set = set()  # roots an optimizer updates
        self.allocated: set = set()  # allocation sites seen, whose heap entries may need reset
        self.flag_vars: dict = {}  # settled flag -> what its tests' branches left different
        self.repeated_tests: dict = {}  # id(scope) -> ({id(if node): test text}, [(line, name stored)])
        self.pass_tests: dict = {}  # pass flag -> the ``if`` that tested it first in its pass
        self.pass_records: dict = {}  # pass flag -> {variable: (then, else, joined)} (``assume``)
        self.written_memo: dict = {}  # (attribute, modules loaded) -> ``_written``
        self.made_roots: dict = {}  # (site, context, kind, unrolled passes) -> Root (``new_root``)
        self.costly: dict = {}  # the analysed file's functions abandoned over a budget (``_COSTLY``)

    # ----------------------------------------------------------------- modules
    def run_module(self, module, globals_: dict, budget: Optional[int] = None) -> Optional[State]:
        """A module's top level, statement by statement. Over budget, the statement running is
        abandoned with what it reported, and the module ends with the names bound so far."""
        saved = (self.frame, self.stmt, self.reporting, self.limit)
        depth = (len(self.frames), len(self.created))
        self.frame = Frame(None, module, ())
        self.frames.append(self.frame)
        self.reporting = True
        if budget is not None:
            self.limit = min(self.limit, self.executed + budget)
        st: Optional[State] = State(None, globals_, {}, {}, True)
        for node in module.tree.body:
            reports = dict(self.reports)
            try:
                st = self.exec(node, st)
            except OverBudget:
                self.abandon(depth, reports, node, module)
                break
            if st is None:
                break
        del self.frames[depth[0]:]
        self.frame, self.stmt, self.reporting, self.limit = saved
        return st

    def abandon(self, depth, reports, node, module) -> None:
        """Unwind what a budget cut left half done: frames, loop bookkeeping, reports made
        since (a loop cut before its fixpoint may report what a full analysis would not)."""
        del self.frames[depth[0] + 1:]
        while len(self.created) > depth[1]:
            inner = self.created.pop()
            self.created[-1] |= inner
        # (but what a raising rule reported before the cut, outside a loop's tentative passes,
        # holds: what ran up to there is what torch runs)
        self.reports = {**reports, **{k: v for k, v in self.sure.items() if k not in reports}}
        for key in self.withdrawn & self.reports.keys():
            del self.reports[key]
        self.killed = False
        self.truncated.append((node, module.path))

    def run_entry(self, module, fn: Func, st: State) -> None:
        """Analyse a function nobody called, with unknown arguments."""
        args = []
        owner = fn.owner
        params = fn.node.args.posonlyargs + fn.node.args.args
        saved = (self.frame, self.reporting, self.entry, self.entry_trains)
        self.frame = Frame(None, module, ())
        self.reporting = self.entry = True
        self.entry_trains = calls_backward(module.source_of(fn.node))
        if owner is not None and params and not _is_static(fn.node):
            obj = Obj(("entry", id(owner.node)), owner)
            init = owner.lookup("__init__")
            if isinstance(init, Func) and init is not fn:
                self.invoke(init, [obj], {}, st, fn.node, bound=True, unknown_rest=True)
            args.append(obj)
        self.invoke(fn, args, {}, st, fn.node, bound=bool(args), unknown_rest=True)
        self.frame, self.reporting, self.entry, self.entry_trains = saved

    # ----------------------------------------------------------------- statements
    def block(self, stmts, st: Optional[State]) -> Optional[State]:
        for node in stmts:
            if st is None:
                return None
            st = self.exec(node, st)
        return st

    def exec(self, node: ast.stmt, st: State) -> Optional[State]:
        global _nesting_left
        self.executed += 1
        if self.executed > self.limit or _nesting_left == 0:
            raise OverBudget
        if self.executed >= self.next_look:
            self.next_look = self.executed + CANCEL_EVERY
            if self.cancel is not None and self.cancel():
                raise Cancelled
        prev, self.stmt = self.stmt, node
        handler = _STATEMENTS.get(type(node))
        _nesting_left -= 1
        try:
            out = handler(self, node, st) if handler is not None else st
        finally:
            _nesting_left += 1
        self.stmt = prev
        if self.killed:
            self.killed = False
            return None
        return out

    def s_Expr(self, node, st):
        self.ev(node.value, st)
        return st

    def s_Assign(self, node, st):
        value = self.ev(node.value, st)
        for target in node.targets:
            self.assign(target, value, st)
        return st

    def s_AnnAssign(self, node, st):
        if node.value is not None:
            self.assign(node.target, self.ev(node.value, st), st)
        return st

    def s_AugAssign(self, node, st):
        cur = self.ev(_as_load(node.target), st)
        value = self.ev(node.value, st)
        if type(cur) is Tensor:
            self.emit("in_place", node, st, (self.as_now(cur, st),), detail=type(node.op).__name__)
            if self.killed:
                return st
            self.filled(cur, [value], st)
            self.modified(cur.storage, node, st, node.target, written=cur)
        if type(cur) is Tensor and cur.leaf and cur.grad == YES:
            st.mark_stepped()  # in-place update of a parameter, e.g. manual SGD
            self.trained |= cur.roots
            if cur.storage is None and cur.roots and self.every_parameter(node.target, st):
                for root in cur.roots:  # ``for p in net.parameters(): p -= lr * p.grad``: each of them
                    self.modified(root, node, st)
            self.emit("step", node, st, roots=cur.roots)
        if type(cur) is Tensor and st.grad is False:
            return st  # an in-place update without grad recording: the tensor keeps its graph state
        if type(cur) is Box and cur.kind == "list" and type(node.op) is ast.Add:
            self.extend_list(cur, value, st, node)  # ``xs += ys``: xs itself grows
            return st
        result = self.binop(node, type(node.op).__name__, (cur, node.target), (value, node.value), st)
        if type(cur) is Tensor and type(result) is Tensor:
            result.storage = cur.storage  # x += y writes into x
        self.assign(node.target, result, st)
        return st

    def s_If(self, node, st):
        test = self.ev(node.test, st)
        if self.killed:  # the test itself raises: neither branch runs
            return st
        known = truth(test)
        if known is True:
            return self.block(node.body, st)
        if known is False:
            return self.block(node.orelse, st)
        flag = self.settled_flag(node.test, st) or self.pass_flag(node, st)
        yes = st.copy()
        before = None
        if flag is not None:  # a flag tested before: each branch continues the world it chose
            self.assume(flag[0], yes, flag[1])
            self.assume(flag[0], st, not flag[1])
            if self.frame.loops and flag[0][0] != "pass":
                before = dict(_scope(st))
        then, orelse = self.block(node.body, yes), self.block(node.orelse, st)
        if before is not None and then is not None and orelse is not None:
            self.drop_stale(node, before, then, orelse)
        out = join_states([then, orelse], branches=True)
        if flag is not None and then is not None and orelse is not None:
            self.remember_branches(flag[0], *((then, orelse) if flag[1] else (orelse, then)), out)
        return out

    def drop_stale(self, node: ast.If, before: dict, then: State, orelse: State) -> None:
        """In a loop, ``if cfg.objective == 'H': loss = ... elif cfg.objective == 'B': loss = ...``
        on settled tests: a branch that leaves ``loss`` as it was holds no earlier iteration's
        loss, since every iteration takes the same branch, and in the first one ``loss`` was not
        bound yet (unbound when the loop began, bound in its body only in this ``if``): on that
        path it is unbound, not the last iteration's. Dropped there, the join keeps the value
        the binding branches give (as for a name unbound before the loop)."""
        loop = self.frame.loops[-1]
        root = self.chain_root(loop.node, node, then)
        if root is None:
            return
        a, b = _scope(then), _scope(orelse)
        for kept, bound, where in ((b, a, node.body), (a, b, node.orelse)):
            for name in [n for n, v in bound.items() if n in before and v is not before[n] and kept.get(n) is before[n]]:
                if name not in loop.bound and _binds_only_within(loop.node, root, name):
                    del kept[name]

    def chain_root(self, loop: ast.AST, node: ast.If, st: State) -> Optional[ast.If]:
        """The outermost ``if`` of the ``elif`` chain ``node`` ends, when every test along it is a
        settled one (see ``drop_stale``); else None."""
        parents = _elif_parents(loop)
        root = node
        while id(root) in parents:
            root = parents[id(root)]
            if self.settled_flag(root.test, st) is None:
                return None
        return root

    # ----------------------------------------------------------------- settled flags
    def settled_flag(self, test, st: State):
        """(key, polarity) of a test on a flag that cannot change (``invariants``), else None:
        ``flag``, ``self.flag``, or either compared with a constant (``cfg.mode == "gan"``)."""
        positive = True
        while type(test) is ast.UnaryOp and type(test.op) is ast.Not:
            test, positive = test.operand, not positive
        if type(test) is ast.Compare and len(test.ops) == 1 and type(test.ops[0]) in _SETTLED_COMPARISONS \
                and _constant(test.comparators[0]):
            inner = self.settled_flag(test.left, st)
            if inner is None:
                return None
            op = type(test.ops[0])
            key = (inner[0], _SETTLED_COMPARISONS[op][0], ast.dump(test.comparators[0]))
            return key, positive == _SETTLED_COMPARISONS[op][1]
        if type(test) is ast.Name:
            if st.locals is not None and test.id in st.locals:
                scope, key = getattr(self.frame.func, "node", None), ("local", id(self.frame), test.id)
            else:
                scope, key = self.frame.module.tree, ("global", self.frame.module.path, test.id)
            if type(scope) not in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module):
                return None  # a lambda's or comprehension's
            return (key, positive) if test.id in self._settled(scope) else None
        if type(test) is ast.Attribute and type(test.value) is ast.Name:
            obj = st.lookup(test.value.id)
            if type(obj) is Obj and not self._written(test.attr):
                return ("attr", obj.oid, test.attr), positive
        if type(test) is ast.Attribute:  # ``self.config.training.algo``: no attribute of the path written
            chain, root = [], test
            while type(root) is ast.Attribute and len(chain) <= 8:
                chain.append(root.attr)
                root = root.value
            obj = st.lookup(root.id) if type(root) is ast.Name else None
            if type(obj) is Obj and not any(self._written(attr) for attr in chain):
                return ("path", obj.oid, tuple(reversed(chain))), positive
            if type(root) is ast.Name and (st.locals is None or root.id not in st.locals) \
                    and self._global_held(root.id) and not any(self._written(attr) for attr in chain):
                # ``opt.vgg_loss`` of a module's global options: the same all through this call
                return ("global path", self.frame.module.path, root.id, tuple(reversed(chain))), positive
        return None

    def pass_flag(self, node: ast.If, st: State):
        """(key, polarity) of a test that this pass of the innermost loop (or this call, outside
        loops) made before and whose value cannot have changed since: the same text, of
        locals not assigned in between and attributes no code assigns outside ``__init__``,
        without calls (``if (step + 1) % k == 0:`` twice in one iteration: both go one way)."""
        scope = self.frame.func.node if self.frame.func is not None else self.frame.module.tree
        found = self.repeated_tests.get(id(scope))
        if found is None:
            found = self.repeated_tests[id(scope)] = _repeated_tests(scope)
        text = found[0].get(id(node))
        if text is None:
            return None
        test, positive = node.test, True
        while type(test) is ast.UnaryOp and type(test.op) is ast.Not:
            test, positive = test.operand, not positive
        names = set()
        for part in ast.walk(test):
            if type(part) is ast.Name:
                if st.locals is None or part.id not in st.locals:
                    return None
                names.add(part.id)
            elif type(part) is ast.Attribute:
                if self._written(part.attr):
                    return None
            elif not isinstance(part, _PURE_TEST_NODES):
                return None
        key = ("pass", text, self.frame.loops[-1].serial if self.frame.loops else self.frame.serial)
        first = self.pass_tests.get(key)
        if first is None:
            self.pass_tests[key] = node
        elif first is not node and any(name in names and first.end_lineno < line < node.lineno
                                       for line, name in found[1]):
            return None  # an operand assigned between the two tests
        return key, positive

    def _global_held(self, name: str) -> bool:
        """A function's global ``name`` cannot be rebound while this call runs: every function
        that declares it ``global`` is one of the calls this one runs in (``main()``, suspended
        until it returns), and the module's own statements are too."""
        fn = self.frame.func
        module = self.frame.module
        if fn is None or fn.module is not module:
            return False
        lines = module.global_lines.get(name)
        if lines is None:
            lines = module.global_lines[name] = _global_declarations(module.text, name)
        if not lines:
            return True
        callers = [f.func.node for f in self.frames if f.func is not None and f.func.module is module]
        return all(not fn.node.lineno <= line <= fn.node.end_lineno
                   and any(c.lineno <= line <= c.end_lineno for c in callers) for line in lines)

    def _settled(self, scope) -> frozenset:
        module = self.frame.module
        names = module.settled.get(scope)
        if names is None:
            names = module.settled[scope] = settled_names(scope, module.text)
        return names

    def _written(self, attr: str) -> bool:
        """Whether some loaded module may assign ``attr`` outside ``__init__``. (Remembered
        while the loaded modules stay the same: each test of a flag asked it of every text.)"""
        key = (attr, len(self.project.modules))
        known = self.written_memo.get(key)
        if known is None:
            known = self._written_in_loaded(attr)
            if not self.project.loading:  # (a module loading now is not among them yet)
                self.written_memo[key] = known
        return known

    def _written_in_loaded(self, attr: str) -> bool:
        return any(module is not None and _may_write(module, attr) for module in [self.main, *self.project.modules.values()])

    def assume(self, key, st: State, positive: bool) -> None:
        """Give what the last test of this flag left different in its branches the value of the
        branch taken now, where it still holds the join of both."""
        if key[0] == "pass":  # (kept by the engine: per pass, they must not grow the loop's state)
            for (kind, name), (then, orelse, joined) in self.pass_records.get(key, {}).items():
                scope = st.heap if kind == "h" else st.globals if kind == "g" else st.locals
                if scope is not None and name in scope and scope[name] is joined:
                    (st.own_heap() if kind == "h" else st.own_globals() if kind == "g" else scope)[name] = \
                        then if positive else orelse
            return
        for var in self.flag_vars.get(key, ()):
            record = ("guard", key, var)
            joined, chosen = st.heap.get((record, "join")), st.heap.get((record, "then" if positive else "else"))
            if joined is None or chosen is None:
                continue
            kind, name = var
            scope = st.heap if kind == "h" else st.globals if kind == "g" else st.locals
            if scope is not None and name in scope and (scope[name] is joined or scope[name] == joined):
                (st.own_heap() if kind == "h" else st.own_globals() if kind == "g" else scope)[name] = chosen

    def remember_branches(self, key, then: State, orelse: State, out: State) -> None:
        found = []
        for kind, a, b, o in (("l", then.locals, orelse.locals, out.locals), ("g", then.globals, orelse.globals,
                                                                            out.globals),
                              ("h", then.heap, orelse.heap, out.heap)):
            if a is None or b is None or o is None:
                continue
            for name in compress(b, map(is_not, map(a.get, b), b.values())):
                if name in a and name in o and not (kind == "h" and type(name) is tuple
                                                    and type(name[0]) is tuple and name[0][:1] == ("guard",)):
                    found.append((kind, name, a[name], b[name], o[name]))
        if not found:
            return
        if key[0] == "pass":
            self.pass_records[key] = {(kind, name): (a, b, o) for kind, name, a, b, o in found}
            return
        vars_ = self.flag_vars.setdefault(key, set())
        for kind, name, a, b, o in found:
            record = ("guard", key, (kind, name))
            heap = out.own_heap()
            heap[(record, "then")], heap[(record, "else")], heap[(record, "join")] = a, b, o
            vars_.add((kind, name))

    def s_For(self, node, st):
        iterable = self.ev(node.iter, st)
        if self.killed:  # ``for row in out.numpy():`` raises before the body runs
            return st
        if type(iterable) is Iter and iterable.wrap is not None and iterable.wrap[0] == "range" \
                and len(iterable.wrap) == 3 and type(iterable.wrap[1]) is Const and type(iterable.wrap[2]) is Const \
                and type(iterable.wrap[1].value) is int and type(iterable.wrap[2].value) is int \
                and iterable.wrap[2].value <= iterable.wrap[1].value or \
                type(iterable) is Iter and iterable.wrap == ("empty",):  # no items: the body never runs
            return self.block(node.orelse, st) if node.orelse else st
        count = _known_length(iterable, st)
        if count is not None and count <= MAX_UNROLLED_RANGE and type(iterable) is Iter and iterable.wrap[0] == "range":
            # ``for epoch in range(1)`` (a setting of 1): one pass, no next iteration to walk again;
            # ``for i in range(2)`` over two models: each pass with its own i (``outputs[i]``)
            return self.unrolled(st, node, [Const(k) for k in _range_values(iterable.wrap)])
        if type(iterable) is Obj and type(iterable.cls.lookup("__iter__")) is Func:
            # ``return iter(self.items)``: the loop walks that container, element after element
            it = self.call_func(iterable.cls.lookup("__iter__"), [iterable], {}, st, node.iter, bound=True)
            if type(it) in (Box, Tup) or (type(it) is Iter and it.gen is None and it.wrap is not None):
                iterable = it
        items = self.known_items(iterable, st)
        walks = type(iterable) is Box and type(node.target) is ast.Name
        if items is not None:
            if walks:  # (what a pass does to its element, the list's element undergoes too)
                self.frame.elements[node.target.id] = iterable
            try:
                return self.unrolled(st, node, items, exact=not _summary_items(iterable))
            finally:
                if walks:
                    self.frame.elements.pop(node.target.id, None)

        cycles = _cycles(iterable)

        def step(s, first):
            if keyed is not None:  # (each iteration reads its key's value from before the loop)
                self.frame.elements[("key", node.target.id)] = before
            self.assign(node.target, self.iter_elem(iterable, s, node.iter, first), s)
            out = self.block(node.body, s)
            if cycles and out is not None and out.wfreed:  # the next pass over the items walks them all again
                out.promote_weak(_element_segs(iterable, s))
            return out

        if walks:
            self.frame.elements[node.target.id] = iterable
        # ``for i in range(len(xs))``, ``for i, layer in enumerate(layers)``: lists indexed by i
        # (xs and the lists filled alongside it, ``values[i]``, ``log_probs[i]``, a hidden state
        # per layer ``hs[i]``) are read element after element, from the first
        indexed = node.__dict__.get("_gg_index", False)
        if indexed is False:  # (worked out once per loop: its body is walked)
            indexed = node._gg_index = _index_loop(node)
        if indexed:
            self.frame.elements[("index", indexed)] = True
        # ``for k in d: d[k] = f(d[k])``: each key once, so ``d[k]`` reads the value the key had
        # before the loop (not one an earlier iteration wrote under another key)
        keyed = _keys_walked(iterable, node.target)
        before = (keyed.oid, st.heap.get((keyed.oid, "*"), UNKNOWN)) if keyed is not None else None
        out = self.loop(node, st, step, node.orelse)
        if walks:
            self.frame.elements.pop(node.target.id, None)
        if indexed:
            self.frame.elements.pop(("index", indexed), None)
        if keyed is not None:
            self.frame.elements.pop(("key", node.target.id), None)
        if out is not None and out.wfreed and _walks_container(iterable):
            out.promote_weak(_element_segs(iterable, st))
        return out

    def known_items(self, v: Val, st: State):
        """The elements of a short literal list or tuple of constants (loops over them unroll)."""
        gen = v.gen if type(v) is Iter and v.gen is not None else None
        if gen is None and type(v) is Obj and type(v.cls.lookup("__iter__")) is Func:
            method = v.cls.lookup("__iter__")
            if _is_generator(method.node, method.module.source_of(method.node)) and _yields_once(method.node):
                return [self.iter_elem(self.call_func(method, [v], {}, st, method.node, bound=True), st, method.node)]
        if gen is not None and _yields_once(gen[0].node):  # a generator of one item: a loop of one pass
            return [self.iter_elem(v, st, gen[3])]
        if type(v) is Iter and v.wrap is not None and v.wrap[0] == "loader" and _known_length(v, st) == 1:
            return [self.iter_elem(v, st, None)]  # a loader of one batch (a whole test set at once)
        if type(v) is Iter and v.wrap is not None and v.wrap[0] == "enumerate" and type(v.wrap[2]) is Const \
                and type(v.wrap[2].value) is int:
            # ``for i, conv in enumerate(self.convs)``: each index with its element
            inner = self.known_items(v.wrap[1], st)
            return None if inner is None else [Tup((Const(v.wrap[2].value + i), x)) for i, x in enumerate(inner)]
        if type(v) is Box and v.kind == "dict" or type(v) is Iter and v.wrap is not None and v.wrap[0] == "view":
            # ``for name, loss in losses.items()`` over a dict whose keys are all known: each
            # key with the value it holds when the loop starts
            box, view = (v, "keys") if type(v) is Box else (v.wrap[1], v.wrap[2])
            if not _passed_on(box, st):
                return None
            keys = [k.value for k in st.heap[(box.oid, "kwkeys")].items]
            if not 0 < len(keys) <= MAX_UNROLLED_KEYS:
                return None
            values = [st.heap[(box.oid, ("k", k))] for k in keys]
            if view == "items":
                return [Tup((Const(k), x)) for k, x in zip(keys, values)]
            return values if view == "values" else [Const(k) for k in keys]
        if type(v) is Iter and v.wrap is not None and v.wrap[0] == "zip" and v.wrap[1]:
            # ``for name, w in zip(names, (a, b, c))``: each column of parts known item by item
            columns = [self.known_items(part, st) for part in v.wrap[1]]
            n = min((len(c) for c in columns if c is not None), default=0)
            if not (all(c is not None for c in columns) and 0 < n <= MAX_UNROLLED_BLOCKS):
                return None
            for k, part in enumerate(v.wrap[1]):
                if type(part) is Box and any(x is UNKNOWN for x in columns[k]):
                    # an item not followed (an append of a call abandoned) is at most what the
                    # list's summary says of every element
                    every = self._weak(st.heap.get((part.oid, "*"), UNKNOWN))
                    columns[k] = [every if x is UNKNOWN else x for x in columns[k]]
            return [Tup(tuple(c[i] for c in columns)) for i in range(n)]
        if type(v) is Iter and v.wrap is not None and v.wrap[0] == "params":
            return list(v.wrap[1])  # ``for name, p in net.named_parameters()``: each origin with its names
        if type(v) is Layer and (v.qual in api.MODULE_HOLDERS or v.qual in api.MODULE_CONTAINERS) \
                and 0 < len(v.children) <= MAX_UNROLLED_BLOCKS and all(_module_item(c) for c in v.children):
            # a few blocks, each as it is (the first may differ from the rest); blocks made in a
            # comprehension are one object to the analysis, run once (not one block's state
            # written twice, as a loop's second pass would)
            return v.children
        items = v.items if type(v) is Tup else None
        if type(v) is Box:
            known = st.heap.get((v.oid, "items"))
            items = known.items if type(known) is Tup else None  # (lists of two lengths join to unknown)
            if items and v.some:  # one of several lists made at one site: what each item may be
                items = tuple(self._some(i) for i in items)
        if items and len(items) <= 8 and all(_constant_data(i, st) for i in items):
            return items  # ``for c in (16, 32)``, ``for i, per_stage in enumerate([[16, 16], [32, 32]])``
        if items and len(items) <= MAX_UNROLLED and all(_module_item(i) for i in items):
            return items  # ``for m in model.modules()``: each module as it is
        if type(v) is Tup and len(items) <= MAX_UNROLLED:
            return items  # a tuple's length is fixed: each element as it is (``for s in state: s.detach_()``)
        if items and len(items) <= MAX_UNROLLED_BLOCKS:
            return items  # a list known item by item (``self.hooks = [OptimizerHook()]``): no pass past its end
        return None

    def unrolled(self, st, node, items, exact=True):
        """One pass per element, aging the graphs built in between, like a loop does.
        ``exact``: each item is one element (not a block that stands for several)."""
        ctx = LoopCtx(node, unrolled=exact, bound=_bound_names(st))
        self.frame.loops.append(ctx)
        cur, weak_before = st, st.wfreed
        for i, item in enumerate(items):
            ctx.continues, ctx.part, ctx.serial = [], i, next(_SERIALS)
            s = cur.copy()
            self.assign(node.target, item, s)
            # each pass ages what it built (what earlier passes built is aged already: the
            # state holds their old copies), so a long unrolled loop costs each pass its own
            self.created.append(set())
            try:
                cur = self.age(join_states([self.block(node.body, s)] + ctx.continues), node, i if exact else None)
            finally:
                created = self.created.pop()
                self.created[-1] |= created
            if cur is None:
                break
        self.frame.loops.pop()
        if cur is not None and node.orelse:
            cur = self.block(node.orelse, cur)
        out = join_states([cur] + ctx.breaks)
        if out is not None and out.wfreed:
            # what the loop's passes freed weakly, each element walked, is freed; not what was
            # freed weakly before it (a caller's loop over some element of a list)
            out.promote_weak([s for s in out.wfreed if s not in weak_before])
        return out

    s_AsyncFor = s_For

    def every_parameter(self, name, st: State) -> bool:
        """``name`` is the variable of the loop this statement is directly in, and that loop walks
        every parameter of a module (``for p in model.parameters(): <this statement>``), one
        module: not some one of several (``for child in children[:-1]: for p in
        child.parameters()``, each child in turn, the loop's element standing for all)."""
        ctx = self.frame.loops[-1] if self.frame.loops else None
        loop = ctx.node if ctx is not None else None
        # (a loop over ``named_parameters()`` unrolled runs a pass for each origin, with all its
        # parameters: a branch decided by the name runs for all of them; one not decided joins)
        per_origin = ctx is not None and ctx.unrolled and isinstance(loop, ast.For) and isinstance(loop.iter, ast.Call) \
            and isinstance(loop.iter.func, ast.Attribute) and loop.iter.func.attr in api.MODULE_NAMED_METHODS
        if not (isinstance(loop, ast.For) and isinstance(name, ast.Name)
                and (per_origin or _every_iteration(self.stmt, loop.body))):
            return False
        target = loop.target.elts[-1] if isinstance(loop.target, ast.Tuple) and loop.target.elts else loop.target
        it = loop.iter
        if not (isinstance(target, ast.Name) and target.id == name.id and isinstance(it, ast.Call)
                and isinstance(it.func, ast.Attribute) and it.func.attr in api.MODULE_PARAMETER_METHODS
                and not it.args and not it.keywords):
            return False
        module = it.func.value
        return not (isinstance(module, ast.Name) and type(st.lookup(module.id)) is Alt)

    def s_While(self, node, st):
        def step(s, first):
            if truth(self.ev(node.test, s)) is False or self.killed:  # (a test that raises ends it)
                return None
            return self.block(node.body, s)

        # ``while True`` never ends but by break; ``while not done`` ends once the body makes
        # ``done`` unknown, so the test is judged at the head of the later iterations
        return self.loop(node, st, step, node.orelse, lambda head: truth(self.ev(node.test, head.copy())) is True)

    def loop(self, key, st, step, orelse, forever=None):
        """Iterations 1 and 2 are analysed exactly (each from the state the previous one left);
        iterations 3 and later from the fixpoint of the aged back edges. Reports made in a
        fixpoint pass that turns out not to be the last are dropped."""
        ctx = LoopCtx(key, bound=_bound_names(st))
        self.frame.loops.append(ctx)
        self.created.append(set())

        def iterate(s, first):
            ctx.continues, ctx.made, ctx.serial = [], set(), next(_SERIALS)
            out = step(s.copy(), first)
            return join_states([out] + ctx.continues)

        first = self.age(iterate(st, True), key)
        # the loop ends after its last pass, whose graph is not aged: a value carried out of it
        # (an RNN's state) is that pass's run, apart from the runs before it that a walk from it
        # may not reach (the last step's current update, which no step after it used)
        last = iterate(first, False) if first is not None else None
        head = self.age(last, key)
        # iteration 2 left the state iteration 1 did: later iterations repeat it
        settled = head is not None and head.same(first) and not ctx.folded
        for _ in range(0 if settled else MAX_LOOP_PASSES):
            if head is None:
                break
            snapshot = self.snapshot() if self.reporting else None
            self.tentative += 1
            try:
                out = iterate(head, False)
                new = join_states([head, self.age(out, key)])
            finally:
                self.tentative -= 1
            last = join_states([last, out])
            if new.same(head):
                head = new  # (the same graphs; its counters and flags may be unknown now)
                break
            if snapshot is not None:
                self.restore(snapshot)
            head = new
        created = self.created.pop()
        self.created[-1] |= created
        self.frame.loops.pop()
        exits = list(ctx.breaks)
        if head is not None and last is not None and not (forever and forever(head)):
            exits.append(self.block(orelse, last) if orelse else last)
        return join_states(exits)

    def snapshot(self):
        return dict(self.reports), dict(self.tensor_facts), dict(self.backward_facts)

    def restore(self, snapshot) -> None:
        self.reports, self.tensor_facts, self.backward_facts = snapshot
        for key in self.withdrawn & self.reports.keys():
            del self.reports[key]

    def age(self, st: Optional[State], loop, part=None) -> Optional[State]:
        """At the back edge of ``loop``: what this iteration built becomes the loop's old graph
        (including what inner loops already aged), so the next iteration builds afresh, and the
        previous iteration's old graph becomes the older one. ``part``: the pass of a loop
        unrolled item by item, whose graph stays apart from the other passes' (the outputs of
        ``for model in models: outputs.append(model(x))`` are two graphs, not one)."""
        if st is None:
            return None
        mapping = {s: self.old_of(s, loop, part=part) for s in sorted(self.created[-1], key=_uid)
                   if s.old is not loop}
        if not mapping:
            return st

        def deepen(old):
            return self.with_aliases({old: self.old_of(old, loop, older=True)})

        mapping = self.with_aliases(mapping)
        out = Ager(mapping, deepen).apply(st)
        self.created[-1].update(mapping.values())
        return out

    def with_aliases(self, mapping: dict) -> dict:
        """An element's part of a graph (``Autograd.alias_of``) ages with the graph."""
        for s, aged in list(mapping.items()):
            for alias in self.aliases.get(s, ()):
                mapping[alias] = self.alias_of(aged, alias.key)
        return mapping

    def unrolled_passes(self) -> tuple:
        """Which pass of each unrolled loop around this statement runs (in callers too): what
        two passes make at one site are two objects (``for _ in range(2): nets.append(Net())``)."""
        return tuple((loop.node, loop.part) for frame in self.frames for loop in frame.loops if loop.part is not None)

    def _loop_invariant(self, compare, st) -> bool:
        """Every operand of a comparison keeps its value all through the loops around it
        (``invariants``): a constant, an attribute no loaded module assigns outside ``__init__``
        (``self.weight_x > 0``), a name bound once before a loop of this call. Such an ordering
        that fails in the first pass fails in every pass, unlike a counter's."""
        for operand in [compare.left] + compare.comparators:
            if _constant(operand):
                continue
            if type(operand) is ast.Name:
                func = getattr(self.frame.func, "node", None)
                params = func.args if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
                if any(not loop.unrolled for frame in self.frames for loop in frame.loops) or params is not None \
                        and operand.id in {a.arg for a in params.posonlyargs + params.args + params.kwonlyargs}:
                    return False  # (a caller's loop may pass another value each pass)
            elif type(operand) is not ast.Attribute:
                return False
            if self.settled_flag(operand, st) is None:
                return False
        return True

    def in_fixpoint_loop(self) -> bool:
        """Some loop around this statement, in this call or a caller's, is analysed to its
        fixpoint (not unrolled item by item)."""
        return any(not loop.unrolled for loop in self.frame.loops) \
            or any(not loop.unrolled for frame in self.frames for loop in frame.loops)

    def s_Break(self, node, st):
        if self.frame.loops:
            self.frame.loops[-1].breaks.append(st)
        return None

    def s_Continue(self, node, st):
        if self.frame.loops:
            self.frame.loops[-1].continues.append(st)
        return None

    def s_Return(self, node, st):
        value = self.ev(node.value, st) if node.value is not None else NONE
        if not self.killed:  # (a return whose value raises returns nothing)
            self.frame.returns.append((value, st))
        return None

    def s_Raise(self, node, st):
        if node.exc is not None:
            self.ev(node.exc, st)
        return None

    def s_With(self, node, st):
        grad, offs, inference, mutation = st.grad, len(self.grad_off), self.inference, self.mutation_allowed
        for item in node.items:
            if type(item.context_expr) is ast.Call and self.ev(item.context_expr.func, st) == LibRef(api.DEVICE):
                self.default_device = None  # ``with torch.device("cuda"):``: factories there may not be on the CPU
            ctx = self.ev(item.context_expr, st)
            if ctx is MUTATION_ALLOWED:
                self.mutation_allowed += 1
            if type(ctx) is GradCtx:
                self.inference += ctx.inference
                # (within ``torch.inference_mode()``, ``enable_grad`` records nothing)
                st.grad = False if self.inference and ctx.enabled is not False else ctx.enabled
                if ctx.enabled is False:
                    self.grad_off.append(item.context_expr)
            if item.optional_vars is not None:
                self.assign(item.optional_vars, UNKNOWN if type(ctx) is GradCtx else ctx, st)
        returns = len(self.frame.returns)
        try:
            out = self.block(node.body, st)
        finally:
            del self.grad_off[offs:]
            self.inference, self.mutation_allowed = inference, mutation
        if out is not None:
            out.grad = grad
        for _, s in self.frame.returns[returns:]:
            s.grad = grad  # (a ``return`` inside the block leaves it: the mode is restored)
        return out

    s_AsyncWith = s_With

    def s_Try(self, node, st):
        body = self.block(node.body, st.copy())
        raised = join_states([st, body])
        outs = [self.block(node.orelse, body.copy()) if body is not None else None]
        for handler in node.handlers:
            h = raised.copy()
            if handler.name:
                h.bind(handler.name, UNKNOWN)
            outs.append(self.block(handler.body, h))
        out = join_states(outs)
        if node.finalbody:
            out = self.block(node.finalbody, out if out is not None else raised.copy()) if out is not None else None
        return out

    s_TryStar = s_Try

    def s_Match(self, node, st):
        self.ev(node.subject, st)
        outs = [st]
        for case in node.cases:
            s = st.copy()
            for part in ast.walk(case.pattern):  # the names a pattern captures
                captured = getattr(part, "name", None) or getattr(part, "rest", None)
                if isinstance(captured, str):
                    s.bind(captured, UNKNOWN)
            outs.append(self.block(case.body, s))
        return join_states(outs)

    def s_Global(self, node, st):
        self.frame.declared.update(node.names)
        return st

    def s_Assert(self, node, st):
        self.ev(node.test, st)
        return st

    def s_Delete(self, node, st):
        for target in node.targets:
            if isinstance(target, ast.Name):
                (st.own_globals() if st.locals is None else st.locals).pop(target.id, None)
            elif isinstance(target, ast.Subscript):
                box = self.ev(target.value, st)
                if type(box) is Box and _whole_slice(target.slice):
                    _empty(st, box)  # del xs[:]
                elif type(box) is Box:
                    forget_items(st, box)
        return st

    def s_FunctionDef(self, node, st):
        grad_mode = grad_site = None
        for deco in node.decorator_list:
            d = self.ev(deco, st)
            if type(d) is GradCtx:
                grad_mode, grad_site = d.enabled, deco
            elif type(d) is LibRef and d.qual in api.GRAD_MODE:
                spec = api.GRAD_MODE[d.qual]  # a bare @torch.no_grad / @torch.inference_mode
                grad_mode = spec if isinstance(spec, bool) else (False if spec == "not_arg0" else None)
                grad_site = deco
        a = node.args
        defaults = [self.ev(d, st) for d in a.defaults]
        kw_defaults = {arg.arg: self.ev(d, st) for arg, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None}
        module = self.frame.module
        is_gen = module.generators.get(id(node))  # (None: found out when first called)
        closure = dict(st.locals) if st.locals is not None and self.frame.func is not None else None
        fn = Func(node, module, (defaults, kw_defaults), is_gen, grad_mode, closure, grad_site)
        accessor = _property_accessor(node)
        if accessor is not None:  # ``@value.setter``: the property keeps its getter, and this as its setter
            st.bind(f"{node.name}${accessor}", fn)
        else:
            st.bind(node.name, fn)
        return st

    s_AsyncFunctionDef = s_FunctionDef

    def s_ClassDef(self, node, st):
        bases = [self.ev(b, st) for b in node.bases]
        is_module = any((type(b) is LibRef and (b.qual in api.MODULE_BASES or b.qual in api.MODULE_CONTAINERS
                                                or b.qual in api.MODULES))
                        or (type(b) is Class and b.is_module) for b in bases)
        body_state = State({}, st.globals, st.heap, st.freed, st.grad, st.wfreed, st.owned)
        out = self.block(node.body, body_state) or body_state
        fields = None
        for deco in node.decorator_list:  # ``@dataclass``, ``@dataclasses.dataclass(frozen=True)``
            d = self.ev(deco.func if type(deco) is ast.Call else deco, st)
            if type(d) is LibRef and d.qual in DATACLASS_DECORATORS:
                fields = self.dataclass_fields(node, bases, st)
        named_tuple = any(type(b) is LibRef and b.qual in NAMED_TUPLE_BASES for b in bases)
        if named_tuple:
            fields = self.dataclass_fields(node, [], st)
        cls = Class(node, self.frame.module, bases, dict(out.locals), is_module, fields, named_tuple)
        for value in cls.attrs.values():
            if type(value) is Func:
                value.owner = cls
        st.bind(node.name, cls)
        return st

    def class_of_call(self, vals, node, st) -> Val:
        """``type("Name", (Base,), {"attr": value})``: a class made by a call, its attributes
        the dict's (all of its keys known); else unknown."""
        name, bases, ns = vals
        if not (type(name) is Const and type(name.value) is str and type(ns) is Box and ns.kind == "dict"
                and _passed_on(ns, st) and (type(bases) is Tup or type(bases) is Box and bases.kind == "list"
                                            and type(st.heap.get((bases.oid, "items"))) is Tup)):
            return UNKNOWN
        keys = [k.value for k in st.heap[(ns.oid, "kwkeys")].items]
        if not all(type(k) is str for k in keys):
            return UNKNOWN
        bases = list(bases.items if type(bases) is Tup else st.heap[(bases.oid, "items")].items)
        site = node.__dict__.get("_gg_class")
        if site is None:  # (one class statement per call site: what makes the class stable)
            site = node._gg_class = ast.copy_location(
                ast.ClassDef(name=name.value, bases=[], keywords=[], body=[], decorator_list=[]), node)
        is_module = any((type(b) is LibRef and (b.qual in api.MODULE_BASES or b.qual in api.MODULE_CONTAINERS
                                                or b.qual in api.MODULES))
                        or (type(b) is Class and b.is_module) for b in bases)
        return Class(site, self.frame.module, bases, {k: st.heap[(ns.oid, ("k", k))] for k in keys}, is_module)

    def s_Import(self, node, st):
        for alias in node.names:
            if alias.asname:
                st.bind(alias.asname, self.import_module(alias.name, 0))
            else:
                top = alias.name.split(".")[0]
                st.bind(top, self.import_module(top, 0))
        return st

    def s_ImportFrom(self, node, st):
        name = node.module or ""
        for alias in node.names:
            if alias.name == "*":
                self.import_star(name, node.level, st)
                continue
            if node.level == 0 and (is_torch(name) or _opaque(name)):
                value = LibRef(f"{name}.{alias.name}")
            else:
                mod = self.project.load(name, node.level, self.frame.module, self) if name or node.level else None
                value = UNKNOWN
                if mod is not None:
                    value = mod.env.get(alias.name)
                if value is None or value is UNKNOWN:
                    sub = self.project.load(f"{name}.{alias.name}" if name else alias.name,
                                            node.level, self.frame.module, self)
                    if sub is not None:
                        value = ModRef(sub)
                    elif mod is None and node.level == 0:
                        value = LibRef(f"{name}.{alias.name}")  # a library outside the project
                    else:
                        value = value or UNKNOWN
            st.bind(alias.asname or alias.name, value)
        return st

    def import_star(self, name: str, level: int, st: State) -> None:
        """``from utils import *`` of a project module: its ``__all__`` (a list of constants), or
        its public names. (Another library's names are not known: they stay unbound, unknown.)"""
        if level == 0 and (is_torch(name) or _opaque(name)):
            return
        mod = self.project.load(name, level, self.frame.module, self) if name or level else None
        if mod is None:
            return
        names = [n for n in mod.env if not n.startswith("_")]
        listed = mod.env.get("__all__")
        if type(listed) in (Box, Tup):
            items = listed.items if type(listed) is Tup else st.heap.get((listed.oid, "items"))
            items = items.items if type(items) is Tup else items
            if isinstance(items, tuple) and all(type(i) is Const and type(i.value) is str for i in items):
                names = [i.value for i in items]
        for n in names:
            value = mod.env.get(n)
            if value is not None:
                st.bind(n, value)

    def import_module(self, dotted: str, level: int) -> Val:
        if level == 0 and (is_torch(dotted) or _opaque(dotted)):
            return LibRef(dotted)
        mod = self.project.load(dotted, level, self.frame.module, self)
        return ModRef(mod) if mod is not None else LibRef(dotted)

    # ----------------------------------------------------------------- assignment
    def assign(self, target, value: Val, st: State) -> None:
        t = type(target)
        if t is ast.Name:
            if target.id in self.frame.declared:
                st.own_globals()[target.id] = value
            else:
                st.bind(target.id, value)
            if self.collect_facts:
                self.note_tensor(target, value, st)
        elif t in (ast.Tuple, ast.List):
            items = self.unpack(value, len(target.elts), st, target)
            for sub, item in zip(target.elts, items):
                if type(sub) is ast.Starred:
                    self.assign(sub.value, UNKNOWN, st)
                else:
                    self.assign(sub, item, st)
        elif t is ast.Attribute:
            obj = self.ev(target.value, st)
            if obj is UNKNOWN:
                self.escaped(value)
            setter = obj.cls.lookup(f"{target.attr}$setter") if type(obj) is Obj else None
            if type(setter) is Func:  # ``entry.value = 0.0`` runs the property's setter
                self.invoke(setter, [obj, value], {}, st, target, bound=True)
            elif type(obj) is Obj:
                st.own_heap()[(obj.oid, target.attr)] = value
            elif type(obj) is Box and (obj.kind == "namespace" or (obj.oid, "by_attribute") in st.heap):
                st.own_heap()[(obj.oid, ("k", target.attr))] = value
            elif type(obj) is Layer and target.attr == api.IN_PLACE_ATTRIBUTE and obj.config is not None:
                st.own_heap()[in_place_key(obj)] = value  # ``m.inplace = True`` on a built layer
            elif type(obj) is Layer and _layer_attribute(obj, target.attr) is not None \
                    and type(value) in (Const, Number, Tup, Box) and target.attr not in api.MODULE_PARAMETER_ATTRIBUTES:
                # ``m.f, m.i = f, i`` on a built layer (a model parsed from its config): plain data
                st.own_heap()[_layer_attribute(obj, target.attr)] = value
            elif type(obj) is Tensor and target.attr == api.GRAD_ATTRIBUTE:
                self.emit("grad_reset", target, st, roots=obj.roots)  # p.grad = None (or zeros)
                if value == NONE:
                    self.grads_gone(obj.roots, st)
            elif type(obj) is Tensor and target.attr == api.REQUIRES_GRAD and obj.integral:
                self.grad_allowed(truth(value), True)  # refused: a tensor of an integer dtype
            elif type(obj) is Tensor and target.attr == api.REQUIRES_GRAD and obj.leaf and truth(value) is False:
                self.freeze(obj.roots, st, self.every_parameter(target.value, st))
            elif type(obj) is Tensor and target.attr == api.REQUIRES_GRAD and obj.leaf and obj.roots \
                    and truth(value) is True and any((r, "frozen") in st.heap for r in obj.roots):
                self.unfreeze(obj.roots, st)
            elif type(obj) is Tensor and target.attr == api.REQUIRES_GRAD and isinstance(target.value, ast.Name):
                # ``t.requires_grad = True`` (or a flag): t may now require grad
                flag = truth(value)
                if obj.grad == NEVER and target.value.id in self.frame.elements:
                    self.doubt(obj)  # the list it came from holds it too
                root = self.new_root(target, "tensor", st)
                st.bind(target.value.id, obj.but(grad=YES if flag else MAYBE, roots=obj.roots | {root}, why=frozenset()))
            elif type(obj) is Tensor and target.attr == api.REQUIRES_GRAD and obj.grad == NEVER:
                self.doubt(obj)  # ``self.w.requires_grad = True``: held where we do not rebind it
        elif t is ast.Subscript:
            base = self.ev(target.value, st)
            self.ev(target.slice, st)
            if base is UNKNOWN:
                self.escaped(value)
            if type(base) is Tensor:  # x[i] = v writes into x (a view of it) in place
                self.emit("in_place", target, st, (self.as_now(base, st),), target=target.value, detail="view")
                if self.killed:
                    return
                self.filled(base, [value], st)
                self.modified(base.storage, target, st, target.value, written=base)
            if type(base) is Box and _whole_slice(target.slice):  # xs[:] = ys: the elements replaced
                _empty(st, base)
                elems = self.iter_elem(value, st, target) if type(value) in (Box, Tup, Iter) else UNKNOWN
                if elems is not UNKNOWN:
                    st.own_heap()[(base.oid, "*")] = elems
            elif type(base) is Box:
                key = (base.oid, "*")
                st.own_heap()[key] = join(st.heap[key], value) if key in st.heap else value
                if type(target.slice) is ast.Name:  # ``d[k] = v``: later reads of d[k] see v
                    self.frame.elements.pop(("key", target.slice.id), None)
                index = _const_key(self.ev(target.slice, st))
                keys = st.heap.get((base.oid, "kwkeys")) if _passed_on(base, st) else None
                items = st.heap.get((base.oid, "items")) if base.kind == "list" and not base.some else None
                forget_items(st, base)
                if type(items) is Tup and type(index) is Const and type(index.value) is int \
                        and -len(items.items) <= index.value < len(items.items) and not self.alternatives:
                    # ``laterals[i - 1] += up(laterals[i])`` of a known i: the others stay as they were
                    known = list(items.items)
                    known[index.value] = value
                    heap = st.own_heap()
                    heap[(base.oid, "items")], heap[(base.oid, "count")] = Tup(known), Const(len(known))
                    heap[(base.oid, "last")] = known[-1]
                elif type(index) is Const:
                    st.own_heap()[(base.oid, ("k", index.value))] = value
                    if keys is not None:
                        # a key it holds given a new value, or a key added: its keys stay all known
                        if not any(k.value == index.value for k in keys.items) and len(keys.items) < MAX_UNROLLED_KEYS:
                            keys = Tup(keys.items + (index,))
                        if any(k.value == index.value for k in keys.items):
                            st.own_heap()[(base.oid, "kwkeys")] = keys
                            note_keys(st, base, [k.value for k in keys.items])
            elif type(base) is Tensor and type(value) is Tensor and isinstance(target.value, (ast.Name, ast.Attribute)) \
                    and st.grad is not False:  # (with grad recording off, x keeps what it was)
                # x[i] = v writes v's graph into x (CopySlices); a buffer kept on an object too
                # (``self.cache_k[:b, p:p + n] = xk``: the next batch's read reaches this graph)
                merged = self.op(target, [(base, target.value), (value, None)], False, st)
                merged.shape, merged.storage = base.shape, base.storage
                if isinstance(target.value, ast.Name):
                    st.bind(target.value.id, merged)
                else:
                    self.assign(target.value, merged, st)
        elif t is ast.Starred:
            self.assign(target.value, UNKNOWN, st)

    def escaped(self, value: Val) -> None:
        """A graph stored into an object we do not know (``g.ndata["h"] = h`` of a graph library)
        may be walked by code we do not see: whatever holds only if nothing walks it is withdrawn."""
        segs = frozenset().union(*(t.segs for t in tensors_in(value)))
        if segs:
            self.walk(segs)

    def unpack(self, value: Val, n: int, st: State, site) -> list:
        tv = type(value)
        if tv is Number:  # ``bs, c, h, w = x.shape``
            return [NUMBER] * n
        if tv is Tup and len(value.items) == n:
            return list(value.items)
        if tv is Tensor:
            return [self.op(site, [(value, None)], False, st) for _ in range(n)]
        if tv is Layer and len(value.children) == n and _counted(value) \
                and (value.qual in api.MODULE_HOLDERS or value.qual in api.MODULE_CONTAINERS):
            return list(value.children)  # ``for attn, ff in self.layers`` over ModuleLists of two
        if tv is Box:  # a list whose items are known (``h, c = state``), as ``x[i]`` reads them
            items = st.heap.get((value.oid, "items"))
            if type(items) is Tup and len(items.items) == n:
                return list(items.items)
        if tv is Iter and value.wrap is not None and value.wrap[0] == "genexp" and 1 < n <= MAX_UNROLLED_BLOCKS:
            gen = value.wrap[1]
            if len(gen.generators) == 1 and not gen.generators[0].ifs and _known_length(value.wrap[2], st) == n:
                return self.each_step(gen, value.wrap[2], n, st)
        if tv in (Iter, Box):
            elem = self.iter_elem(value, st, site)
            if n > 1 and type(elem) in (Obj, Layer):
                # ``q1, q2 = (Mlp() for _ in range(2))``: modules made at one site, each one of
                # several, and so are their parameters (a step of q1's optimizer leaves q2's)
                self.several_roots |= self.module_roots(elem, st, 0)
                elem = self._some(elem)
            return [elem] * n
        if tv is Tup:
            elem = UNKNOWN
            for item in value.items:
                elem = join(elem, item) if elem is not UNKNOWN else item
            return [elem] * n
        return [UNKNOWN] * n

    def each_step(self, gen, outer: Val, n: int, st: State, first: int = 0) -> list:
        """``q1, q2 = (Mlp() for _ in range(2))``: Python runs the element once per step, so each
        name gets its own objects. Each step runs in a context of its own (``(gen, k)``), so that
        what it makes (objects, parameters, graphs) is apart from the other steps'. ``first``:
        the steps before it ran already (in the enclosing context)."""
        frame = self.frame
        outer_ctx = frame.ctx
        out = []
        for k in range(first, n):
            frame.ctx = (((gen, k),) + outer_ctx)[:CONTEXT_DEPTH]
            try:
                out.append(self._comprehension(gen, st, [gen.elt], outer)[0])
            finally:
                frame.ctx = outer_ctx
        return out

    # ----------------------------------------------------------------- expressions
    def ev(self, node, st: State) -> Val:
        """Evaluations nest (an expression in an expression, a statement in a block, a step of
        an iterator in another's) up to ``MAX_NESTING``; deeper, the value is unknown."""
        global _nesting_left
        if _nesting_left == 0:
            self.truncated.append((node, self.frame.module.path))
            return UNKNOWN
        _nesting_left -= 1
        try:
            handler = _EXPRESSIONS.get(type(node))
            return handler(self, node, st) if handler is not None else self.ev_children(node, st)
        finally:
            _nesting_left += 1

    def ev_children(self, node, st) -> Val:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.ev(child, st)
        return UNKNOWN

    def e_Constant(self, node, st):
        return Const(node.value)

    def e_Name(self, node, st):
        value = st.lookup(node.id)
        if value is None:
            if node.id in BUILTINS:
                return Builtin(node.id)
            if node.id == "__name__":
                return Const(self.frame.module.name)
            if self.unbound(node.id):
                self.killed = True  # a NameError: an exercise's stub returns names it never set
            return UNKNOWN
        if self.collect_facts:
            self.note_tensor(node, value, st)
        return value

    def unbound(self, name: str) -> bool:
        """Reading ``name`` surely raises NameError: no path here bound it (a join keeps a name
        bound on any path), it is no builtin, and nothing the analysis does not follow may bind
        it (a star import of another library, ``globals()``, ``exec``; a closure's later
        bindings, which the analysis copies at the ``def``)."""
        if name in PYTHON_BUILTINS or name.startswith("_") or name in NOTEBOOK_NAMES:
            return False
        fn = self.frame.func
        if fn is not None and fn.closure is not None:
            return False
        module = self.frame.module
        if fn is None and module.text.count(name) > 1:
            return False  # a top-level read of a name bound later: maybe a statement a skeleton cut out of a body
        if module.binds_unseen is None:
            module.binds_unseen = any(hint in module.text for hint in _BINDS_UNSEEN)
        return not module.binds_unseen

    def e_Attribute(self, node, st):
        return self.attr(self.ev(node.value, st), node.attr, st, node)

    def e_Call(self, node, st):
        self.executed += 1  # a call is a step too: a long method chain is many of them
        func = node.func
        if type(func) is ast.Attribute:
            owner = self.ev(func.value, st)
            if func.attr == "update" and owner is UNKNOWN and _own_dict(func.value):
                return self.update_attributes(func.value, node, st)
            callee = self.attr(owner, func.attr, st, func)
        else:
            callee = self.ev(func, st)
        args, kwargs, fork = [], {}, None
        for a in node.args:
            if type(a) is ast.Starred:
                spread = self.ev(a.value, st)
                if type(spread) is Iter and spread.wrap is not None and spread.wrap[0] == "genexp":
                    # ``f(*(x.chunk(n) for x in inputs))``: the call runs the generator to its
                    # end first, each item in turn (when they are known)
                    made = self.list_per_item(spread.wrap[1], st, outer=spread.wrap[2])
                    spread = made if made is not None else spread
                if type(spread) is Alt and fork is None and all(type(o) is Tup for o in spread.options):
                    fork = (len(args), spread, a.value)  # ``f(*inputs)`` of tuples of two lengths: each
                    continue
                items = spread if type(spread) is Tup else (
                    st.heap.get((spread.oid, "items")) if type(spread) is Box else None)
                if type(items) is not Tup and type(spread) is Box and type(callee) is LibRef \
                        and callee.qual in api.MODULE_CONTAINERS:
                    items = st.heap.get((spread.oid, "blocks"))  # ``nn.Sequential(*layers)``
                if type(items) is Tup:  # f(*pair): each item its own argument
                    args.extend((item, a.value) for item in items.items)
                else:  # as many as it holds: the parameters after the first are not known
                    args.append((self.iter_elem(spread, st, a), a.value))
                    kwargs[UNBOUND] = (UNKNOWN, a.value)
            else:
                args.append((self.ev(a, st), a))
        for k in node.keywords:
            v = self.ev(k.value, st)
            if k.arg:
                kwargs[k.arg] = (v, k.value)
            elif type(v) is Box and _passed_on(v, st):  # a dict whose keys are all known, unchanged
                for key in st.heap[(v.oid, "kwkeys")].items:
                    kwargs[key.value] = (st.heap[(v.oid, ("k", key.value))], k.value)
            else:  # f(**options): keywords the analysis cannot name
                kwargs[UNBOUND] = (v, k.value)
        if fork is not None:
            at, spread, site = fork
            return self.each(spread, st, lambda option, s: self.call(
                callee, args[:at] + [(item, site) for item in option.items] + args[at:], kwargs, node, s))
        return self.call(callee, args, kwargs, node, st)

    def update_attributes(self, own_dict, node, st) -> Val:
        """``self.__dict__.update(kwargs)``, ``vars(self).update(d)``: the object's attributes are
        the dict's items, where its keys are all known (else the attributes are left as known)."""
        obj = self.ev(own_dict.value if type(own_dict) is ast.Attribute else own_dict.args[0], st)
        items = []
        for a in node.args:
            d = self.ev(a, st)
            if type(a) is not ast.Starred and type(d) is Box and d.kind == "dict" and _passed_on(d, st):
                items += [(k.value, st.heap[(d.oid, ("k", k.value))]) for k in st.heap[(d.oid, "kwkeys")].items]
            else:
                obj = None
        for k in node.keywords:
            v = self.ev(k.value, st)
            if k.arg:
                items.append((k.arg, v))
            elif type(v) is Box and _passed_on(v, st):
                items += [(key.value, st.heap[(v.oid, ("k", key.value))]) for key in st.heap[(v.oid, "kwkeys")].items]
            else:
                obj = None
        if type(obj) is Obj:
            heap = st.own_heap()
            for name, value in items:
                if type(name) is str:
                    heap[(obj.oid, name)] = value
        return NONE

    def e_BinOp(self, node, st):
        left = self.ev(node.left, st)
        right = self.ev(node.right, st)
        return self.binop(node, type(node.op).__name__, (left, node.left), (right, node.right), st)

    def binop(self, node, op, left, right, st):
        if left[0] is UNFILLED_GRAD or right[0] is UNFILLED_GRAD:
            self.killed = True  # arithmetic on None: a TypeError
            return UNKNOWN
        if type(left[0]) is Tensor or type(right[0]) is Tensor:
            out = self.shaped(self.op(node, [left, right], api.OPERATORS.get(op), st,
                                      keeps=api.KEEPS_OPERATORS.get(op)),
                              api.SHAPE_OPERATORS.get(op), [left, right], {}, st)
            if op in api.ACCUMULATING_OPERATORS and out.grad == YES and any(
                    s.old is not None and s.site is node and _read_here(out.via.get(s), self.stmt) for s in out.segs):
                self.emit("running_total", node, st, (out,))  # this sum holds last iteration's sum
            return out
        if op == "Mult" and (type(left[0]) is Box) != (type(right[0]) is Box):
            box, count = (left[0], right[0]) if type(left[0]) is Box else (right[0], left[0])
            if box.kind == "list" and type(count) in (Const, Number):
                out = Box((node, self.frame.ctx), "list")
                self.allocate(out.oid, st)
                if (box.oid, "*") in st.heap:
                    st.own_heap()[(out.oid, "*")] = st.heap[(box.oid, "*")]
                items = st.heap.get((box.oid, "items"))
                if type(count) is Const and type(count.value) is int and type(items) is Tup \
                        and len(items.items) * max(count.value, 0) <= 8:
                    st.own_heap()[(out.oid, "items")] = Tup(items.items * max(count.value, 0))
                return out
        if type(left[0]) is Tup and type(right[0]) is Tup and op == "Add":
            return Tup(left[0].items + right[0].items)
        if type(left[0]) is Box and type(right[0]) is Box and op == "Add":  # list + list
            box = Box((node, self.frame.ctx), "list")
            elems = [st.heap[(b.oid, "*")] for b in (left[0], right[0]) if (b.oid, "*") in st.heap]
            if elems:
                st.own_heap()[(box.oid, "*")] = elems[0] if len(elems) == 1 else join(*elems)
            parts = [st.heap.get((b.oid, "items")) for b in (left[0], right[0])]
            # names known one by one (``[f"layer.{i}." for i in ...] + ["classifier"]``): so is their
            # sum (not numbers: ``[stride] + [1] * (n - 1)`` would unroll each block a loop builds)
            if all(type(p) is Tup for p in parts) and len(parts[0].items) + len(parts[1].items) <= MAX_UNROLLED \
                    and left[0].kind == right[0].kind == "list" \
                    and all(type(x) is Const and type(x.value) is str for p in parts for x in p.items):
                st.own_heap()[(box.oid, "items")] = Tup(parts[0].items + parts[1].items)
                st.own_heap()[(box.oid, "count")] = Const(len(parts[0].items) + len(parts[1].items))
            return box
        if (type(left[0]) is Number or type(right[0]) is Number) and type(left[0]) in (Number, Const) \
                and type(right[0]) in (Number, Const):
            return NUMBER  # ``x.size(0) * 2``
        if type(left[0]) is Const and type(right[0]) is Const:
            a, b = left[0].value, right[0].value
            if type(a) is bool and type(b) is bool and op in ("BitOr", "BitAnd"):
                return Const(_FOLDABLE[op](a, b))  # ``self.training |= self.export``
            if type(a) in (int, float) and type(b) in (int, float) and not isinstance(a, bool):
                if op in _FOLDABLE and (op != "Pow" or abs(b) <= MAX_FOLDED_EXPONENT):
                    try:
                        return Const(_FOLDABLE[op](a, b))
                    except (ArithmeticError, ValueError):
                        return UNKNOWN
                return NUMBER  # a number, whatever it is (``beta ** 2``)
        if op == "Mod" and type(left[0]) is Const and type(left[0].value) is str and not _WIDE.search(left[0].value):
            # ``"gcl_%d" % i`` of known values: the string
            parts = right[0].items if type(right[0]) is Tup else (right[0],)
            if all(type(p) is Const and type(p.value) in (int, float, str, bool) for p in parts):
                try:
                    return Const(left[0].value % tuple(p.value for p in parts))
                except (TypeError, ValueError, KeyError, OverflowError):
                    return UNKNOWN
        return UNKNOWN

    def e_UnaryOp(self, node, st):
        operand = self.ev(node.operand, st)
        if type(operand) is Tensor:
            op = type(node.op).__name__
            return self.shaped(self.op(node, [(operand, node.operand)], api.OPERATORS.get(op), st),
                               api.SHAPE_OPERATORS.get(op), [(operand, node.operand)], {}, st)
        if type(node.op) is ast.Not and type(operand) is Const:
            return Const(not operand.value)
        if type(node.op) is ast.Not and type(operand) is Box and operand.kind == "dict" and surely_not_empty(st, operand):
            return Const(False)
        if type(operand) is Number and type(node.op) is not ast.Not:
            return NUMBER
        if type(node.op) in (ast.USub, ast.UAdd) and type(operand) is Const and type(operand.value) in (int, float):
            return Const(-operand.value if type(node.op) is ast.USub else operand.value)  # ``view(n, -1)``
        return UNKNOWN

    def e_Compare(self, node, st):
        left = self.ev(node.left, st)
        rights = [self.ev(c, st) for c in node.comparators]
        if len(rights) == 1 and (type(left) is Alt or type(rights[0]) is Alt) and type(node.ops[0]) in _MEMBERSHIPS:
            # ``"fc" in name`` of a parameter name among several: decided where all agree
            lefts = left.options if type(left) is Alt else (left,)
            rs = rights[0].options if type(rights[0]) is Alt else (rights[0],)
            listed = st.heap.get((rs[0].oid, "items")) if len(rs) == 1 and type(rs[0]) is Box and rs[0].kind == "list" \
                else rs[0] if len(rs) == 1 and type(rs[0]) is Tup else None
            if type(listed) is Tup and type(node.ops[0]) in (ast.In, ast.NotIn) and all(type(x) is Const for x in lefts) \
                    and all(type(x) is Const for x in listed.items):  # ``name in ["q", "v"]``
                found = {any(_same_const(a.value, x.value) for x in listed.items) == (type(node.ops[0]) is ast.In)
                         for a in lefts}
                return Const(found.pop()) if len(found) == 1 else UNKNOWN
            if all(type(x) is Const for x in lefts + rs):
                found = {_fold_compare(node.ops, [a.value, b.value]) for a in lefts for b in rs}
                return Const(found.pop()) if len(found) == 1 and found <= {True, False} else UNKNOWN
        if type(left) is Const and all(type(r) is Const for r in rights):
            # ``stride == 2``, ``in_channels > out_channels``, ``0 < p <= 1``: what a branch
            # taken at construction (``self.resize_identity``) depends on
            folded = _fold_compare(node.ops, [left.value] + [r.value for r in rights])
            ordering = not all(type(op) in _EQUALITIES for op in node.ops)
            if folded is True or (folded is False and not (ordering and self.in_fixpoint_loop()
                                                           and not self._loop_invariant(node, st))):
                # (an equality false in an exact pass, ``ep_len == max_ep_len`` of a counter the
                # iteration increments, may hold later: the loop is taken on to its fixpoint too)
                if folded is False and not ordering:  # (of a loop of this function: not a callee's constant)
                    names = {n.id for n in (node.left, *node.comparators) if type(n) is ast.Name}
                    loops = [loop for loop in self.frame.loops if not loop.unrolled]
                    if names and any(names & _incremented(loop.node) for loop in loops):
                        for loop in loops:
                            loop.folded = True
                elif ordering:
                    # in a loop analysed to its fixpoint, an ordering that holds in an exact first
                    # pass (``step > warmup`` of counters still constant there) holds in that
                    # iteration, but may not later: such a loop is always taken on to its
                    # fixpoint, where the counters are no longer constants. (One that does not
                    # hold yet is left undecided, as the later iterations may see it hold.)
                    for frame in self.frames + [self.frame]:
                        for loop in frame.loops:
                            if not loop.unrolled:
                                loop.folded = True
                return Const(folded)
        if len(rights) == 1 and type(node.ops[0]) in (ast.Eq, ast.NotEq) \
                and (type(left) is Tup or type(rights[0]) is Tup):
            # ``phase == LoopPhase.TRAIN`` of an enum whose values are tuples (``TRAIN = 0,``):
            # members compare as their values do (an alias is its member)
            a, b = _const_tuple(left), _const_tuple(rights[0])
            if a is not _NOT_CONSTANT and b is not _NOT_CONSTANT:
                return Const((a == b) == (type(node.ops[0]) is ast.Eq))
        known = rights[0] if len(rights) == 1 else None
        if type(known) is Box and known.kind == "list":  # ``i in style_layers``, a list of known items
            known = st.heap.get((known.oid, "items"))
        if type(left) is Const and type(known) is Tup and type(node.ops[0]) in (ast.In, ast.NotIn) \
                and all(type(x) is Const for x in known.items):
            found = any(_same_const(left.value, x.value) for x in known.items)  # ``mode in ("a", "b")``
            return Const(found == (type(node.ops[0]) is ast.In))
        if len(rights) == 1 and {type(left), type(rights[0])} == {After, Const} \
                and type(node.ops[0]) in (ast.Eq, ast.NotEq):
            counter, const = (left, rights[0]) if type(left) is After else (rights[0], left)
            if counter.start == const.value:
                return Const(type(node.ops[0]) is ast.NotEq)
        if len(rights) == 1 and type(node.ops[0]) in (ast.In, ast.NotIn) and type(left) is Const \
                and type(rights[0]) is Box and rights[0].kind == "dict":
            if has_key(st, rights[0], left.value):
                return Const(type(node.ops[0]) is ast.In)  # (a key not known present may still be there)
            if _passed_on(rights[0], st):  # its keys are all known: this one is not among them
                return Const(type(node.ops[0]) is ast.NotIn)
        if len(rights) == 1 and type(node.ops[0]) in (ast.Is, ast.IsNot) and type(left) is Builtin \
                and type(rights[0]) is Builtin:
            return Const((left.name == rights[0].name) == (type(node.ops[0]) is ast.Is))
        if len(rights) == 1 and (type(left) is Builtin or left is TENSOR_TYPE):
            decided = _same_type(left, node.ops[0], rights[0], st)
            if decided is not None:
                return Const(decided)
        if len(rights) == 1 and type(node.ops[0]) in (ast.Is, ast.IsNot) and rights[0] == NONE:
            if type(left) in (Tensor, Layer, Obj, Func, Class, Optim, Box, Tup):
                return Const(type(node.ops[0]) is ast.IsNot)
        if type(left) is Tensor or any(type(r) is Tensor for r in rights):
            # a bool tensor, of the operands' broadcast shape when it is one element-wise comparison
            shape = None
            if len(rights) == 1 and type(node.ops[0]) in _ELEMENTWISE_COMPARISONS:
                shape = shapes.broadcast([_compared_shape(left), _compared_shape(rights[0])])
            return Tensor(NEVER, shape=shape, integral=True, boolean=True)
        return UNKNOWN

    def e_BoolOp(self, node, st):
        # short-circuit: ``a or b`` is a when a is surely true, b when a is surely false (``and``: the
        # mirror); what may be either joins
        stop = type(node.op) is ast.Or
        out = None
        for i, e in enumerate(node.values):
            v = self.ev(e, st)
            known = truth(v) if i < len(node.values) - 1 else None
            if known is (not stop):
                continue  # this operand is passed over: the next one decides
            out = v if out is None else join(out, v)
            if known is stop:
                break
        return out

    def e_IfExp(self, node, st):
        known = truth(self.ev(node.test, st))
        if known is True:
            return self.ev(node.body, st)
        if known is False:
            return self.ev(node.orelse, st)
        return join(self.ev(node.body, st), self.ev(node.orelse, st))

    def e_NamedExpr(self, node, st):
        value = self.ev(node.value, st)
        self.assign(node.target, value, st)
        return value

    def e_Tuple(self, node, st):
        items = []
        for e in node.elts:
            if type(e) is ast.Starred:  # (a, *rest): rest's items in place, when it has positions
                v = self.ev(e.value, st)
                if type(v) is not Tup:
                    return UNKNOWN  # where the items after it sit is not known
                items.extend(v.items)
            else:
                items.append(self.ev(e, st))
        return Tup(items)

    def allocate(self, oid, st: State) -> None:
        """A fresh object at an allocation site: forget what the previous one held."""
        if oid in self.allocated:
            for key in [k for k in st.heap if k[0] == oid]:
                del st.own_heap()[key]
        self.allocated.add(oid)
        for loop in self.frame.loops:
            loop.made.add(oid)

    def e_List(self, node, st):
        box = Box((node, self.frame.ctx), "list")
        self.allocate(box.oid, st)
        elem = None
        values = []
        for e in node.elts:
            v = self.ev(e.value if type(e) is ast.Starred else e, st)
            values.append(v)
            elem = v if elem is None else join_elements(elem, v)
        if elem is not None:
            st.own_heap()[(box.oid, "*")] = elem
        if not any(type(e) is ast.Starred for e in node.elts):
            st.own_heap()[(box.oid, "items")] = Tup(values)
            if type(node) is ast.List:
                # the last element, followed through appends: ``hiddens[-1]`` after a loop that
                # appended to it is the value its last pass appended (or what it held before)
                st.own_heap()[(box.oid, "last")] = values[-1] if values else UNKNOWN
        return box

    e_Set = e_List

    def e_Dict(self, node, st):
        box = Box((node, self.frame.ctx), "dict")
        self.allocate(box.oid, st)
        elem = None
        keys = []
        for k, v in zip(node.keys, node.values):
            key = self.ev(k, st) if k is not None else None
            value = self.ev(v, st)
            if type(key) is Const:
                st.own_heap()[(box.oid, ("k", key.value))] = value
                keys.append(key.value)
            elem = value if elem is None else join(elem, value)
        if elem is not None:
            st.own_heap()[(box.oid, "*")] = elem
        note_keys(st, box, keys)
        if len(keys) == len(node.keys):  # every key known: ``f(**d)`` names them (until d changes)
            st.own_heap()[(box.oid, "kwkeys")] = Tup(Const(k) for k in keys)
        return box

    def comprehension(self, node, st, elts, count=False):
        """The values of ``elts`` for one step; with ``count``, also how many steps it makes
        (one per item of an iterable of known length, without ``if``: else None)."""
        self.created.append(set())
        try:
            outer = self.ev(node.generators[0].iter, st)
            values = self._comprehension(node, st, elts, outer)
            single = len(node.generators) == 1 and not node.generators[0].ifs
            steps = _known_length(outer, st) if single else None
            if steps is not None and steps > 1 and not self.killed and _walks_graph(node):
                # ``[autograd.grad(outs, x)[0] for x in xs]``: the second step walks again what
                # the first one's backward freed (its values are those of the first step)
                self._comprehension(node, st, elts, outer)
            if not count:
                return values
            return values, steps
        finally:
            created = self.created.pop()
            self.summaries |= created
            self.created[-1] |= created

    def _some(self, v: Val) -> Val:
        """What one of several containers or objects holds (``agents[i].memory``): weak as an
        element is, and so it stays when the elements of another container built from it are
        consumed together (``torch.stack([m * 2 for m in agents[i].memory])`` walks one agent's)."""
        v = self._weak(v, every=True)
        if type(v) is Tensor and v.weak:
            self.several.update(v.weak)
        elif type(v) is Tup:
            for t in tensors_in(v):
                self.several.update(t.weak)
        return v

    def _weak(self, v: Val, every=False) -> Val:
        """An element read out of a container: its segments that stand for several graphs (one
        per element) are weak; a graph the elements share (a trunk) stays strong. ``every``: read
        out of one of several containers made at one site (``regs`` of ``for regs in all_regs``),
        whose latest contents stand for each one's: all its segments are weak."""
        if type(v) is Tensor:
            olds = {(s.site, s.ctx) for s in v.segs if s.old}
            weak = v.weak | frozenset(s for s in v.segs if s in self.summaries or s.old or (s.site, s.ctx) in olds
                                      or every)
            return v if weak == v.weak else v.but(weak=weak)
        if type(v) is Tup:
            return v.like(self._weak(x, every) for x in v.items)
        if type(v) is Box and not v.some:
            return Box(v.oid, v.kind, True)
        if type(v) is Obj and not v.some:
            return Obj(v.oid, v.cls, True)
        return v

    def keyed(self, v: Val, key, st: State) -> Val:
        """``d["fc1.weight"]``, ``ema[0]`` of a container nothing changed since it was built:
        the same element at every read, so its graph is not one of several: the segments the
        summary holds weakly become that element's own (aliases, freed for sure by a backward
        over it; a later read of the same key walks them again)."""
        if type(v) is Tensor and v.exact:  # (what unresolved code may hold stays a maybe)
            swap = {s: self.alias_of(s, key) for s in v.weak if s not in st.freed and s.base is None}
            if not swap:
                return v
            return v.but(segs=frozenset(swap.get(s, s) for s in v.segs), weak=v.weak - swap.keys() - set(swap.values()),
                         via={swap.get(s, s): n for s, n in v.via.items()})
        if type(v) is Tup:
            return v.like(self.keyed(x, key, st) for x in v.items)
        return v

    def tuple_per_item(self, node, outer: Val, st) -> Optional[Tup]:
        """``tuple(gather([o[i] for o in outs]) for i in range(len(first)))`` over a range of a
        few known numbers, ``tuple(t.to(device) for t in batch)`` over a tuple: each element
        computed from its own item, in a context of its own, so the tuple is known item by item
        (a loss apart from the logits beside it, the ids apart from the mask)."""
        gen = node.generators[0]
        if len(node.generators) != 1 or gen.is_async or gen.ifs:
            return None
        if type(outer) is Tup and not outer.names:  # ``tuple(t.to(device) for t in batch)``
            items = outer.items
        elif type(outer) is Iter and outer.wrap is not None and outer.wrap[0] == "range":
            numbers = _range_values(outer.wrap)
            items = [Const(k) for k in numbers] if numbers is not None else None
        else:
            return None
        if items is None or not 0 < len(items) <= MAX_UNROLLED_BLOCKS:
            return None
        frame = self.frame
        outer_ctx = frame.ctx
        values = []
        for k, item in enumerate(items):
            frame.ctx = (((node, k),) + outer_ctx)[:CONTEXT_DEPTH]
            try:
                inner = st.copy()
                if inner.locals is None:
                    inner.locals = {}
                self.assign(gen.target, item, inner)
                values.append(self.ev(node.elt, inner))
                st.adopt(inner)
            finally:
                frame.ctx = outer_ctx
        return Tup(tuple(values))

    def list_per_item(self, node, st, outer=None) -> Optional[Box]:
        """``[repackage(h) for h in hidden]``, ``[model(x) for model in models]`` over a few items
        known one by one (its iterable a name or an attribute, read again at no cost when this
        does not apply): each element computed from its own item, in a context of its own (as
        ``each_step``), so the list is known item by item too, each element's graph its own."""
        gen = node.generators[0]
        if len(node.generators) != 1 or gen.is_async or outer is None and not _read_again_freely(_mapping_of(gen.iter)):
            return None
        iterable = self.ev(gen.iter, st) if outer is None else outer
        if _summary_items(iterable):  # (a ModuleList's one block standing for several: not one item)
            return None
        items = self.known_items(iterable, st)
        if items is None and type(iterable) is Iter and iterable.wrap is not None and iterable.wrap[0] == "range" \
                and _formats_a_string(node.elt):
            numbers = _range_values(iterable.wrap)  # ``[f"layer.{i}." for i in range(n - k, n)]``
            items = [Const(i) for i in numbers] if numbers is not None else None
        if not items or len(items) > MAX_UNROLLED_BLOCKS:
            return None
        frame = self.frame
        outer_ctx = frame.ctx
        if gen.ifs:  # ``[w * losses[k] for k, w in weights.items() if k in losses]``: the items
            kept = []  # each condition keeps, when it is known for each item
            for item in items:
                inner = st.copy()
                if inner.locals is None:
                    inner.locals = {}
                self.assign(gen.target, item, inner)
                verdicts = {truth(self.ev(test, inner)) for test in gen.ifs}
                if None in verdicts:
                    return None
                if False not in verdicts:
                    kept.append(item)
            if not kept:
                return None
            items = kept
        values = []
        for k, item in enumerate(items):
            frame.ctx = (((node, k),) + outer_ctx)[:CONTEXT_DEPTH]
            try:
                inner = st.copy()
                if inner.locals is None:
                    inner.locals = {}
                self.assign(gen.target, item, inner)
                values.append(self.ev(node.elt, inner))
                st.adopt(inner)
            finally:
                frame.ctx = outer_ctx
        box = Box((node, outer_ctx), "list")
        self.allocate(box.oid, st)
        heap = st.own_heap()
        elem = values[0]
        for v in values[1:]:
            elem = join_elements(elem, v)
        heap[(box.oid, "*")], heap[(box.oid, "items")], heap[(box.oid, "last")] = elem, Tup(values), values[-1]
        heap[(box.oid, "count")] = Const(len(values))
        return box

    def dict_per_key(self, node, st, pair=None, outer=None) -> Optional[Box]:
        """``{k: v.chunk(n) for k, v in batch.items()}`` over a few items known one by one (as
        ``list_per_item``): when every step's key is a constant, the dict is known key by key,
        each value computed from its own item. ``pair``, ``outer``: ``dict((k, f(k)) for k in d)``,
        the generator's key and value expressions and its iterable's value, evaluated already."""
        gen = node.generators[0]
        if len(node.generators) != 1 or gen.ifs or gen.is_async:
            return None
        if outer is None:
            if not isinstance(_mapping_of(gen.iter), (ast.Name, ast.Attribute)):
                return None
            outer = self.ev(gen.iter, st)
        key_expr, value_expr = pair if pair is not None else (node.key, node.value)
        items = self.known_items(outer, st)
        if not items or len(items) > MAX_UNROLLED_KEYS:
            return None
        frame = self.frame
        outer_ctx = frame.ctx
        pairs = []
        for k, item in enumerate(items):
            frame.ctx = (((node, k),) + outer_ctx)[:CONTEXT_DEPTH]
            try:
                inner = st.copy()
                if inner.locals is None:
                    inner.locals = {}
                self.assign(gen.target, item, inner)
                key = self.ev(key_expr, inner)
                pairs.append((key, self.ev(value_expr, inner)))
                st.adopt(inner)
            finally:
                frame.ctx = outer_ctx
        box = Box((node, outer_ctx), "dict")
        self.allocate(box.oid, st)
        heap = st.own_heap()
        elem = None
        for key, value in pairs:
            elem = value if elem is None else join(elem, value)
        heap[(box.oid, "*")] = elem
        if all(type(key) is Const for key, _ in pairs):
            for key, value in pairs:
                heap[(box.oid, ("k", key.value))] = value
            keys = list(dict.fromkeys(key.value for key, _ in pairs))
            note_keys(st, box, keys)
            heap[(box.oid, "kwkeys")] = Tup(Const(k) for k in keys)
        else:
            heap[(box.oid, "sealed")] = Const(True)
        return box

    def _comprehension(self, node, st, elts, outer: Val):
        """One step of a comprehension whose outermost iterable was ``outer`` (Python evaluates
        it in the enclosing scope when the comprehension is made, and only it)."""
        inner = st.copy()
        if inner.locals is None:
            inner.locals = {}
        for i, gen in enumerate(node.generators):
            iterable = outer if i == 0 else self.ev(gen.iter, inner)
            self.assign(gen.target, self.iter_elem(iterable, inner, gen.iter), inner)
            for cond in gen.ifs:
                self.ev(cond, inner)
        self.comprehending += 1
        try:
            values = [self.ev(e, inner) for e in elts]
        finally:
            self.comprehending -= 1
        st.adopt(inner)
        return values

    def e_ListComp(self, node, st):
        if type(node) is ast.ListComp:
            made = self.list_per_item(node, st)
            if made is not None:
                return made
        (elem,), count = self.comprehension(node, st, [node.elt], count=True)
        box = Box((node, self.frame.ctx), "list")
        self.allocate(box.oid, st)  # a new list: what the last one made here held is not in it
        st.own_heap()[(box.oid, "*")] = elem
        st.own_heap()[(box.oid, "sealed")] = Const(True)
        if count is not None and type(node) is ast.ListComp:  # (a set may have fewer)
            st.own_heap()[(box.oid, "count")] = Const(count)
            over = node.generators[0].iter
            if 0 < count <= MAX_UNROLLED_BLOCKS and type(elem) in (Layer, Obj) and _module_item(elem) and (
                    isinstance(over, (ast.Name, ast.Attribute)) or _call_of(over, "range")):
                # ``[ResnetBlock(d) for _ in range(n)]``: n modules of their own, in order (each
                # step runs the element again; the iterable, a name or a range, is read again
                # at no cost), which ``nn.Sequential(*layers)`` runs one after the other. Kept
                # apart from "items": other code reads the list as one block standing for each
                rest = self.each_step(node, self.ev(over, st), count, st, first=1) if count > 1 else []
                st.own_heap()[(box.oid, "blocks")] = Tup([elem] + rest)
            kind = _empty_container(node.elt)
            if kind is not None and count <= MAX_UNROLLED_BLOCKS:
                # ``[[] for _ in agents]``: that many lists, each its own (filled one by one,
                # ``values[i].append(v)``), not one list held for all
                items = tuple(Box(((node.elt, k), self.frame.ctx), kind) for k in range(count))
                for item in items:
                    self.allocate(item.oid, st)
                st.own_heap()[(box.oid, "items")] = Tup(items)
                st.own_heap()[(box.oid, "*")] = Alt(items)  # (``values[i]``: one of them)
                if kind == "list":
                    for item in items:
                        st.own_heap()[(item.oid, "items")] = Tup(())
        return box

    e_SetComp = e_ListComp

    def e_GeneratorExp(self, node, st):
        # lazy, as Python's: each step computes its element then, so a loop over it (or over a
        # zip of it) builds a fresh graph every iteration. Its outermost iterable is evaluated
        # now, as Python does: ``ps = tuple(p for p in ps if ...)`` walks the old ``ps``, not
        # the generator itself (read lazily, that was a generator iterating itself, forever).
        return Iter(wrap=("genexp", node, self.ev(node.generators[0].iter, st)))

    def e_DictComp(self, node, st):
        made = self.dict_per_key(node, st)
        if made is not None:
            return made
        key, value = self.comprehension(node, st, [node.key, node.value])
        box = Box((node, self.frame.ctx), "dict")
        self.allocate(box.oid, st)
        st.own_heap()[(box.oid, "*")] = value
        st.own_heap()[(box.oid, "sealed")] = Const(True)
        return box

    def e_Subscript(self, node, st):
        base = self.ev(node.value, st)
        if type(base) is Alt:  # one of several values: the subscript of each
            return self.each(base, st, lambda option, s: self._subscript(node, option, s))
        return self._subscript(node, base, st)

    def _subscript(self, node, base, st):
        index = self.ev(node.slice, st)
        tb = type(base)
        if type(node.value) is ast.Attribute and node.value.attr == api.MODULE_DICT_ATTRIBUTE \
                and type(index) is Const and type(index.value) is str:
            owner = self.ev(node.value.value, st)  # ``self._modules["gcl_%d" % i]``: that submodule
            if type(owner) is Obj and owner.cls.is_module:
                return self.attr(owner, index.value, st, node)
        if tb is Number:  # ``x.shape[0]``, ``t.tolist()[i]``
            if isinstance(node.value, ast.Attribute) and node.value.attr == "shape" and type(index) is Const \
                    and type(index.value) is int:
                owner = self.ev(node.value.value, st)
                if type(owner) is Tensor and type(owner.shape) is tuple \
                        and -len(owner.shape) <= index.value < len(owner.shape) \
                        and type(owner.shape[index.value]) is int:
                    return Const(owner.shape[index.value])
            return NUMBER
        if tb is Tensor:
            kind = "basic" if _basic_index(node.slice, index) else "advanced"
            view = kind in api.VIEW_SUBSCRIPTS
            # (advanced indexing copies into a new, contiguous tensor: checked against torch)
            # (an index never carries grad: torch refuses float indices; what the op may save of
            # it are the tensors in it, so a number or a value not followed adds no doubt)
            indices = [(index, node.slice)] if type(index) is Box else [(t, node.slice) for t in tensors_in(index)]
            out = self.op(node, [(base, node.value)] + indices, api.SUBSCRIPT_SAVES[kind], st,
                          storage=base.storage if view else None, layout=view)
            items = _index_items(node.slice, index, self.known_slice, st) if kind == "basic" else None
            if items is not None:
                out.shape = shapes.index(base.shape, items)
            elif type(index) is Tensor:  # ``x[mask]``, ``x[idx]``
                out.shape = shapes.by_tensor(base.shape, index.shape, index.boolean, index.integral == INDEX)
            elif type(base.shape) is tuple and isinstance(node.slice, ast.Tuple):
                # the leading whole ':' select the leading dims, whatever the rest of the index is
                lead = 0
                while lead < min(len(node.slice.elts), len(base.shape)) and _whole_slice(node.slice.elts[lead]):
                    lead += 1
                if any(d is not None and d != 1 for d in base.shape[:lead]):
                    out.shape = shapes.NONSCALAR
            if base.integral and out.grad <= NO:  # (the elements keep the dtype)
                out.integral, out.boolean = base.integral, base.boolean
            return out
        if tb is Tup:
            if type(index) is Const and isinstance(index.value, int) and -len(base.items) <= index.value < len(base.items):
                return base.items[index.value]
            if type(node.slice) is ast.Slice:  # ``pair[:2]``, ``t[1:]``: the tuple of those items
                bounds = [None if e is None else self.ev(e, st) for e in (node.slice.lower, node.slice.upper, node.slice.step)]
                if all(b is None or (type(b) is Const and type(b.value) is int) for b in bounds):
                    return Tup(base.items[slice(*(None if b is None else b.value for b in bounds))])
            return self.iter_elem(base, st, node)
        if tb is Box:
            index = _const_key(index)
            if type(node.slice) is ast.Slice:  # ``xs[::-1]``, ``xs[1:]``: a new list of the same elements
                part = Box((node, self.frame.ctx), base.kind)
                self.allocate(part.oid, st)
                if (base.oid, "*") in st.heap:
                    st.own_heap()[(part.oid, "*")] = st.heap[(base.oid, "*")]
                items = st.heap.get((base.oid, "items"))
                if type(items) is Tup:  # ``children[:-1]`` of known items: those items, in order
                    bounds = [None if e is None else self.ev(e, st)
                              for e in (node.slice.lower, node.slice.upper, node.slice.step)]
                    if all(b is None or (type(b) is Const and type(b.value) is int) for b in bounds) \
                            and (bounds[2] is None or bounds[2].value != 0):
                        st.own_heap()[(part.oid, "items")] = \
                            Tup(items.items[slice(*(None if b is None else b.value for b in bounds))])
                return part
            if type(index) is Const and (base.oid, ("k", index.value)) in st.heap:
                return st.heap[(base.oid, ("k", index.value))]
            items = st.heap.get((base.oid, "items"))
            if type(index) is Const and type(items) is Tup and type(index.value) is int \
                    and -len(items.items) <= index.value < len(items.items):
                return items.items[index.value]
            last = st.heap.get((base.oid, "last")) if type(index) is Const and index.value == -1 else None
            if last is not None and last is not UNKNOWN:
                return last
            if type(index) is Const and st.heap.get((base.oid, "sealed")) == Const(True):
                return self.keyed(self._weak(st.heap.get((base.oid, "*"), UNKNOWN)), (base.oid, index.value), st)
            before = self.frame.elements.get(("key", node.slice.id)) if type(node.slice) is ast.Name else None
            if before is not None and before[0] == base.oid:
                return self._weak(before[1])
            if type(node.slice) is ast.Name and ("index", node.slice.id) in self.frame.elements:
                elem = st.heap.get((base.oid, "*"), UNKNOWN)
                if type(elem) in (Obj, Box, Optim):  # one object each iteration, of several
                    return self._weak(elem)
                known = st.heap.get((base.oid, "items"))
                if type(known) is Tup and len(known.items) > 1:
                    # the elements, known apart (``for model in models: outs.append(model(x))``):
                    # this iteration's is one of them, its graph not the others'
                    return self._weak(elem)
                if not base.some:
                    return strong(elem, self.several)  # the loop reads them all
            elem = self._weak(st.heap.get((base.oid, "*"), UNKNOWN))
            return Optim(elem.qual, elem.params, True) if type(elem) is Optim else elem
        if tb is Layer and base.children and type(index) is Const and isinstance(index.value, int) and _counted(base) \
                and -len(base.children) <= index.value < len(base.children):
            return base.children[index.value]  # nn.Sequential(...)[i]
        if tb is Layer and base.children and (base.qual in api.MODULE_HOLDERS or base.qual in api.MODULE_CONTAINERS) \
                and type(node.slice) is ast.Slice and _counted(base) and base.root is None:
            part = self.known_slice(node.slice, st)
            if part is not None:  # ``self.convs[:-1]``: a container of those same modules, in order
                children = tuple(base.children[part])
                spec = {**base.spec, "count": len(children)} if base.spec and "count" in base.spec else base.spec
                return Layer(base.qual, spec, None, children, base.config, base.site)
        if tb is Layer and base.children and (base.qual in api.MODULE_HOLDERS or base.qual in api.MODULE_CONTAINERS) \
                and type(node.slice) is not ast.Slice:
            size = _known_length(base, st)
            if type(index) is Const and type(index.value) is int and size is not None and -size <= index.value < size:
                return base.children[index.value]  # ``net[0]``
            return self._iter_elem(base, st, node, None)  # ``self.heads[i]``: one of them, as a loop over them
        if tb is Obj:
            getitem = base.cls.lookup("__getitem__")
            if type(getitem) is Func:
                return self.invoke(getitem, [base, index], {}, st, node, bound=True)
        return UNKNOWN

    def e_Starred(self, node, st):
        return self.ev(node.value, st)

    def e_Lambda(self, node, st):
        """A function whose body is one expression (a forward hook, a sort key, a callback)."""
        a = node.args
        defaults = [self.ev(d, st) for d in a.defaults]
        kw_defaults = {arg.arg: self.ev(d, st) for arg, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None}
        closure = dict(st.locals) if st.locals is not None and self.frame.func is not None else None
        return Func(node, self.frame.module, (defaults, kw_defaults), False, None, closure)

    def e_Yield(self, node, st):
        value = self.ev(node.value, st) if node.value is not None else NONE
        prev = st.lookup("$yield")
        st.bind("$yield", value if prev is None else join(prev, value))
        # the consumer goes on from here: a generator that never ends (``while True: yield``)
        # still hands out what it yielded, with the state it had then
        self.frame.returns.append((NONE, st.copy()))
        return UNKNOWN

    def e_YieldFrom(self, node, st):
        value = self.iter_elem(self.ev(node.value, st), st, node)
        prev = st.lookup("$yield")
        st.bind("$yield", value if prev is None else join(prev, value))
        return UNKNOWN

    def e_Await(self, node, st):
        return self.ev(node.value, st)

    def e_JoinedStr(self, node, st):
        out = []  # the text, while every part is a known constant (``f"conv_{i}"`` in an unrolled loop)
        for part in node.values:  # what is formatted is evaluated: f"{np.mean(losses)}" converts
            if type(part) is ast.FormattedValue:
                value = self.ev(part.value, st)
                spec = self.ev(part.format_spec, st) if part.format_spec is not None else Const("")
                text = _formatted(value, part.conversion, spec) if out is not None else None
                out = None if text is None else out + [text]
            elif out is not None:
                out.append(part.value)
        return Const("".join(out)) if out is not None else UNKNOWN

    def known_slice(self, node: ast.Slice, st: State) -> Optional[slice]:
        """``xs[:n]``, ``x[1:-1]``, ``t[j:j + k + 1]``: the slice when each bound is a constant int
        or absent (read again from arithmetic on names and literals only, which evaluates without
        effects), else None."""
        bounds = []
        for part in (node.lower, node.upper, node.step):
            value = None
            if part is not None:
                if not _pure_arithmetic(part):
                    return None
                known = self.ev(part, st)
                if type(known) is not Const or type(known.value) is not int:
                    return None
                value = known.value
            bounds.append(value)
        return None if bounds[2] == 0 else slice(*bounds)

    def e_Slice(self, node, st):
        for part in (node.lower, node.upper, node.step):
            if part is not None:
                self.ev(part, st)
        return NUMBER

    # ----------------------------------------------------------------- attributes
    def each(self, alt: Alt, st: State, fn) -> Val:
        """Apply ``fn`` to every alternative on its own copy of the state, then join."""
        results = []
        for option in alt.options:
            s = st.copy()
            self.alternatives += 1
            try:
                value = fn(option, s)
            finally:
                self.alternatives -= 1
            if self.killed:  # this alternative raises; the others may not
                self.killed = False
            else:
                results.append((value, s))
        if not results:
            self.killed = True
            return UNKNOWN
        value = None
        for v, _ in results:
            value = v if value is None else join(value, v)
        st.become(join_states([s for _, s in results]))
        return value

    def attr(self, recv: Val, name: str, st: State, node) -> Val:
        if recv is UNFILLED_GRAD:
            self.killed = True  # an attribute of None: an AttributeError
            return UNKNOWN
        t = type(recv)
        if t is Alt and name in _STR_METHODS and all(type(o) is Const and type(o.value) is str for o in recv.options):
            return Bound(recv, name)  # ``name.startswith("fc")`` of one of several names
        if t is Alt:
            return self.each(recv, st, lambda option, s: self.attr(option, name, s, node))
        if name == "__class__" and t in (Layer, Obj) and not (t is Obj and recv.some):
            return LibRef(recv.qual) if t is Layer else recv.cls  # ``m.__class__.__name__``
        if name == "__name__" and (t is Class or t is LibRef and recv.qual in api.MODULES):
            return Const(recv.name if t is Class else recv.qual.rsplit(".", 1)[-1])
        if t is LibRef:
            return LibRef(f"{recv.qual}.{name}")
        if t is Layer and len(recv.children) == 1 and type(recv.children[0]) is Obj and recv.root is None \
                and recv.qual in api.MODULE_CONTAINERS and (recv.children[0].oid, name) in st.heap:
            # ``self.layer[i].output`` of a list of blocks made at one site: that attribute of
            # one of them (a container holds none of its own by that name)
            return self.attr(self._some(recv.children[0]), name, st, node)
        if t is Box and recv.kind == "dict" and (recv.oid, "by_attribute") in st.heap:
            if (recv.oid, ("k", name)) not in st.heap and name in _DICT_METHODS:
                return Bound(recv, name)  # ``batch.items()`` of an attribute dict
            return st.heap.get((recv.oid, ("k", name)), UNKNOWN)
        if t is Box and recv.kind == "namespace":
            if name in _MAPPING_VIEWS and (recv.oid, ("k", name)) not in st.heap:
                return Bound(recv, name)  # ``self.heads.items()`` of an ``nn.ModuleDict``
            return st.heap.get((recv.oid, ("k", name)), UNKNOWN)
        if t is Tensor:
            if name == api.GRAD_ATTRIBUTE:
                # (read back through a container or a loop, its segments may be aged copies)
                # (retained: the tensor ``retain_grad()`` was called on, every node of its graph
                # marked; a view or result of it adds a node of its own, whose .grad stays None)
                retained = bool(recv.segs) and all(("retained", s) in st.heap or ("retained", s.current) in st.heap
                                                   for s in recv.segs)
                self.emit("read_grad", node, st, (recv,), target=_receiver(node), detail="retained" if retained else "")
                if not (recv.leaf or retained) and recv.grad == YES and recv.exact and recv.roots:
                    return UNFILLED_GRAD  # a backward never fills it
            if name in api.DETACHED_ATTRIBUTES:
                return Tensor(NEVER, exact=recv.exact, shape=recv.shape, why=frozenset({("detach", node)}))
            if name == api.GRAD_ATTRIBUTE:
                return Tensor(exact=recv.exact, shape=recv.shape)
            if name == api.SHAPE_ATTRIBUTE and type(recv.shape) is tuple:
                return sizes_of(recv.shape)  # ``x.view(*x.shape[:2], -1)``
            if name == api.RANK_ATTRIBUTE and type(recv.shape) is tuple:
                return Const(len(recv.shape))
            if name == api.LEAF_ATTRIBUTE and (recv.leaf or recv.grad == NEVER):
                return Const(True)  # a leaf, or a tensor that does not require grad
            if name == api.LEAF_ATTRIBUTE and recv.grad == YES and recv.exact and recv.segs:
                return Const(False)  # made by an op from a tensor that requires grad
            if name == api.REQUIRES_GRAD and recv.exact and (recv.grad == NEVER or recv.grad == YES and not any(
                    (r, "frozen") in st.heap for r in recv.roots)):
                return Const(recv.grad == YES)  # ``grad_required.append(x.requires_grad)``
            if name in api.SEVER_ATTRIBUTES:
                # sizes are numbers; dtype, device and flags are plain values too, never tensors
                # (``.to(dtype=x.dtype)`` must not make its result "maybe" require grad)
                return NUMBER if name in api.NUMBER_ATTRIBUTES or name in api.PLAIN_ATTRIBUTES else UNKNOWN
            if name in api.TENSOR_ATTRIBUTE_VIEWS:
                return self.shaped(self.op(node, [(recv, _receiver(node))], api.TENSOR_ATTRIBUTE_VIEWS[name], st,
                                           storage=recv.storage if name in api.VIEW_ATTRIBUTES else None,
                                           layout=True if name in api.VIEW_ATTRIBUTES else None),
                                   api.SHAPE_ATTRIBUTES.get(name), [(recv, _receiver(node))], {}, st)
            if name in api.RESULT_FIELDS:
                return recv if api.RESULT_FIELDS[name] else Tensor(NEVER, exact=recv.exact)
            if recv.params is not None:  # ``dist.mean`` of ``Normal(mu, std)``: ``mu`` itself
                given = dict(recv.params[1])
                for param, _, inner in api.DISTRIBUTION_ATTRIBUTES[recv.params[0]].get(name, ()):
                    if param in given:
                        return given[param] if inner is None else self.attr(given[param], inner, st, node)
            return Bound(recv, name)
        if t is Obj:
            value = st.heap.get((recv.oid, name))
            if value is not None:
                return self._some(value) if recv.some else value
            found = recv.cls.lookup(name)
            if type(found) is Func:
                if _is_property(found.node):
                    return self.invoke(found, [recv], {}, st, node, bound=True)
                if "cached_property" in _decorator_names(found.node):
                    # computed on first access, then kept on the instance (with its graph)
                    st.own_heap()[(recv.oid, name)] = self.invoke(found, [recv], {}, st, node, bound=True)
                    return st.heap[(recv.oid, name)]
                if _is_classmethod(found.node):  # bound to the class, from an instance too
                    return Bound(recv.cls, name, found)
                if _is_static(found.node):  # ``self.helper(x)`` of a staticmethod: bound to nothing
                    return found
                return Bound(recv, name, found)
            if found is not None:
                return found
            layer = st.heap.get((recv.oid, LAYER_BASE))
            if type(layer) is Layer and name in api.MODULE_PARAMETER_ATTRIBUTES:
                return self.attr(layer, name, st, node)  # the torch layer's ``self.weight``
            optim = st.heap.get((recv.oid, OPTIM_BASE))
            if type(optim) is Optim:  # ``self.param_groups``, ``self.zero_grad`` of the base optimizer
                return self.attr(optim, name, st, node)
            if recv.cls.is_module:
                return Bound(recv, name)
            return UNKNOWN
        if t is Tup and recv.names is not None and name in recv.names:  # a named tuple's field
            return recv.items[recv.names.index(name)]
        if t is Tup and recv.names is not None and name == "_replace":
            return Bound(recv, name)
        if t is ModRef:
            return recv.module.env.get(name, UNKNOWN) if recv.module is not None else UNKNOWN
        if t is Class:
            found = recv.lookup(name)
            if type(found) is Func and _is_classmethod(found.node):  # ``SO2.from_matrix(m)``: cls is SO2
                return Bound(recv, name, found)
            if found is None and name == api.FUNCTION_APPLY and _autograd_function(recv):
                return Bound(recv, name)  # ``GradReverse.apply(x, alpha)``
            return found if found is not None else UNKNOWN
        if t is Layer:
            if name in api.MODULE_PARAMETER_ATTRIBUTES and recv.root is not None:
                return Tensor(YES, True, roots=frozenset({recv.root}), storage=recv.root)
            if name in api.MODULE_PARAMETER_ATTRIBUTES and recv.qual in api.MODULE_CONTAINERS and recv.children \
                    and all(type(c) is Layer and c.root is not None for c in recv.children):
                # one of a ModuleList's layers (``ms[i].weight``, ``for m in ms: m.bias``): its
                # parameter is one of theirs, each a leaf that requires grad
                value = None
                for c in recv.children:
                    p = Tensor(YES, True, roots=frozenset({c.root}), storage=c.root)
                    value = p if value is None else join(value, p)
                return value
            key = _layer_attribute(recv, name)
            if key is not None and key in st.heap:  # ``m.from_idx`` set on a built layer
                return st.heap[key]
            return Bound(recv, name)
        if t is Box and recv.kind == "namespace":
            return st.heap.get((recv.oid, ("k", name)), UNKNOWN)
        if t is Optim and name == api.PARAM_GROUPS and not recv.some:
            return self.param_groups(recv, node, st)
        if t in (Optim, Box, Iter) or (t is Const and type(recv.value) is str and name in _STR_METHODS):
            return Bound(recv, name)
        if t is Super:
            for base in recv.cls.bases:
                if type(base) is Class:
                    found = base.lookup(name)
                    if type(found) is Func:
                        return found if _is_static(found.node) else Bound(recv.obj, name, found)
            return Bound(recv, name)
        return UNKNOWN

    def argument_parser(self, parser: Box, name, args, kwargs, node, st: State) -> Val:
        """An ``argparse.ArgumentParser``: what ``add_argument`` declares, and the namespace
        ``parse_args([])`` (``args=[]``, as notebooks call it) makes of the defaults alone. Given
        the command line (``parse_args()``), the values are not known."""
        heap = st.own_heap()
        dests = heap.get((parser.oid, "dests"))
        if name == "add_argument":
            dest, default = _argument_default([v for v, _ in args], {k: v for k, (v, _) in kwargs.items()})
            if dest is None:
                heap[(parser.oid, "dests")] = UNKNOWN  # an argument we cannot name: none is known
            elif type(dests) is Tup:
                heap[(parser.oid, ("k", dest))] = default
                if not any(d.value == dest for d in dests.items):
                    heap[(parser.oid, "dests")] = Tup(dests.items + (Const(dest),))
            return UNKNOWN
        if name == "set_defaults" and type(dests) is Tup and UNBOUND not in kwargs:
            for key, (value, _) in kwargs.items():
                heap[(parser.oid, ("k", key))] = value
                if not any(d.value == key for d in dests.items):
                    dests = Tup(dests.items + (Const(key),))
            heap[(parser.oid, "dests")] = dests
            return NONE
        if name in ("add_argument_group", "add_mutually_exclusive_group"):
            return parser  # (their arguments land in the parser's namespace)
        if name in ("parse_args", "parse_known_args"):
            given = args[0][0] if args else kwargs.get("args", (NONE, None))[0]
            empty = given == Const("") or type(given) is Box and _known_length(given, st) == 0 \
                or type(given) is Tup and not given.items
            if not empty or type(dests) is not Tup:
                return UNKNOWN
            box = Box((node, self.frame.ctx), "namespace")
            self.allocate(box.oid, st)
            heap = st.own_heap()
            for d in dests.items:
                heap[(box.oid, ("k", d.value))] = heap.get((parser.oid, ("k", d.value)), UNKNOWN)
            if name == "parse_known_args":  # (the namespace, the arguments it did not know)
                rest = Box((node, self.frame.ctx, "rest"), "list")
                self.allocate(rest.oid, st)
                return Tup((box, rest))
            return box
        return UNKNOWN

    def namespace(self, kwargs: dict, node, st: State) -> Box:
        """``SimpleNamespace(lr=0.1, fix_encoder=True)``: an object whose attributes are those
        keywords (and what is assigned to it later), like a dict read by attribute."""
        box = Box((node, self.frame.ctx), "namespace")
        self.allocate(box.oid, st)
        heap = st.own_heap()
        for key, (value, _) in kwargs.items():
            if key is not UNBOUND:  # (``**options``: names not known, read as unknown)
                heap[(box.oid, ("k", key))] = value
        return box

    # ----------------------------------------------------------------- calls
    def call(self, callee: Val, args: list, kwargs: dict, node, st: State) -> Val:
        t = type(callee)
        if t is LibRef and callee.qual in NAMESPACES and not args:
            return self.namespace(kwargs, node, st)
        if t is LibRef and callee.qual == ARGUMENT_PARSER:  # its arguments' defaults, followed
            box = Box((node, self.frame.ctx), "argparser")
            self.allocate(box.oid, st)
            st.own_heap()[(box.oid, "dests")] = Tup(())
            return box
        if t is LibRef and callee.qual in api.GRAD_SCALERS:
            box = Box((node, self.frame.ctx), GRAD_SCALER)
            self.allocate(box.oid, st)
            return box
        if t is LibRef and callee.qual in DEQUES:  # a list for what the analysis follows
            return self.builtin_call("list", args[:1], {}, node, st)
        if t is LibRef:
            if not is_torch(callee.qual) and callee.qual not in READS_ITS_ARGUMENTS:
                # ``random.shuffle(xs)`` may change it in place
                for v, _ in [*args, *kwargs.values()]:
                    if type(v) is Box:
                        forget_items(st, v)
            return self.torch_call(callee.qual, args, kwargs, node, st)
        if t is Alt:
            return self.each(callee, st, lambda option, s: self.call(option, args, kwargs, node, s))
        if t in (Func, Obj, Class) or (t is Bound and callee.func is not None):
            entered = [(self.enter(a, n), n) for a, n in args]
            copies = [(e, a) for (e, _), (a, _) in zip(entered, args) if e is not a]
            if copies:  # an argument that changes itself in the callee (``h.detach_()``) is
                # the caller's too, not only the copy that carries where it entered
                before = {(id(a), id(b)) for a, b in st.swaps}
                out = self.call_user(callee, t, entered, kwargs, node, st)
                for old, new in [(a, b) for a, b in st.swaps if (id(a), id(b)) not in before]:
                    for copy, original in copies:
                        if old is copy:
                            retarget(st, original, new)
                return out
            args = entered
        return self.call_user(callee, t, args, kwargs, node, st)

    def call_user(self, callee: Val, t: type, args: list, kwargs: dict, node, st: State) -> Val:
        if t is Bound:
            return self.method_call(callee, args, kwargs, node, st)
        if t is Func:
            return self.call_func(callee, [a for a, _ in args], {k: v for k, (v, _) in kwargs.items()}, st, node)
        if t is Class:
            return self.instantiate(callee, args, kwargs, node, st)
        if t is TupleType:
            return self.named_tuple(callee.names, args, kwargs)
        if t is Obj:
            # a ``__call__`` of the project's classes wins over ``nn.Module``'s (NeMo's
            # ``NonTrainableNM.__call__`` runs ``forward`` under ``no_grad``)
            method = callee.cls.lookup("__call__")
            if type(method) is Func or not callee.cls.is_module:
                if type(method) is Func:
                    return self.call_func(method, [callee] + [a for a, _ in args],
                                          {k: v for k, (v, _) in kwargs.items()}, st, node, bound=True)
                return self.unknown_call(args, kwargs)
            return self.module_call(callee, args, kwargs, node, st)
        if t is Layer:
            return self.run_hooks(callee, args, self.call_layer(callee, args, node, st), node, st)
        if t is Partial:
            return self.call(callee.func, list(callee.args) + list(args), {**callee.kwargs, **kwargs}, node, st)
        if t is Builtin:
            return self.builtin_call(callee.name, args, kwargs, node, st)
        for v, _ in [*args, *kwargs.values()]:
            if type(v) is Box:  # (unresolved code may add keys or items to it)
                forget_items(st, v)
        return self.unknown_call(args, kwargs)

    def run_hooks(self, module: Val, args, out: Val, node, st: State) -> Val:
        """Forward hooks registered on the module see (module, inputs, output) after each call."""
        hooks = st.heap.get((module, "$hooks"))
        if type(hooks) is Tup:
            for hook in hooks.items:
                returned = self.call_func(hook, [module, Tup(a for a, _ in args), out], {}, st, node)
                if type(returned) is Tensor:
                    out = returned  # a hook that returns a value replaces the output
                elif type(out) is Tensor and out.storage is not None and (out.storage, "required") in st.heap:
                    out = st.heap[(out.storage, "required")]  # ``output.requires_grad_(True)``
        return out

    def unknown_call(self, args, kwargs) -> Val:
        """Something we cannot resolve: it may pass its arguments' graphs on, or not. So they
        are held weakly: a backward over the result may walk them (a maybe, never an error) and
        frees them only maybe (a copy, a detached result would free nothing)."""
        ts = [t for v, _ in list(args) + list(kwargs.values()) for t in tensors_in(v) if t.grad != NO]
        if not ts:
            return UNKNOWN
        segs = frozenset().union(*(t.segs for t in ts))
        return Tensor(MAYBE, False, segs, frozenset().union(*(t.roots for t in ts)), merge_via(ts), False, segs)

    def call_func(self, fn: Func, args: list, kwargs: dict, st: State, node, bound=False) -> Val:
        if fn.is_gen is None:  # most functions defined are never called
            module = fn.module
            fn.is_gen = module.generators.get(id(fn.node))
            if fn.is_gen is None:
                fn.is_gen = module.generators[id(fn.node)] = _is_generator(fn.node, module.source_of(fn.node))
        if fn.is_gen:
            return Iter(gen=(fn, tuple(args), tuple(kwargs.items()), node, bound))
        return self.invoke(fn, args, kwargs, st, node, bound)

    def invoke(self, fn: Func, args: list, kwargs: dict, st: State, node, bound=False,
               unknown_rest=False, generator=False) -> Val:
        self.called.add(fn.node)
        if type(fn.node.body) is LazyBody:
            try:
                fn.node.body.force()
            except SourceError:  # a syntax error in it: the analysed file's is the user's to see
                if fn.module is self.main:
                    raise
                return self.unknown_call([(a, None) for a in args], {k: (v, None) for k, v in kwargs.items()})
        if len(self.frames) > MAX_CALL_DEPTH or sum(f.func is fn for f in self.frames) >= MAX_RECURSION:
            return self.unknown_call([(a, None) for a in args], {k: (v, None) for k, v in kwargs.items()})
        # remembered across analyses only for modules kept across them: the analysed file is
        # parsed anew each time, and a memo keyed by its old syntax trees would keep them all
        # alive (it shares its tree with its copy as a loaded module: what was too costly
        # there is tried again here)
        kept = fn.module is not self.main
        # a call may spend at most three quarters of what its caller has left: the caller
        # mostly finishes, and a model's calls nested ten deep (a trainer, the model, its
        # stages, their blocks, a block's layers) keep a twentieth of it, not a thousandth
        # (a call from a module's top level, ``main()``, is the program itself: it has several)
        own = self.executed + CALL_BUDGET * (1 if self.frame.func is not None else TOP_LEVEL_CALLS)
        limit = min(self.limit, own, self.executed + (self.limit - self.executed) * 3 // 4)
        costly = _COSTLY if kept else self.costly
        if limit - self.executed <= costly.get(fn.node, -1):
            # it ran out of a budget at least this large before: it would again, and all it
            # did would be dropped (a third of all steps went to such calls)
            self.truncated.append((fn.node, fn.module.path))
            return self.unknown_call([(a, None) for a in args], {k: (v, None) for k, v in kwargs.items()})
        unknown_rest = unknown_rest or UNBOUND in kwargs
        key = _memo_key(fn, args, kwargs, st.grad) if kept and not (generator or unknown_rest) else None
        if key is not None:
            hit = _PLAIN_CALLS.get(key)
            if hit is not None:
                return hit
            before = (dict(st.heap), dict(st.freed), dict(st.wfreed), len(self.segs), len(self.reports),
                      len(self.trained))
        outer = self.frame.ctx
        # a container's layer is called in a context (its call, i) of its own already
        # (``call_layer``): the call is not counted twice, so deep models keep their callers
        full = outer if outer and type(outer[0]) is tuple and outer[0][0] is node else (node,) + outer
        ctx = full[:CONTEXT_DEPTH]
        shared = fn.module is self.frame.module
        grad = st.grad if fn.grad_mode is None else fn.grad_mode
        locals_ = _bind_params(fn, args, kwargs, unknown_rest)
        if fn.node.args.kwarg and not unknown_rest:
            locals_[fn.node.args.kwarg.arg] = self.keywords_dict(fn, kwargs, ctx, st)
        if fn.closure:
            locals_ = {**fn.closure, **locals_}
        callee = State(locals_, st.globals if shared else fn.module.env, st.heap, st.freed, grad, st.wfreed,
                       st.owned if shared else st.owned | GLOBALS)
        frame = Frame(fn, fn.module, ctx, (self.stmt, self.frame.module.path),
                      self.frame.truncated or len(full) > CONTEXT_DEPTH)
        saved_frame, saved_stmt, saved_limit = self.frame, self.stmt, self.limit
        start, self.limit = self.executed, limit
        depth, reports = (len(self.frames), len(self.created)), dict(self.reports)
        self.frame = frame
        self.frames.append(frame)
        offs = len(self.grad_off)
        if fn.grad_mode is False:
            self.grad_off.append(fn.grad_site)
        try:
            if type(fn.node) is ast.Lambda:
                frame.returns.append((self.ev(fn.node.body, callee), callee))
                out = None
            else:
                out = self.block(fn.node.body, callee)
        except OverBudget:
            _remember_cost(costly, fn.node, limit - start)
            self.abandon(depth, reports, fn.node, fn.module)
            del self.grad_off[offs:]
            self.frames.pop()
            self.frame, self.stmt, self.limit = saved_frame, saved_stmt, saved_limit
            return self.unknown_call([(a, None) for a in args], {k: (v, None) for k, v in kwargs.items()})
        del self.grad_off[offs:]
        self.frames.pop()
        self.frame, self.stmt, self.limit = saved_frame, saved_stmt, saved_limit
        results = frame.returns + ([(NONE, out)] if out is not None else [])
        end = join_states([s for _, s in results])
        if end is None:
            self.killed = True  # every path through the callee raises
            return UNKNOWN
        st.adopt(end)
        for old, new in end.swaps:  # (``blocks.append(m)``, ``h.detach_()`` in the callee)
            retarget(st, old, new)
        if fn.grad_mode is None and end.grad != grad:
            # a bare ``torch.set_grad_enabled(False)`` in the callee switches the mode for the
            # whole process, past its return (a decorator's mode is restored on return)
            st.grad = end.grad
        if shared:
            st.globals = end.globals
            st.owned = (st.owned & ~GLOBALS) | (end.owned & GLOBALS)
            end.owned &= ~GLOBALS
        if generator:
            return end.locals.get("$yield", UNKNOWN)
        value = None
        for v, _ in results:
            value = v if value is None else join(value, v)
        value = value if value is not None else NONE
        if key is not None and _plain(value) and end.grad == grad and not end.swaps and before == (end.heap, end.freed, end.wfreed, len(self.segs),
                                                             len(self.reports), len(self.trained)):
            _remember(key, value)
        return value

    def keywords_dict(self, fn: Func, kwargs: dict, ctx, st: State) -> Box:
        """The ``**kwargs`` of a call whose keywords are all named: a dict of the ones no
        parameter takes, which a call ``g(**kwargs)`` passes on by name while it is unchanged."""
        a = fn.node.args
        taken = {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs}
        extra = {k: v for k, v in kwargs.items() if k not in taken}
        box = Box((a.kwarg, ctx), "dict")
        self.allocate(box.oid, st)
        heap = st.own_heap()
        elem = None
        for key, value in extra.items():
            heap[(box.oid, ("k", key))] = value
            elem = value if elem is None else join(elem, value)
        if elem is not None:
            heap[(box.oid, "*")] = elem
        note_keys(st, box, list(extra))
        heap[(box.oid, "kwkeys")] = Tup(Const(k) for k in extra)
        return box

    def named_tuple(self, names: tuple, args, kwargs, defaults=None) -> Tup:
        """``P(a, b=...)`` of a named tuple class: its items by position, then by name, then
        the class's defaults (unknown where none)."""
        items = [v for v, _ in args[:len(names)]]
        for name in names[len(items):]:
            items.append(kwargs[name][0] if name in kwargs else (defaults or {}).get(name, UNKNOWN))
        return Tup(items, names)

    def instantiate(self, cls: Class, args, kwargs, node, st) -> Val:
        if cls.named_tuple:  # ``class P(NamedTuple): a: Tensor``
            at_class = State(None, cls.module.env, st.heap, st.freed, st.grad, st.wfreed, st.owned | GLOBALS)
            defaults = {name: self.ev(expr, at_class) for name, kind, expr in cls.fields if kind == "default"}
            return self.named_tuple(tuple(name for name, _, _ in cls.fields), args, kwargs, defaults)
        by_attribute = _dict_class(cls)
        if by_attribute is not None:  # ``class AttrDict(dict): __getattr__ = dict.__getitem__``
            box = self.builtin_call("dict", args, kwargs, node, st)
            if by_attribute and type(box) is Box:
                st.own_heap()[(box.oid, "by_attribute")] = cls  # (``type(out)(pairs)`` makes another)
            return box
        obj = Obj((node, self.frame.ctx), cls)
        self.allocate(obj.oid, st)
        if cls.is_module:  # nn.Module.__init__ sets it: a module is made in training mode
            st.own_heap()[(obj.oid, api.TRAINING_ATTRIBUTE)] = Const(True)
        # a dataclass's generated __init__, unless its body defines one (which dataclass keeps)
        generated = cls.fields is not None and type(cls.attrs.get("__init__")) is not Func
        init = not generated and cls.lookup("__init__")
        if type(init) is Func:
            cut = len(self.truncated)
            whole = len(self.frames) < MAX_CALL_DEPTH and sum(f.func is init for f in self.frames) < MAX_RECURSION
            self.invoke(init, [obj] + [a for a, _ in args], {k: v for k, (v, _) in kwargs.items()},
                        st, node, bound=True)
            if whole and len(self.truncated) == cut:
                st.own_heap()[(obj.oid, BUILT)] = Const(True)  # its __init__ ran to its end
        elif generated:
            self.init_fields(obj, cls, args, kwargs, node, st)
        elif _layer_base(cls) is not None:  # ``class WSConv2d(nn.Conv2d): ...`` without an __init__
            self.build_layer_base(obj, _layer_base(cls), args, kwargs, node, st)
        return obj

    def build_layer_base(self, obj: Obj, qual: str, args, kwargs, node, st: State) -> None:
        """The torch layer a project's subclass of it (``class Conv2d(nn.Conv2d)``) is built on,
        kept on the instance: its parameters (``self.weight``) and its forward are that layer's."""
        layer = self.torch_call(qual, args, kwargs, node, st)
        if type(layer) is Layer:
            st.own_heap()[(obj.oid, LAYER_BASE)] = layer

    def dataclass_fields(self, node: ast.ClassDef, bases: list, st: State) -> tuple:
        """The fields of a dataclass, its dataclass bases' first: the annotated names of its
        body, with ``field(default_factory=f)``, ``field(default=x)`` or a plain default."""
        fields = {}
        for base in bases:
            if type(base) is Class and base.fields is not None:
                fields.update((name, (name, kind, expr)) for name, kind, expr in base.fields)
        for stmt in node.body:
            if type(stmt) is not ast.AnnAssign or type(stmt.target) is not ast.Name:
                continue
            ann = stmt.annotation.value if type(stmt.annotation) is ast.Subscript else stmt.annotation
            kind_of = self.ev(ann, st)
            if type(kind_of) is LibRef and kind_of.qual in DATACLASS_CLASSVAR:
                continue
            name, value, kind, expr = stmt.target.id, stmt.value, "required", None
            made_by = self.ev(value.func, st) if type(value) is ast.Call else None
            if type(made_by) is LibRef and made_by.qual == DATACLASS_FIELD:
                for kw in value.keywords:
                    if kw.arg in ("default_factory", "default"):
                        kind, expr = ("factory" if kw.arg == "default_factory" else "default"), kw.value
            elif value is not None:
                kind, expr = "default", value
            fields[name] = (name, kind, expr)
        return tuple(fields.values())

    def init_fields(self, obj: Obj, cls: Class, args, kwargs, node, st: State) -> None:
        """A dataclass's generated ``__init__``: each field from its argument, its default, or
        a new value of its ``default_factory`` (a list of its own per instance)."""
        at_class = State(None, cls.module.env, st.heap, st.freed, st.grad, st.wfreed, st.owned | GLOBALS)
        for i, (name, kind, expr) in enumerate(cls.fields):
            if i < len(args) and type(args[i][1]) is not ast.Starred:
                value = args[i][0]
            elif name in kwargs:
                value = kwargs[name][0]
            elif kind == "factory":
                maker = self.ev(expr, at_class)
                if type(maker) is Builtin and maker.name in ("list", "dict", "set"):  # one per field
                    value = Box(((node, name), self.frame.ctx), "dict" if maker.name == "dict" else "list")
                    self.allocate(value.oid, st)
                else:
                    value = self.call(maker, [], {}, node, st)
            elif kind == "default":
                value = self.ev(expr, at_class)
            else:
                value = UNKNOWN
            st.own_heap()[(obj.oid, name)] = value

    def all_any(self, every: bool, v: Val, st: State) -> Val:
        """``all(b.numel() > 0 for b in bufs)``: Python runs the generator's test on the items;
        the test on what stands for every item decides it when it is one constant: all true
        makes ``all`` true, all false makes ``any`` false (whatever the number of items)."""
        made = self.list_per_item(v.wrap[1], st, outer=v.wrap[2]) \
            if type(v) is Iter and v.wrap is not None and v.wrap[0] == "genexp" else None
        items = st.heap.get((made.oid, "items")) if made is not None else None
        if type(items) is Tup:  # ``any(w in name for w in wanted)`` of a list known item by item
            v = items
        if type(v) is Iter and v.wrap is not None and v.wrap[0] == "genexp" \
                and len(v.wrap[1].generators) == 1 and not v.wrap[1].generators[0].ifs:
            tests = [truth(self._comprehension(v.wrap[1], st, [v.wrap[1].elt], v.wrap[2])[0])]
        elif type(v) is Tup:
            tests = [truth(x) for x in v.items]
        else:
            return UNKNOWN
        if every and all(t is True for t in tests):
            return Const(True)
        if not every and all(t is False for t in tests):
            return Const(False)
        if type(v) is Tup and None not in tests:
            return Const(any(tests))  # (``all`` with a false item, ``any`` with a true one)
        return UNKNOWN

    def builtin_call(self, name, args, kwargs, node, st) -> Val:
        vals = [a for a, _ in args]
        if UNBOUND in kwargs and name in _COUNTS_ARGUMENTS:
            if name == "zip" and len(vals) == 1 and type(vals[0]) is Tup and 0 < len(vals[0].items) <= MAX_UNROLLED:
                # ``states, actions, rewards = zip(*batch)`` of rows of n fields (their number not
                # known): n columns, each a tuple of so many of its field
                columns = []
                for i, field in enumerate(vals[0].items):
                    column = Box(((node, i), self.frame.ctx), "list")
                    self.allocate(column.oid, st)
                    st.own_heap()[(column.oid, "*")] = field
                    columns.append(column)
                return Tup(columns)
            # ``zip(*outputs)`` of a list whose length is not known: its arguments are not
            # known (``args`` holds one element standing for all of them, not the list)
            return Iter() if name in ("zip", "map") else UNKNOWN
        if name == api.SAVE_FOR_BACKWARD:  # ``ctx.save_for_backward(x, out)`` in a custom function's forward
            if self.saving is not None:
                self.saving.update(t.storage for v in vals for t in tensors_in(v))
            return NONE
        if name == "range":
            start = vals[0] if len(vals) >= 2 else Const(0)
            if len(vals) in (1, 2):
                return Iter(wrap=("range", start, vals[-1]))
            if len(vals) == 3 and type(vals[2]) is Const and type(vals[2].value) is int and vals[2].value:
                return Iter(wrap=("range", start, vals[1], vals[2]))  # ``range(n - 1, 0, -1)``
            return Iter(wrap=("range", start))
        if name == "enumerate" and vals:
            start = vals[1] if len(vals) > 1 else kwargs.get("start", (Const(0), None))[0]
            return Iter(wrap=("enumerate", vals[0], start))
        if name == "zip":
            return Iter(wrap=("zip", tuple(vals)))
        if name == "map" and len(args) == 2 and not kwargs and type(node) is ast.Call \
                and all(_pure_reference(a) for _, a in args):
            # ``map(torch.exp, xs)``: ``(torch.exp(item) for item in xs)``, as Python runs it
            gen = node.__dict__.get("_gg_map")
            if gen is None:
                item = "$map"
                gen = node._gg_map = ast.fix_missing_locations(ast.copy_location(ast.GeneratorExp(
                    elt=ast.Call(func=args[0][1], args=[ast.Name(item, ast.Load())], keywords=[]),
                    generators=[ast.comprehension(target=ast.Name(item, ast.Store()), iter=args[1][1], ifs=[],
                                                  is_async=0)]), node))
            return self.ev(gen, st)
        if name in ("list", "dict", "set") and not vals and not kwargs:  # a new empty container
            box = Box((node, self.frame.ctx), "dict" if name == "dict" else "list")
            self.allocate(box.oid, st)
            return box
        if name == "filter" and len(args) == 2 and not kwargs and _requires_grad_test(args[0][1]):
            # ``filter(lambda p: p.requires_grad, net.parameters())``: to an optimizer, the
            # parameters themselves (it steps none without a gradient)
            return self.builtin_call("iter", args[1:], {}, node, st)
        if name in ("iter", "reversed", "sorted", "list", "tuple", "set") and vals:
            v = vals[0]
            if name == "tuple" and type(v) is Tup:
                return v
            if name == "tuple" and type(v) is Iter and v.wrap is not None and v.wrap[0] == "genexp":
                made = self.tuple_per_item(v.wrap[1], v.wrap[2], st)
                if made is not None:
                    return made
            if type(v) in (Box, Iter, Tup, Obj, Tensor):
                if name in ("list", "sorted", "set") or (name == "tuple" and type(v) is Iter):
                    # made now, once: ``tuple(f(p) for p in ps)`` holds one graph per element
                    # (iterated lazily, each walk would build them afresh)
                    box = Box((node, self.frame.ctx), "list")
                    self.allocate(box.oid, st)  # (the last iteration's copy and its writes are gone)
                    st.own_heap()[(box.oid, "*")] = self.iter_elem(v, st, node)
                    items = st.heap.get((v.oid, "items")) if type(v) is Box and name == "list" else None
                    if type(items) is Tup:  # ``list(feats)``: the same items, in order
                        st.own_heap()[(box.oid, "items")] = items
                    elif name in ("sorted", "set") and type(items := st.heap.get((v.oid, "items")) if type(v) is Box
                                                              else v if type(v) is Tup else None) is Tup \
                            and not kwargs and all(type(x) is Const for x in items.items):
                        # ``sorted(set(save))`` of known numbers: those numbers, each once (in order)
                        try:
                            known = sorted({x.value for x in items.items}) if name == "sorted" or len(vals) == 1 \
                                else None
                        except TypeError:  # (not comparable)
                            known = None
                        if known is not None and len(known) <= MAX_UNROLLED:
                            st.own_heap()[(box.oid, "items")] = Tup(Const(k) for k in known)
                            st.own_heap()[(box.oid, "count")] = Const(len(known))
                    elif name == "list" and type(v) is Tup and len(v.items) <= MAX_UNROLLED \
                            and all(type(x) is Const for x in v.items):
                        # ``list(device_ids)`` of a tuple of constants: its items, as many as it has
                        st.own_heap()[(box.oid, "items")] = Tup(v.items)
                        st.own_heap()[(box.oid, "count")] = Const(len(v.items))
                    elif name == "list" and type(v) is Iter and v.wrap is not None and v.wrap[0] == "view" \
                            and (known := self.known_items(v, st)) is not None and len(known) <= MAX_UNROLLED:
                        # ``list(convs.values())`` of a dict whose keys are all known: its values, in order
                        st.own_heap()[(box.oid, "items")] = Tup(known)
                        st.own_heap()[(box.oid, "count")] = Const(len(known))
                    count = _known_length(v, st) if name == "list" and type(v) is Iter and v.wrap is not None \
                        and v.wrap[0] == "range" else None
                    if count is not None and count <= MAX_UNROLLED:  # ``list(range(n_gpus))``: n numbers
                        st.own_heap()[(box.oid, "items")] = Tup(Const(k) for k in _range_values(v.wrap))
                        st.own_heap()[(box.oid, "count")] = Const(count)
                    return box
                return v if type(v) in (Iter, Box) else Iter(self.iter_elem(v, st, node))
            return UNKNOWN
        if name == "next" and vals:
            return self.iter_elem(vals[0], st, node)
        if name == "sum" and vals:
            elem = strong(self.iter_elem(vals[0], st, node), self.several)  # consumes every element
            if type(elem) is Tensor:
                out = self.op(node, [(elem, args[0][1])], False, st)
                if len(vals) == 1:  # 0 + each element: their broadcast, which their join covers
                    out.shape = elem.shape
                    items = _items_of(vals[0], st)
                    if items and all(type(i) is Tensor or _number(i) for i in items):
                        # known one by one: ``sum([scalar_loss, per_gpu_losses])`` is a vector
                        out.shape = shapes.broadcast([i.shape if type(i) is Tensor else () for i in items])
                return out
            return UNKNOWN
        if name in ("min", "max"):
            out = None
            for v in vals:
                out = v if out is None else join(out, v)
            if type(out) is Tensor and len(vals) > 1:
                # ``max(0, beta + d)``: one of them, as their values decide: a graph that not
                # every one of them holds is held on some paths only
                common = frozenset.intersection(*(v.segs if type(v) is Tensor else frozenset() for v in vals))
                if out.segs - common - out.maybe:
                    out = out.but(maybe=out.maybe | (out.segs - common))
            return out if out is not None else UNKNOWN
        if name == "super":
            owner = self.frame.func.owner if self.frame.func else None
            first = st.locals.get("$self") if st.locals else None
            if owner is not None and first is not None:
                return Super(first, owner)
            return UNKNOWN
        if name == "staticmethod" and len(vals) == 1 and type(vals[0]) is Func:
            return vals[0]  # (read off its class, the function itself: no instance bound)
        if name == "type" and len(vals) == 3:
            return self.class_of_call(vals, node, st)
        if name == "type" and len(vals) == 1 and type(vals[0]) is Const \
                and type(vals[0].value) in (int, float, str, bool):
            return Builtin(type(vals[0].value).__name__)
        if name == "type" and len(vals) == 1 and type(vals[0]) in (Tup, Box, Tensor):
            # ``type(outputs) not in (tuple, list)``: a tuple, a list, a dict, or a tensor (of
            # some tensor class: a parameter's is not ``torch.Tensor`` itself)
            v = vals[0]
            if type(v) is Box and type(st.heap.get((v.oid, "by_attribute"))) is Class:
                return st.heap[(v.oid, "by_attribute")]  # the project's dict class it was made of
            return Builtin("tuple") if type(v) is Tup else Builtin(v.kind) if type(v) is Box \
                and v.kind in ("list", "dict", "set") else TENSOR_TYPE if type(v) is Tensor else UNKNOWN
        if name == "hasattr" and len(vals) == 2 and type(vals[0]) is Obj and type(vals[1]) is Const \
                and isinstance(vals[1].value, str) and (vals[0].cls.lookup(vals[1].value) is not None
                                                         or (vals[0].oid, vals[1].value) in st.heap):
            return Const(True)  # a method of its class, or an attribute set on it
        if name == "hasattr" and len(vals) == 2 and type(vals[0]) is Obj and type(vals[1]) is Const \
                and isinstance(vals[1].value, str) and _attributes_known(vals[0], vals[1].value, st):
            return Const(False)  # ``hasattr(self, "neck")`` of a detector built without one
        if name == "hasattr" and len(vals) == 2 and type(vals[0]) is Tensor and type(vals[1]) is Const \
                and isinstance(vals[1].value, str) and api.tensor_has(vals[1].value):
            return Const(True)  # ``v.item() if hasattr(v, "item") else v``
        if name == "isinstance" and len(vals) == 2:
            return _isinstance(vals[0], vals[1])
        if name in ("all", "any") and len(vals) == 1 and not kwargs:
            return self.all_any(name == "all", vals[0], st)
        if name == "getattr" and len(vals) >= 2 and type(vals[1]) is Const and isinstance(vals[1].value, str):
            return self.attr(vals[0], vals[1].value, st, node)
        if name == "setattr" and len(vals) == 3 and type(vals[1]) is Const and type(vals[1].value) is str \
                and vals[1].value.isidentifier() and type(args[0][1]) is ast.Name:
            # ``setattr(self, k, v)`` of a known name: ``self.<k> = v`` (that statement made once
            # per call site and name, as a site of its own)
            made = node.__dict__.setdefault("_gg_setattr", {})
            target = made.get(vals[1].value)
            if target is None:
                target = made[vals[1].value] = ast.copy_location(
                    ast.Attribute(value=args[0][1], attr=vals[1].value, ctx=ast.Store()), node)
            self.assign(target, vals[2], st)
            return NONE
        if name == "dict" and len(vals) == 1 and type(vals[0]) is Iter and vals[0].wrap is not None \
                and vals[0].wrap[0] == "genexp" and type(vals[0].wrap[1].elt) is ast.Tuple \
                and len(vals[0].wrap[1].elt.elts) == 2:
            made = self.dict_per_key(vals[0].wrap[1], st, vals[0].wrap[1].elt.elts, vals[0].wrap[2])
            if made is not None:  # ``dict((k, gather([o[k] for o in outs])) for k in first)``
                return made
        if name == "dict" and vals and type(vals[0]) in (Box, Iter, Tup):
            return self.dict_of(vals[0], node, st)
        if name == "dict" and not vals and kwargs:  # ``dict(neg_scale=5.0, neg_bias=0.1)``
            box = Box((node, self.frame.ctx), "dict")
            self.allocate(box.oid, st)
            elem = None
            for key, (value, _) in kwargs.items():
                st.own_heap()[(box.oid, ("k", key))] = value
                elem = value if elem is None else join(elem, value)
            st.own_heap()[(box.oid, "*")] = elem
            note_keys(st, box, list(kwargs))
            if UNBOUND not in kwargs:
                st.own_heap()[(box.oid, "kwkeys")] = Tup(Const(k) for k in kwargs)
            return box
        if name in ("list", "dict", "set"):
            box = Box((node, self.frame.ctx), name)
            self.allocate(box.oid, st)
            return box
        if name == "len" and len(vals) == 1:
            size = _known_length(vals[0], st)
            if size is not None:
                return Const(size)
        if name in api.NUMBER_BUILTINS:  # ``int(x)``, ``len(xs)``, ``float(loss)``: a number
            return NUMBER
        return UNKNOWN

    def dict_of(self, source: Val, node, st) -> Box:
        """``dict(pairs)`` / ``OrderedDict(pairs)`` / ``dict(other_dict)``: the values kept."""
        box = Box((node, self.frame.ctx), "dict")
        self.allocate(box.oid, st)
        if type(source) is Box and source.kind == "dict":
            value = st.heap.get((source.oid, "*"))
            keys = st.heap.get((source.oid, "kwkeys"))
            if type(keys) is Tup:  # every key known: each is copied with its value
                heap = st.own_heap()
                for key in keys.items:
                    if (source.oid, ("k", key.value)) in heap:
                        heap[(box.oid, ("k", key.value))] = heap[(source.oid, ("k", key.value))]
                note_keys(st, box, [key.value for key in keys.items])
                heap[(box.oid, "kwkeys")] = keys
        else:
            pair = self.iter_elem(source, st, node)
            value = pair.items[1] if type(pair) is Tup and len(pair.items) == 2 else None
        if value is not None:
            st.own_heap()[(box.oid, "*")] = value
        st.own_heap()[(box.oid, "sealed")] = Const(True)
        pairs = source.items if type(source) is Tup else \
            getattr(st.heap.get((source.oid, "items")), "items", None) if type(source) is Box else None
        if pairs and all(type(p) is Tup and len(p.items) == 2 and _module_item(p.items[1]) for p in pairs):
            # ``nn.Sequential(OrderedDict([("conv1", conv), ("relu1", relu)]))``: its modules in order
            st.own_heap()[(box.oid, "blocks")] = Tup([p.items[1] for p in pairs])
        return box

    def function_apply(self, cls: Class, args, kwargs, node, st: State) -> Val:
        """``Cls.apply(*args)`` of a custom autograd function: its ``forward`` runs with grad
        recording off (as torch runs it), and each tensor it returns is an output of one node
        over the tensor arguments, saving tensors if the forward hands any to
        ``ctx.save_for_backward`` and the backward reads them back. (The backward itself is
        not followed.)"""
        forward = cls.lookup(api.MODULE_FORWARD)
        if type(forward) is not Func:
            return self.unknown_call(args, kwargs)
        ctx = Box((node, self.frame.ctx, "ctx"), "namespace")
        self.allocate(ctx.oid, st)
        st.own_heap()[(ctx.oid, ("k", api.SAVE_FOR_BACKWARD))] = Builtin(api.SAVE_FOR_BACKWARD)
        grad, st.grad = st.grad, False
        saving, self.saving = self.saving, set()
        try:
            out = self.call_func(forward, [ctx] + [a for a, _ in args], {k: v for k, (v, _) in kwargs.items()}, st, node)
        finally:
            st.grad = grad
            kept, self.saving = self.saving, saving
        if self.killed:
            return UNKNOWN
        made = [t for t in tensors_in(out)]
        if not made:
            return out
        backward = cls.lookup("backward")
        read = _reads_saved(backward.node) if type(backward) is Func else None
        saves = _saves_for_backward(forward.node) and read is not None
        result = self.op(node, list(args) + list(kwargs.values()), saves, st)
        if type(result) is not Tensor:
            return UNKNOWN
        seg = next((s for s in result.segs if s.site is node and s.ctx == self.frame.ctx and not s.old), None)
        if saves and seg is not None:
            # what forward saved: its inputs' memory, or its outputs' (now the result's)
            outputs = {t.storage for t in made}
            storages = frozenset(result.storage if k in outputs else k for k in kept if k is not None)
            self.keep(seg, storages, st)
            if backward.module is self.main:
                self.saved_reads[node] = read
        if type(out) is Tensor:
            result.shape = out.shape
            return result
        # (each tensor returned is an output of the node. Torch passes any other value through,
        # its tensors as the forward computed them, without grad; but a container here may be
        # a tensor the analysis did not recognise (torchdiffeq's adjoint solution): not known)
        return out.like(result if type(x) is Tensor else x if type(x) in (Const, Number) else UNKNOWN
                        for x in out.items) if type(out) is Tup else UNKNOWN

    def method_call(self, bound: Bound, args, kwargs, node, st) -> Val:
        recv, name = bound.recv, bound.name
        if bound.func is not None:
            return self.call_func(bound.func, [recv] + [a for a, _ in args],
                                  {k: v for k, (v, _) in kwargs.items()}, st, node, bound=True)
        t = type(recv)
        if t is Tensor:
            return self.tensor_method(recv, name, args, kwargs, node, st)
        if t is Tup and name == "_replace" and not args and UNBOUND not in kwargs \
                and all(k in recv.names for k in kwargs):
            # ``state._replace(h=h)``: the same named tuple with those fields given anew
            return recv.like(kwargs[n][0] if n in kwargs else v for n, v in zip(recv.names, recv.items))
        if t is Class and name == api.FUNCTION_APPLY:
            return self.function_apply(recv, args, kwargs, node, st)
        if t is Super and name == "__call__" and type(recv.obj) is Obj and recv.obj.cls.is_module:
            return self.module_call(recv.obj, args, kwargs, node, st)  # nn.Module's, from an override
        if t is Super and name in api.MODULE_MODE_METHODS and type(recv.obj) is Obj and recv.obj.cls.is_module:
            self.set_training(recv.obj, name, args, kwargs, node, st, dispatch=False)  # ``super().train(mode)``
            return recv.obj
        if t is Super and name == "__init__" and type(recv.obj) is Obj and _optimizer_base(recv.cls) is not None:
            optim = self.torch_call(_optimizer_base(recv.cls), args, kwargs, node, st)
            if type(optim) is Optim:  # ``super().__init__(params, defaults)`` of ``class SAM(Optimizer)``
                st.own_heap()[(recv.obj.oid, OPTIM_BASE)] = optim
            return NONE
        if t is Super and name == "__init__" and type(recv.obj) is Obj and _sequential_class(recv.cls) \
                and (args or kwargs):  # ``super().__init__(*layers)``: the children, in order
            self.build_layer_base(recv.obj, next(iter(api.MODULE_CONTAINERS)), args, kwargs, node, st)
            return NONE
        if t is Super and type(recv.obj) is Obj and _layer_base(recv.cls) is not None:
            if name == "__init__":  # ``super().__init__(in_channels, out_channels, 3)``
                self.build_layer_base(recv.obj, _layer_base(recv.cls), args, kwargs, node, st)
                return NONE
            layer = st.heap.get((recv.obj.oid, LAYER_BASE))
            if name == api.MODULE_FORWARD and type(layer) is Layer:  # ``super().forward(x)``
                return self.call_layer(layer, args, node, st)
        if t is Layer or (t is Obj and recv.cls.is_module):
            if name in api.MODULE_PARAMETER_METHODS:
                if t is Layer and not recv.children and recv.spec and recv.spec.get("params") is False \
                        and not recv.spec.get("summary") and (recv.qual in api.MODULE_CONTAINERS
                                                             or recv.qual in api.MODULE_HOLDERS):
                    return Iter(wrap=("empty",))  # ``nn.Sequential()`` (an exercise's stub): no parameters
                params = self.parameters(recv, st)
                if name in api.MODULE_NAMED_METHODS:
                    pairs = self.named_roots(recv, st) if not args and not kwargs else None
                    # (a loop over them runs once per origin, its name known: ``if "fc" in name``)
                    return Iter(wrap=("params", pairs, Tup((UNKNOWN, params)))) if pairs else Iter(Tup((UNKNOWN, params)))
                return Iter(params)
            if name in api.MODULE_FORWARD_HOOKS and args and type(args[0][0]) is Func:
                key = (recv, "$hooks")
                hooks = st.heap.get(key)  # (paths that registered different hooks join to unknown)
                st.own_heap()[key] = Tup((hooks.items if type(hooks) is Tup else ()) + (args[0][0],))
                return UNKNOWN  # the handle
            if t is Layer and name in api.MODULE_ADDERS and (recv.qual in api.MODULE_CONTAINERS or
                                                             recv.qual in api.MODULE_HOLDERS):
                return self.add_modules(recv, name, args, node, st)
            if name in api.MODULE_REGISTERS and t is Obj and len(args) >= 2:
                key = args[0][0].value if type(args[0][0]) is Const and isinstance(args[0][0].value, str) \
                    else "$registered@%d" % node.lineno
                st.own_heap()[(recv.oid, key)] = args[1][0]
                if name == api.REGISTER_BUFFER:
                    names = st.heap.get((recv.oid, "$buffers"), Tup(()))
                    if type(names) is not Tup or key.startswith("$"):
                        st.own_heap()[(recv.oid, "$buffers")] = UNKNOWN
                    elif all(n.value != key for n in names.items):  # (registered again: replaced)
                        st.own_heap()[(recv.oid, "$buffers")] = Tup(names.items + (Const(key),))
                return NONE
            if name in api.MODULE_BUFFER_METHODS:
                recurse = kwargs.get("recurse") or (args[0] if args and name != api.MODULE_NAMED_BUFFERS else None)
                held = self.buffers(recv, st, truth(recurse[0]) if recurse is not None else True)
                if held is None:
                    return UNKNOWN
                return Tup(Tup(pair) for pair in held) if name == api.MODULE_NAMED_BUFFERS else Tup(b for _, b in held)
            if name in api.MODULE_WALKS:
                itself, deep, named = api.MODULE_WALKS[name]
                mods = self.submodules(recv, st, deep)
                if mods is None:
                    return UNKNOWN
                mods = mods if itself else mods[1:]
                if not named:
                    return Tup(mods)
                names = self.module_names(recv, st, deep)
                names = names if names is not None and len(names) == len(mods) + (not itself) else None
                return Tup(Tup((_name_value(names[i + (not itself)]) if names is not None else UNKNOWN, m))
                           for i, m in enumerate(mods))
            if name == api.MODULE_APPLY and args and type(args[0][0]) in (Func, Bound):
                for m in self.submodules(recv, st, True, children_first=True) or ():
                    self.call(args[0][0], [(m, None)], {}, node, st)
                return recv
            if name in api.MODULE_SELF_METHODS:
                if name in api.MODULE_MODE_METHODS:
                    self.set_training(recv, name, args, kwargs, node, st)
                if name == api.REQUIRES_GRAD_SETTER:
                    flag = truth(args[0][0]) if args else truth(kwargs.get("requires_grad", (Const(True), None))[0])
                    if flag is False:
                        self.freeze(self.module_roots(recv, st, 0), st, True)
                    elif flag is True:
                        self.unfreeze(self.module_roots(recv, st, 0), st)
                return recv
            if name == api.MODULE_LOAD_STATE and "strict" not in kwargs and "assign" not in kwargs:
                for root in self.module_roots(recv, st, 0):
                    self.modified(root, node, st)
                return UNKNOWN
            if name in (api.MODULE_FORWARD, "__call__"):  # (``super().__call__(x)``: nn.Module's)
                return self.module_call(recv, args, kwargs, node, st) if t is Obj else self.call(recv, args, kwargs, node, st)
            if name in api.GRAD_RESET_METHODS:
                self.grad_reset(self.module_roots(recv, st, 0), args, kwargs, node, st)
            return UNKNOWN
        if t is Optim:
            if name in api.OPTIMIZER_STEP_METHODS:
                closure = args[0][0] if args else kwargs.get("closure", (None, None))[0]
                if type(closure) is Func:
                    self.run_closure(recv, closure, node, st)
                st.mark_stepped()
                roots = self.roots_of(recv.params, st, 0)
                for root in roots:
                    # the parameters change in place; torch's optimizers skip those whose .grad
                    # is None (no backward reached them since zero_grad())
                    if not recv.some and root not in self.several_roots and self.has_grad(root, st):
                        self.modified(root, node, st)
                self.emit("step", node, st, roots=roots)
            elif name in api.GRAD_RESET_METHODS:
                self.grad_reset(self.roots_of(recv.params, st, 0), args, kwargs, node, st)
            return UNKNOWN
        if t is Box and recv.kind == "argparser":
            return self.argument_parser(recv, name, args, kwargs, node, st)
        if t is Box and recv.kind == GRAD_SCALER:
            if name == api.GRAD_SCALER_SCALE and len(args) == 1 and not kwargs:
                # the loss itself, as far as its graph goes: the scale saves none of the loss (a
                # disabled scaler returns it unchanged), so what a backward finds is the loss's
                return args[0][0]
            if name == api.GRAD_SCALER_STEP and args:
                return self.call(self.attr(args[0][0], api.GRAD_SCALER_STEP, st, node), [], {}, node, st)
            return UNKNOWN
        if t is Box and name == "update" and recv.kind == "dict" and not args and kwargs and UNBOUND not in kwargs:
            # ``losses.update(loss_cls=loss_cls)``: each keyword a key, with its value
            keys = st.heap[(recv.oid, "kwkeys")] if _passed_on(recv, st) else None
            forget_items(st, recv)
            heap, star = st.own_heap(), (recv.oid, "*")
            for k, (v, _) in kwargs.items():
                heap[(recv.oid, ("k", k))] = v
                heap[star] = join(heap[star], v) if star in heap else v
            if keys is not None:  # its keys were all known: they still are
                known = list(dict.fromkeys([k.value for k in keys.items] + list(kwargs)))
                heap[(recv.oid, "kwkeys")] = Tup(Const(k) for k in known)
                note_keys(st, recv, known)
            return NONE
        if t is Box:
            return self.container_method(recv, name, args, node, st)
        if t is Const and type(recv.value) is str and name in _STR_METHODS:
            return _str_method(recv.value, name, [a for a, _ in args], {k: v for k, (v, _) in kwargs.items()})
        if t is Alt and name in _STR_METHODS:  # the same for each alternative, or not known
            found = [_str_method(o.value, name, [a for a, _ in args], {k: v for k, (v, _) in kwargs.items()})
                     for o in recv.options]
            return found[0] if all(type(f) is Const and f == found[0] for f in found) else UNKNOWN
        return self.unknown_call(args, kwargs)


    def param_groups(self, optim: Optim, node, st: State) -> Val:
        """``optimizer.param_groups``: one group whose "params" list holds each parameter set
        the optimizer was given, as its own tensor (a loop over it writes each in turn)."""
        roots = sorted(self.roots_of(optim.params, st, 0), key=lambda r: r.place())
        if not roots or len(roots) > MAX_UNROLLED_BLOCKS:
            return UNKNOWN
        params = [Tensor(YES, True, roots=frozenset({r}), storage=r) for r in roots]
        plist, group, groups = (Box(((node, k), self.frame.ctx), kind) for k, kind in
                                ((0, "list"), (1, "dict"), (2, "list")))
        heap = st.own_heap()
        for box in (plist, group, groups):
            self.allocate(box.oid, st)
        elem = params[0]
        for p in params[1:]:
            elem = join_elements(elem, p)
        heap[(plist.oid, "*")], heap[(plist.oid, "items")] = elem, Tup(params)
        heap[(plist.oid, "count")], heap[(plist.oid, "last")] = Const(len(params)), params[-1]
        heap[(group.oid, ("k", api.GROUP_PARAMS))], heap[(group.oid, "*")] = plist, plist
        note_keys(st, group, [api.GROUP_PARAMS])  # (and the optimizer's defaults, not known here)
        heap[(groups.oid, "*")], heap[(groups.oid, "items")] = group, Tup((group,))
        heap[(groups.oid, "count")], heap[(groups.oid, "last")] = Const(1), group
        return groups

    def grad_reset(self, roots, args, kwargs, node, st: State) -> None:
        """``zero_grad(set_to_none=True)`` (the default) leaves no ``.grad``; ``False`` zeros."""
        flag = args[0][0] if args else kwargs.get(api.SET_TO_NONE, (None, None))[0]
        if flag is None or truth(flag) is True:
            self.grads_gone(roots, st)
        self.emit("grad_reset", node, st, roots=roots)

    def buffers(self, module: Val, st: State, deep) -> Optional[list]:
        """(name, buffer) of each buffer ``module.named_buffers()`` yields: what each module's
        registered names hold now (``self.v = self.v + x`` rebinds a buffer), in order, named for
        the module's own (a submodule's dotted name is unknown); None when not all are known (a
        torch layer with running statistics, a name registered from a variable)."""
        mods = self.submodules(module, st, True) if deep is not False else [module]
        if mods is None:
            return None
        out = []
        for m in mods:
            if type(m) is Layer:
                if m.qual in api.LAYERS_WITH_BUFFERS:
                    return None
                continue
            if type(m) is not Obj:
                return None
            names = st.heap.get((m.oid, "$buffers"), Tup(()))
            if type(names) is not Tup:
                return None
            for key in names.items:
                value = st.heap.get((m.oid, key.value))
                if value is None or (value is not NONE and type(value) is not Tensor):
                    return None
                if value is not NONE and all(value is not b for _, b in out):  # (torch skips None and repeats)
                    out.append((key if m is module else UNKNOWN, value))
        return out

    def submodules(self, module: Val, st: State, deep: bool, children_first=False) -> Optional[list]:
        """``module`` and the modules it holds (all the way down if ``deep``, else its children),
        in order (each module before its children, as ``modules()``; after them with
        ``children_first``, as ``apply`` calls its function); None when some may be held where
        the analysis does not see them (a list of modules, an unknown value)."""
        out, seen = [], set()

        def walk(m, depth) -> bool:
            if id(m) in seen:
                return True
            seen.add(id(m))
            if not children_first:
                out.append(m)
            if depth > 0 and not deep:
                found = True
            elif type(m) is Layer:
                found = all(walk(c, depth + 1) for c in m.children if type(c) in (Layer, Obj)) \
                    and (m.qual not in api.MODULE_HOLDERS or bool(m.children))
            else:
                # (modules in a plain list or dict are not registered: torch's modules() skips them)
                held = [v for (oid, _), v in st.heap.items() if oid == m.oid]
                found = not (any(type(v) is Alt for v in held) or depth >= MAX_SUBMODULE_DEPTH) and all(
                    walk(v, depth + 1) for v in held if type(v) in (Layer, Obj) and (type(v) is Layer or v.cls.is_module))
            if children_first:
                out.append(m)
            return found

        return out if type(module) in (Layer, Obj) and walk(module, 0) and len(out) <= MAX_UNROLLED else None

    def module_names(self, module: Val, st: State, deep: bool) -> Optional[list]:
        """The names ``named_modules()`` / ``named_children()`` give, in ``submodules``' order
        (None for a name not known: a Sequential of a dict's layers, blocks one stands for)."""
        out, seen = [], set()

        def walk(m, path, depth):
            if id(m) in seen:
                return
            seen.add(id(m))
            out.append(path)
            if depth > 0 and not deep:
                return
            sub = (lambda name: name if not path else f"{path}.{name}") if type(path) is str else (lambda name: None)
            if type(m) is Layer:
                known = m.qual in api.MODULE_HOLDERS or m.qual in api.MODULE_CONTAINERS and m.spec.get("indexed")
                count = m.spec.get("count") if m.spec and m.spec.get("summary") else None
                for i, c in enumerate(m.children):
                    if type(c) not in (Layer, Obj):
                        continue
                    if m.spec and m.spec.get("summary"):  # one block standing for ``count``: any of their names
                        names = [sub(str(k)) for k in range(count)] if known and type(count) is int else []
                        walk(c, Alt(Const(n) for n in names) if len(names) > 1 and None not in names
                             else names[0] if len(names) == 1 else None, depth + 1)
                    else:
                        walk(c, sub(str(i)) if known else None, depth + 1)
            elif type(m) is Obj:
                for (oid, attr), v in st.heap.items():
                    if oid == m.oid and (type(v) is Layer or type(v) is Obj and v.cls.is_module):
                        walk(v, sub(attr) if isinstance(attr, str) and not attr.startswith("$") else None, depth + 1)

        walk(module, "", 0)
        return out

    def extend_list(self, box: Box, more: Val, st: State, node) -> None:
        """``xs += ys`` / ``xs.extend(ys)``: the items of ``ys`` after those of ``xs``, known
        one by one where both are."""
        items = st.heap.get((box.oid, "items"))
        added = more if type(more) is Tup else st.heap.get((more.oid, "items")) if type(more) is Box else None
        # a comprehension's modules (``layers += [Block() for _ in range(n)]``) make the list's
        # modules known in order for ``nn.Sequential(*layers)`` only
        blocks = items if type(items) is Tup else st.heap.get((box.oid, "blocks"))
        more_blocks = added if type(added) is Tup else st.heap.get((more.oid, "blocks")) if type(more) is Box else None
        key = (box.oid, "*")
        elem = self.iter_elem(more, st, node) if type(more) in (Box, Tup, Iter) else UNKNOWN
        forget_items(st, box)
        heap = st.own_heap()
        heap[key] = join(st.heap[key], elem) if key in st.heap else elem
        if type(items) is Tup and type(added) is Tup:
            heap[(box.oid, "items")] = Tup(items.items + added.items)
        elif type(blocks) is Tup and type(more_blocks) is Tup:
            heap[(box.oid, "blocks")] = Tup(blocks.items + more_blocks.items)

    def module_call(self, module: Obj, args, kwargs, node, st: State) -> Val:
        """``nn.Module.__call__`` on an instance of a project's class: its ``forward`` and hooks."""
        method = module.cls.lookup(api.MODULE_FORWARD)
        if type(method) is Func:
            out = self.call_func(method, [module] + [a for a, _ in args],
                                 {k: v for k, (v, _) in kwargs.items()}, st, node, bound=True)
            return self.run_hooks(module, args, out, node, st)
        layer = st.heap.get((module.oid, LAYER_BASE)) if method is None else None
        if type(layer) is Layer:  # a subclass of a torch layer that keeps its forward
            return self.run_hooks(module, args, self.call_layer(layer, args, node, st), node, st)
        if method is None and _sequential_class(module.cls):  # Sequential.forward: children in order
            kids = tuple(v for (oid, _), v in st.heap.items() if oid == module.oid and _module_item(v))
            if kids:  # (none seen: added where the analysis does not see, not an empty Sequential)
                return self.call_layer(Layer(next(iter(api.MODULE_CONTAINERS)), None, None, kids), args, node, st)
        return self.unknown_call(args, kwargs)

    def set_training(self, module, name, args, kwargs, node, st: State, dispatch=True) -> None:
        """``model.eval()`` / ``model.train(mode)``: ``self.training`` of the module and of every
        submodule of the project's classes is that flag now (``if not self.training:`` in a
        forward takes that branch), as torch sets it: each child through its own ``train``, an
        override of the project's included (``eval()`` is ``self.train(False)``; ``dispatch``
        False: torch's ``train`` itself, from ``super().train(mode)``). Unknown when the mode is
        not a constant or a submodule is held where the analysis does not see."""
        flag = Const(False) if name == "eval" else (
            args[0][0] if args else kwargs.get("mode", (Const(True), None))[0])
        if type(flag) is not Const or type(flag.value) is not bool:
            flag = UNKNOWN
        override = module.cls.lookup("train") if type(module) is Obj and dispatch and name == "eval" else None
        if type(override) is Func:
            self.invoke(override, [module, flag], {}, st, node, bound=True)
        else:
            self.train_tree(module, flag, node, st, 0)

    def train_tree(self, module, flag: Val, node, st: State, depth: int) -> None:
        """torch's ``Module.train(flag)`` on ``module``: its flag, then each child's ``train``."""
        mods = self.submodules(module, st, False) if depth < MAX_SUBMODULE_DEPTH else None
        if type(module) is Obj:
            st.own_heap()[(module.oid, api.TRAINING_ATTRIBUTE)] = flag if mods is not None else UNKNOWN
        for child in (mods or [module])[1:]:
            override = child.cls.lookup("train") if type(child) is Obj else None
            if type(override) is Func:  # ``def train(self, mode=True)`` of the project's class
                self.invoke(override, [child, flag], {}, st, node, bound=True)
            else:
                self.train_tree(child, flag, node, st, depth + 1)

    def add_modules(self, layer: Layer, name, args, node, st) -> Val:
        """``net.add_module("fc", m)``, ``blocks.append(m)``, ``blocks.extend(ms)`` on an
        ``nn.Sequential`` or ``nn.ModuleList``: the container object itself grows, so every name,
        attribute and container that holds it holds the grown one."""
        pos, several = api.MODULE_ADDERS[name]
        if len(args) <= pos:
            return UNKNOWN
        added = args[pos][0]
        if several:
            items = added if type(added) is Tup else (
                st.heap.get((added.oid, "items")) if type(added) is Box else None)
            added = items.items if type(items) is Tup else (UNKNOWN,)  # how many, and which, unknown
        else:
            added = (added,)
        spec = layer.spec if all(a is not UNKNOWN for a in added) else {**(layer.spec or {}), "summary": True}
        if name in ("add_module", "register_module"):  # a child under a name of its own
            spec = {**(spec or {}), "indexed": False}
        grown = Layer(layer.qual, spec, layer.root, layer.children + tuple(added), layer.config, layer.site)
        retarget(st, layer, grown)
        return NONE if name in ("add_module", "register_module") else grown

    def container_method(self, box: Box, name, args, node, st) -> Val:
        key = (box.oid, "*")
        vals = [a for a, _ in args]
        if name == "extend" and box.kind == "list" and len(vals) == 1 and type(vals[0]) in (Box, Tup):
            self.extend_list(box, vals[0], st, node)
            return NONE
        items = st.heap.get((box.oid, "items"))
        keys = st.heap[(box.oid, "kwkeys")] if name == "update" and _passed_on(box, st) else None
        if name in ("pop", "get") and box.kind != "list" and vals and type(vals[0]) is Const \
                and (box.oid, ("k", vals[0].value)) in st.heap and not self.alternatives:
            # ``g.ndata.pop("h")`` of a key set with a constant: what was stored there (a pop
            # leaves the key unknown: read again, it raises)
            value = st.heap[(box.oid, ("k", vals[0].value))]
            if name == "pop" and value is not UNKNOWN:
                forget_items(st, box)
                st.own_heap()[(box.oid, ("k", vals[0].value))] = UNKNOWN
            if value is not UNKNOWN:
                return value
        if name not in ("get", "values", "items", "keys", "copy", "index", "count"):
            forget_items(st, box)
        if name in ("append", "add", "insert", "setdefault", "appendleft") and vals:
            value = vals[-1] if name != "setdefault" else (vals[1] if len(vals) > 1 else NONE)
            if self.alternatives:  # into one of several lists (``values[agent].append(v)``), maybe this one
                value = _held_maybe(value)
            st.own_heap()[key] = join_elements(st.heap[key], value) if key in st.heap else value
            # (in a loop analysed to its fixpoint the list grows each pass: its length is not
            # known, unless the list is made anew in each pass: ``outputs = []`` in the body)
            # (nor is that of one list of several the analysis holds as one: ``values[i]`` of
            # ``[[] for _ in agents]``)
            if name == "append" and box.kind == "list" and type(items) is Tup and len(vals) == 1 and not box.some \
                    and not _same_site(value, items.items) and _made_per_pass(box, self.frame.loops):
                st.own_heap()[(box.oid, "items")] = Tup(items.items + (value,))  # still known item by item
            if name == "append" and len(vals) == 1 and not box.some and not self.alternatives \
                    and (box.oid, "last") in st.heap:
                st.own_heap()[(box.oid, "last")] = value  # what ``xs[-1]`` reads
            return NONE if name != "setdefault" else self._weak(st.heap[key])
        if name in ("extend", "update", "extendleft") and vals:
            elem = self.iter_elem(vals[0], st, node) if name == "extend" else self.dict_values(vals[0], st, node)
            st.own_heap()[key] = join(st.heap[key], elem) if key in st.heap else elem
            if name == "update" and type(vals[0]) is Box and vals[0].kind == "dict" and _passed_on(vals[0], st):
                # ``output.update(head.loss(output, batch))``: each of its keys with its value
                other, heap = vals[0], st.own_heap()
                added = [k.value for k in st.heap[(other.oid, "kwkeys")].items]
                for k in added:
                    heap[(box.oid, ("k", k))] = heap[(other.oid, ("k", k))]
                if keys is not None:  # its keys were all known: they still are
                    known = list(dict.fromkeys([k.value for k in keys.items] + added))
                    heap[(box.oid, "kwkeys")] = Tup(Const(k) for k in known)
                    note_keys(st, box, known)
            return NONE
        if name in ("pop", "get", "popitem", "popleft"):
            return self._weak(st.heap.get(key, UNKNOWN))
        if name in ("values", "items") or name == "keys" and box.kind == "dict":
            return Iter(wrap=("view", box, name))  # a view: iterating it walks the whole dict
        if name == "clear":
            _empty(st, box)
            return NONE
        if name in ("keys", "copy", "index", "count", "sort", "reverse", "remove"):
            return box if name == "copy" else UNKNOWN
        return UNKNOWN

    def dict_values(self, v, st, node):
        """The values ``d.update(v)`` adds: a dict's, or the second items of pairs
        (``d.update([("descent", loss), ...])``)."""
        if type(v) is Box and v.kind == "dict":
            return st.heap.get((v.oid, "*"), UNKNOWN)
        if type(v) not in (Box, Tup, Iter):
            return UNKNOWN
        pair = self.iter_elem(v, st, node)
        pairs = pair.options if type(pair) is Alt else (pair,)
        if all(type(p) is Tup and len(p.items) == 2 for p in pairs):
            values = [p.items[1] for p in pairs]
            out = values[0]
            for other in values[1:]:
                out = join(out, other)
            return out
        return UNKNOWN


    # ----------------------------------------------------------------- iteration
    def iter_elem(self, v: Val, st: State, site, first=None) -> Val:
        """What one step of iterating ``v`` yields; ``first`` tells a loop's first step from
        later ones (None outside loops), which makes ``range`` counters comparable."""
        global _nesting_left
        if _nesting_left == 0:
            return UNKNOWN
        _nesting_left -= 1
        try:
            return self._iter_elem(v, st, site, first)
        finally:
            _nesting_left += 1

    def _iter_elem(self, v: Val, st: State, site, first) -> Val:
        t = type(v)
        if t is Iter:
            if v.gen is not None:
                fn, args, kwargs, node, bound = v.gen
                return self.invoke(fn, list(args), dict(kwargs), st, node, bound, generator=True)
            if v.wrap is not None:
                kind = v.wrap[0]
                if kind == "genexp":  # one element standing for each: its graph one per element
                    self.created.append(set())
                    try:
                        return self._comprehension(v.wrap[1], st, [v.wrap[1].elt], v.wrap[2])[0]
                    finally:
                        created = self.created.pop()
                        if _known_length(v, st) != 1:
                            self.summaries |= created
                        self.created[-1] |= created
                if kind == "params":  # named_parameters(): any one pair
                    return v.wrap[2]
                if kind == "view":
                    if v.wrap[2] == "keys":
                        return UNKNOWN  # (keys are not kept, but where all are known: ``known_items``)
                    elem = self._weak(st.heap.get((v.wrap[1].oid, "*"), UNKNOWN))
                    return Tup((UNKNOWN, elem)) if v.wrap[2] == "items" else elem
                if kind == "range":
                    return _counter(v.wrap[1], first)
                if kind == "enumerate":
                    return Tup((_counter(v.wrap[2], first), self.iter_elem(v.wrap[1], st, site)))
                if kind == "loader":
                    return self.batch(v.wrap[1], v.wrap[2], v.wrap[3], st, site)
                if kind in ("chain", "cycle"):  # itertools.chain(a, b), cycle(a): the items of each in turn
                    out = None
                    for x in v.wrap[1]:
                        one = self.iter_elem(x, st, site)
                        out = one if out is None else join_elements(out, one)
                    return out
                return Tup(self.iter_elem(x, st, site) for x in v.wrap[1])
            return v.elem
        if t is Box:
            if v.kind == "dict":
                return UNKNOWN  # its keys (``for k in outputs``), which the analysis does not keep
            items = st.heap.get((v.oid, "items"))
            if type(items) is Tup and len(items.items) == 1 and not v.some:
                return items.items[0]  # the one element, itself: no other's graph stands in it
            elem = st.heap.get((v.oid, "*"), UNKNOWN)
            return self._some(elem) if v.some else self._weak(elem)
        if t is Tup:
            out = None
            for item in v.items:
                out = item if out is None else join_elements(out, item)
            return self._weak(out) if out is not None else UNKNOWN
        if t is Tensor:  # ``for row in x``: ``x.unbind(0)``, views of its rows
            out = self.op(site, [(v, site if isinstance(site, ast.Name) else None)], False, st, storage=v.storage)
            if type(v.shape) is tuple and v.shape:
                out.shape = v.shape[1:]
            return out
        if t is Obj:
            method = v.cls.lookup("__iter__")
            if type(method) is Func:
                it = self.call_func(method, [v], {}, st, site, bound=True)
                return self.iter_elem(it, st, site) if it is not v else UNKNOWN
            getitem = v.cls.lookup("__getitem__")
            if type(getitem) is Func:
                return self.invoke(getitem, [v, UNKNOWN], {}, st, site, bound=True)
        if t is Layer and (v.qual in api.MODULE_HOLDERS or v.qual in api.MODULE_CONTAINERS):
            # any one of the children: modelled as running them all, which covers the
            # graph (segments and parameters) each of them would build (none known, as for a
            # list filled by ``append``: a loop over it that runs has one the analysis does not see)
            return Layer(next(iter(api.MODULE_CONTAINERS)), v.spec, None, v.children) if v.children else UNKNOWN
        return UNKNOWN


# Calls of plain helpers (``is_available()``, ``str_to_bool(x)``, version checks), remembered:
# a call with plain arguments that touched no graph, heap or freed state and returned a plain
# value does the same next time. Library code is full of them, called from every branch.
_PLAIN = (Const, Unknown, LibRef, Builtin, Func, Class, ModRef, After)
_PLAIN_CALLS: dict = {}
MAX_PLAIN_CALLS = 50_000


def _global_declarations(text: str, name: str) -> tuple:
    """The lines (1-based) of ``text`` that declare ``name`` global."""
    if "global" not in text or name not in text:
        return ()
    return tuple(n for n, line in enumerate(text.split("\n"), 1) if line.lstrip().startswith("global ")
                 and name in (part.strip() for part in line.lstrip()[7:].split("#")[0].split(",")))


def _attributes_known(obj: Obj, name: str, st: State) -> bool:
    """Every attribute ``obj`` may have is known, and ``name`` is not one: one object (not one of
    several) whose ``__init__`` the analysis ran to its end, of project classes over ``object``
    or ``nn.Module`` only, none of whose modules sets attributes by a computed name, and that no
    code registered a module or buffer on under a name the analysis did not know."""
    if obj.some or (obj.oid, BUILT) not in st.heap or (obj.oid, name) in st.heap \
            or obj.cls.lookup(name) is not None or obj.cls.lookup("__getattr__") is not None \
            or obj.cls.is_module and name in api.MODULE_MEMBERS:
        return False
    classes, seen = [obj.cls], set()
    while classes:
        cls = classes.pop()
        if id(cls) in seen:
            continue
        seen.add(id(cls))
        text = cls.module.text
        if "setattr" in text or "__dict__" in text or "vars(" in text:
            return False
        for base in cls.bases:
            if type(base) is Class:
                classes.append(base)
            elif not (type(base) is LibRef and base.qual in _PLAIN_MODULE or type(base) is Builtin
                      and base.name == "object"):
                return False
    return not any(type(k[1]) is str and k[1].startswith("$registered") for k in st.heap if k[0] == obj.oid)


def _may_write(module, attr: str) -> bool:
    """Whether the module may assign ``attr`` outside ``__init__`` (remembered with it)."""
    known = module.writes.get(attr)
    if known is None:
        if attr not in module.text and "setattr" not in module.text and "delattr" not in module.text:
            known = False  # a text without the word cannot write it
        elif module.written is None and module.tree is None:
            return True  # released: its tree is gone
        else:
            if module.written is None:
                module.written = written_attributes(module.tree, module.text, module.unwalked)
            if module.unwalked and attr not in module.written and "*" not in module.written:
                # the functions not parsed yet whose text names it (or setattr): parsed now
                named = [fn for fn in module.unwalked if _names_write(module.source_of(fn), attr)]
                if named:
                    module.unwalked = [fn for fn in module.unwalked if fn not in named]
                    module.written |= written_attributes(ast.Module(body=named, type_ignores=[]), module.text)
            known = attr in module.written or "*" in module.written
        module.writes[attr] = known
    return known


def _names_write(text: str, attr: str) -> bool:
    return attr in text or "setattr" in text or "delattr" in text


def _plain(v: Val) -> bool:
    t = type(v)
    return t in _PLAIN or (t is Tup and all(_plain(x) for x in v.items))


def _memo_key(fn, args, kwargs, grad):
    if not all(_plain(a) for a in args) or not all(_plain(v) for v in kwargs.values()):
        return None
    return fn.node, fn.module.path, tuple(args), tuple(sorted(kwargs.items(), key=_first)), grad


def _first(item):
    return item[0]


def _remember(key, value) -> None:
    if len(_PLAIN_CALLS) >= MAX_PLAIN_CALLS:
        _PLAIN_CALLS.clear()
    _PLAIN_CALLS[key] = value


# Functions abandoned over a budget: the largest budget each ran out of. A call with no more
# to spend is not tried again (with other arguments it might cost less; it rarely does: 0.3% of
# such calls on the real-code corpus would have finished). Kept with their module's syntax
# tree, which the module cache keeps while the file is unchanged; ``Engine.costly`` holds the
# analysed file's.
_COSTLY: dict = {}
MAX_COSTLY = 10_000


def _remember_cost(costly: dict, node, budget: int) -> None:
    if len(costly) >= MAX_COSTLY:
        costly.clear()
    if budget > costly.get(node, -1):
        costly[node] = budget


def forget_calls() -> None:
    _PLAIN_CALLS.clear()
    _COSTLY.clear()


# One handler per node type, looked up by type (pyflakes-style dispatch without string building).
_STATEMENTS = {getattr(ast, name[2:]): fn for name, fn in vars(Engine).items()
               if name.startswith("s_") and hasattr(ast, name[2:])}
_EXPRESSIONS = {getattr(ast, name[2:]): fn for name, fn in vars(Engine).items()
                if name.startswith("e_") and hasattr(ast, name[2:])}


# --------------------------------------------------------------------- helpers
_COMPARED = (int, float, str, bool, type(None))
_EQUALITIES = (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)
_MEMBERSHIPS = (ast.Eq, ast.NotEq, ast.In, ast.NotIn)
_ELEMENTWISE_COMPARISONS = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)
_COMPARISONS = {ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Is: lambda a, b: a is b,
                ast.IsNot: lambda a, b: a is not b, ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b,
                ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
                ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}  # (of strings; else TypeError)


def _fold_compare(ops, values) -> Optional[bool]:
    """A chain of comparisons of constants, as Python evaluates it; None where Python would
    raise (``1 < "a"``) or the values are not plain constants."""
    if not all(type(v) in _COMPARED for v in values):
        return None
    for op, a, b in zip(ops, values, values[1:]):
        compare = _COMPARISONS.get(type(op))
        if compare is None:
            return None
        try:
            if not compare(a, b):
                return False
        except TypeError:
            return None
    return True


def _const_tuple(v: Val):
    """The Python value of a constant or of a tuple of them, a tuple wrapped so that it never
    equals a number (and ``1 == True`` stays as Python has it); ``_NOT_CONSTANT`` otherwise."""
    if type(v) is Const:
        return v.value if type(v.value) in _COMPARED else _NOT_CONSTANT
    if type(v) is Tup and not v.names:
        items = tuple(_const_tuple(x) for x in v.items)
        return _NOT_CONSTANT if any(i is _NOT_CONSTANT for i in items) else ("tuple", items)
    return _NOT_CONSTANT


_NOT_CONSTANT = object()


def _same_const(a, b) -> bool:
    return type(a) in _COMPARED and type(b) in _COMPARED and a == b

def _as_load(target):
    if isinstance(target, ast.Name):
        return ast.Name(target.id, ast.Load(), lineno=target.lineno, col_offset=target.col_offset)
    return target


def _basic_index(node, value) -> bool:
    """Basic indexing (ints, slices, None, Ellipsis) saves no tensors; tensors or lists do."""
    if isinstance(node, ast.Tuple):  # (each element with its value, where the tuple's is known)
        values = value.items if type(value) is Tup and len(value.items) == len(node.elts) else [UNKNOWN] * len(node.elts)
        return all(_basic_index(e, v) for e, v in zip(node.elts, values))
    if isinstance(node, ast.Slice):
        return True
    if isinstance(node, ast.Constant):
        return node.value is None or node.value is Ellipsis or isinstance(node.value, int)
    if isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant):
        return True
    if type(value) in (Tensor, Box) or isinstance(node, (ast.List, ast.ListComp)):
        return False
    return type(value) in (Const, Number, After) or value is UNKNOWN  # (a number or counter is an int)


def _uid(seg: Seg) -> int:
    return seg.uid


_FOLDABLE = {"Add": operator.add, "Sub": operator.sub, "Mult": operator.mul,
             "FloorDiv": operator.floordiv, "Mod": operator.mod, "Div": operator.truediv, "Pow": operator.pow,
             "BitOr": operator.or_, "BitAnd": operator.and_}
MAX_FOLDED_EXPONENT = 64  # past it, ``2 ** n`` is only "a number" (no huge integers)


_DICT_METHODS = frozenset(name for name in dir(dict) if not name.startswith("_"))
# what a dict's subclass may define and still be a dict whose items are read as attributes
_ATTRIBUTE_DICT_MEMBERS = frozenset({"__getattr__", "__setattr__", "__delattr__", "__getstate__", "__setstate__",
                                     "__dir__", "__repr__", "__init__"})
_MAPPING_VIEWS = frozenset({"items", "values", "keys"})  # of a namespace that is a mapping too (ModuleDict)
_PLAIN_CONSTANTS = (str, int, float, bool)
# str methods folded for constant arguments: they return strings or truth values, never raise
# for those (but ``format`` with a bad field, which then gives an unknown string)
_STR_METHODS = frozenset({"format", "lower", "upper", "strip", "lstrip", "rstrip", "replace", "startswith",
                          "endswith", "capitalize", "title", "find", "rfind", "count", "isdigit", "split",
                          "rsplit"})
_WIDE = re.compile(r"\d{4}")  # a field width or precision this large is not folded (nor allocated)


def _formatted(value: Val, conversion: int, spec: Val):
    """One ``{value!r:spec}`` field of a constant, as Python formats it; None when not known."""
    if type(value) is not Const or type(value.value) not in _PLAIN_CONSTANTS or type(spec) is not Const \
            or _WIDE.search(spec.value):
        return None
    v = value.value
    v = repr(v) if conversion == ord("r") else ascii(v) if conversion == ord("a") else str(v) if conversion == ord("s") else v
    try:
        return format(v, spec.value)
    except (ValueError, TypeError):
        return None


def _str_method(text: str, name: str, args: list, kwargs: dict) -> Val:
    if not all(type(v) is Const and (v.value is None or type(v.value) in _PLAIN_CONSTANTS or
                                     type(v.value) is tuple) for v in [*args, *kwargs.values()]):
        return UNKNOWN
    if name == "format" and _WIDE.search(text):
        return UNKNOWN
    try:
        out = getattr(text, name)(*(v.value for v in args), **{k: v.value for k, v in kwargs.items()})
    except (ValueError, TypeError, IndexError, KeyError, AttributeError):
        return UNKNOWN
    if type(out) is list:  # ``"1*L1+0.1*Ls".split("+")``: its parts, each known
        return Tup(Const(part) for part in out) if len(out) <= MAX_UNROLLED else UNKNOWN
    return Const(out)


def _counter(start: Val, first) -> Val:
    if type(start) is not Const or first is None:
        return NUMBER  # an int, whichever
    return start if first else After(start.value)


# Python's own: what a dataclass's generated ``__init__`` does (``Engine.dataclass_fields``)
DATACLASS_DECORATORS = frozenset({"dataclasses.dataclass"})
DATACLASS_FIELD = "dataclasses.field"
NAMED_TUPLE_BASES = frozenset({"typing.NamedTuple"})
DATACLASS_CLASSVAR = frozenset({"typing.ClassVar", "dataclasses.InitVar"})


def _opaque(dotted: str) -> bool:
    return dotted.split(".", 1)[0] in api.OPAQUE_PACKAGES


def _held_maybe(v: Val) -> Val:
    """``v`` as a container holds it on some paths only: its graph is a maybe."""
    if type(v) is Tensor and v.segs and v.maybe != v.segs:
        return v.but(maybe=v.segs)
    if type(v) is Tup:
        return v.like(_held_maybe(x) for x in v.items)
    return v


def _empty_container(node) -> Optional[str]:
    """``[]``, ``{}``, ``list()``, ``dict()``: the kind of the new empty container it makes."""
    if type(node) is ast.List and not node.elts:
        return "list"
    if type(node) is ast.Dict and not node.keys:
        return "dict"
    if type(node) is ast.Call and type(node.func) is ast.Name and node.func.id in ("list", "dict") \
            and not node.args and not node.keywords:
        return node.func.id
    return None


def _layer_attribute(layer: Layer, name: str):
    """The heap entry of an attribute set on a built torch layer, when the layer is told apart
    from others: by its parameters, else by its construction's arguments (its config)."""
    if layer.root is not None:
        return (layer.root, ("attr", name))
    if layer.config is not None:
        return (("attr", id(layer.config)), name)
    return None


def _made_per_pass(box: Box, loops: list) -> bool:
    """Every loop around the statement is unrolled, but for those inside whose current pass
    ``box`` was made."""
    for loop in reversed(loops):
        if not loop.unrolled:
            return box.oid in loop.made
    return True


def _same_site(value: Val, items) -> bool:
    """``value`` is an object made where one of ``items`` was (in a loop): the analysis holds
    them as one object, so a list of both is not known item by item."""
    oid = getattr(value, "oid", None) if type(value) in (Obj, Box) else None
    return oid is not None and any(type(x) is type(value) and x.oid == oid for x in items)


def _receiver(node):
    """The expression an attribute is read from: ``x`` of ``x.grad`` and of ``getattr(x, "grad")``."""
    if type(node) is ast.Call:
        return node.args[0] if node.args else node
    return node.value


def _constant_data(v: Val, st: State, depth: int = 0) -> bool:
    """A constant, or a tuple or list of them (a model's table of stage widths), known item by
    item: a loop over a few of them unrolls, so that each one's numbers reach the code."""
    if type(v) is Const:
        return True
    if depth >= 2:
        return False
    if type(v) is Box:
        known = st.heap.get((v.oid, "items"))
        v = known if type(known) is Tup else None
    return type(v) is Tup and len(v.items) <= MAX_UNROLLED and all(_constant_data(x, st, depth + 1) for x in v.items)


def _module_item(v: Val) -> bool:
    if type(v) is Tup and len(v.items) == 2:  # (name, module)
        v = v.items[1]
    return type(v) is Layer or (type(v) is Obj and v.cls.is_module)


def _cycles(v: Val) -> bool:
    """Whether iterating ``v`` starts over on the same items (``cycle(xs)``, ``zip(r, cycle(xs))``,
    ``islice(cycle(xs), n)``, ``chain(xs, xs)``)."""
    if type(v) is Iter and v.wrap is not None and v.wrap[0] in ("cycle", "zip", "chain"):
        boxes = [x.oid for x in v.wrap[1] if type(x) is Box]
        return v.wrap[0] == "cycle" or (v.wrap[0] == "chain" and len(set(boxes)) < len(boxes)) \
            or any(_cycles(x) for x in v.wrap[1])
    return False


def _element_segs(v: Val, st: State, depth: int = 0) -> Optional[frozenset]:
    """The graph segments held by the elements of a container (or of the containers an iterator
    walks); None when some element may hold graphs the analysis does not see (an object, an
    unknown value)."""
    t = type(v)
    if t is Tensor:
        return v.segs
    if t in (Const, Number, Builtin):
        return frozenset()
    if depth > 3:
        return None
    if t is Box:
        items = st.heap.get((v.oid, "items"))  # known items: "*" is their join (unknown for 1.0 and 2.0)
        parts = items.items if type(items) is Tup else [x for (oid, _), x in st.heap.items() if oid == v.oid]
    elif t is Tup:
        parts = v.items
    elif t is Iter and v.wrap is not None and v.wrap[0] != "range":
        inner = v.wrap[1]
        # (a tensor walked row by row is one graph: its rows are not several)
        parts = [x for x in (inner if isinstance(inner, tuple) else (inner,)) if type(x) is not Tensor]
    else:
        return None
    out = frozenset()
    for part in parts:
        segs = _element_segs(part, st, depth + 1)
        if segs is None:
            return None
        out |= segs
    return out


def _walks_container(v: Val) -> bool:
    """Whether iterating ``v`` visits every element of a list, dict or tuple (not a list that is
    one of several, ``agents[i].memory``: the join of them all holds more than it visits)."""
    if type(v) is Box:
        return not v.some
    if type(v) is Tup:
        return True
    if type(v) is Iter and v.wrap is not None and v.wrap[0] != "range":
        inner = v.wrap[1]
        return any(_walks_container(x) for x in (inner if isinstance(inner, tuple) else (inner,)))
    return False


def _empty(st: State, box: Box) -> None:
    """The container was emptied in place (``xs.clear()``, ``del xs[:]``): it holds nothing."""
    for key in [k for k in st.heap if k[0] == box.oid]:
        del st.own_heap()[key]
    if box.kind == "list":
        st.own_heap()[(box.oid, "items")] = Tup(())


_PYTHON_TYPES = {"tuple": (Tup,), "list": (Box,), "dict": (Box,), "set": (Box,)}


def _same_type(left: Val, op, right: Val, st: State) -> Optional[bool]:
    """``type(x) == list``, ``type(x) in (tuple, list)`` for ``type(x)`` known to be a builtin
    type, or some tensor class (none of Python's, nor ``Variable``); None where unknown."""
    if type(op) in (ast.In, ast.NotIn):
        items = right.items if type(right) is Tup else None
        if type(right) is Box and right.kind in ("list", "set"):
            known = st.heap.get((right.oid, "items"))
            items = known.items if type(known) is Tup else None
        if items is None or not all(type(i) is Builtin and i.name in _PYTHON_TYPES for i in items):
            return None
        found = left is not TENSOR_TYPE and any(i.name == left.name for i in items)
        return found == (type(op) is ast.In)
    if type(op) in (ast.Eq, ast.NotEq, ast.Is, ast.IsNot) and type(right) is Builtin and right.name in _PYTHON_TYPES:
        same = left is not TENSOR_TYPE and left.name == right.name
        return same == (type(op) in (ast.Eq, ast.Is))
    if type(op) in (ast.Eq, ast.NotEq, ast.Is, ast.IsNot) and type(right) is LibRef and (
            left is TENSOR_TYPE and right.qual in api.NEVER_A_TENSOR_TYPE or left is not TENSOR_TYPE and is_torch(right.qual)):
        # ``type(h) == Variable``: never for a tensor since torch 0.4; a list's type is no torch class
        return type(op) in (ast.NotEq, ast.IsNot)
    return None


_CONTAINER_CLASSES = api.MODULE_CONTAINERS | api.MODULE_HOLDERS  # (no layer of api.MODULES derives from them)


def _isinstance(v: Val, cls: Val) -> Val:
    """``isinstance`` where the answer is certain: a tensor is a ``torch.Tensor`` and no
    container; a tuple is no tensor. Anything else is unknown."""
    if type(cls) is Tup:
        answers = [_isinstance(v, c) for c in cls.items]
        if any(a == Const(True) for a in answers):
            return Const(True)
        return Const(False) if answers and all(a == Const(False) for a in answers) else UNKNOWN
    if type(cls) is Class and type(v) in (Obj, Layer):
        # a torch layer is no instance of a class of the project; an object is of its class's
        # ancestry, when all of it is known
        return Const(False) if type(v) is Layer else _derives(v.cls, cls, 0)
    if type(cls) is LibRef and (cls.qual in api.MODULES or cls.qual in _CONTAINER_CLASSES) and type(v) in (Obj, Layer):
        if type(v) is Obj:
            return _derives(v.cls, cls, 0)
        # one torch layer class is no other but its bases (a lazy one is its eager class)
        if (v.qual in api.MODULES or v.qual in _CONTAINER_CLASSES) and "Lazy" not in v.qual:
            return Const(v.qual == cls.qual or cls.qual in api.LAYER_SUPERCLASSES.get(v.qual, ()))
        return UNKNOWN
    if type(v) is Const and type(cls) is Builtin and cls.name in ("int", "float", "str", "bool") \
            and type(v.value) in (int, float, str, bool, type(None)):
        return Const(isinstance(v.value, {"int": int, "float": float, "str": str, "bool": bool}[cls.name]))
    if type(v) in (Tup, Box, Tensor) and type(cls) is Builtin and cls.name in ("int", "float", "str", "bool"):
        return Const(False)  # ``isinstance(gpus, int)`` of a list of ids
    tensor_class = type(cls) is LibRef and cls.qual in api.TENSOR_CLASSES
    python_class = type(cls) is Builtin and cls.name in _PYTHON_TYPES
    if type(v) is Tensor and (tensor_class or python_class):
        return Const(tensor_class)
    if type(v) is Obj and tensor_class:  # ``isinstance(outputs, torch.Tensor)`` of a model's output object
        return _tensor_subclass(v.cls, 0)
    if type(v) in (Tup, Box) and (tensor_class or python_class):
        if tensor_class:
            return Const(False)
        fits = type(v) in _PYTHON_TYPES[cls.name] and (type(v) is Tup or v.kind == cls.name)
        return Const(fits)
    return UNKNOWN


# comparisons of a settled value with a constant: settled too (keyed by the positive form)
_SETTLED_COMPARISONS = {ast.Eq: ("==", True), ast.NotEq: ("==", False), ast.Is: ("is", True),
                        ast.IsNot: ("is", False), ast.In: ("in", True), ast.NotIn: ("in", False)}


def _constant(node) -> bool:
    if type(node) in (ast.Tuple, ast.List, ast.Set):
        return all(type(e) is ast.Constant for e in node.elts)
    return type(node) is ast.Constant


def _scope(st: State) -> dict:
    return st.locals if st.locals is not None else st.globals


def _bound_names(st: State) -> frozenset:
    return frozenset(_scope(st))


def _elif_parents(loop) -> dict:
    """id(if) -> the ``if`` whose ``elif`` it is, over a loop's body (worked out once)."""
    parents = loop.__dict__.get("_gg_elif")
    if parents is None:
        parents = {}
        for n in ast.walk(loop):
            if type(n) is ast.If and len(n.orelse) == 1 and type(n.orelse[0]) is ast.If:
                parents[id(n.orelse[0])] = n
        loop._gg_elif = parents
    return parents


def _binds_only_within(loop, root, name: str) -> bool:
    """Every binding of ``name`` in the loop's body (its own scope) lies inside ``root``."""
    memo = loop.__dict__.setdefault("_gg_binds", {})
    key = (id(root), name)
    if key not in memo:
        inside = {id(n) for n in ast.walk(root)}
        memo[key] = all(id(n) in inside for n in _bindings(loop, name))
    return memo[key]


def _bindings(node, name: str):
    """The nodes that bind ``name`` in ``node``'s scope (not in nested functions or classes)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if child.name == name:
                yield child
            continue
        if isinstance(child, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        if type(child) is ast.Name and type(child.ctx) is not ast.Load and child.id == name:
            yield child
        elif isinstance(child, (ast.Import, ast.ImportFrom)) and any(
                (a.asname or a.name.split(".")[0]) == name for a in child.names):
            yield child
        elif type(child) in (ast.Global, ast.Nonlocal) and name in child.names \
                or type(child) is ast.ExceptHandler and child.name == name:
            yield child
            yield from _bindings(child, name)
        else:
            yield from _bindings(child, name)


def _dict_class(cls: Class, depth: int = 0) -> Optional[bool]:
    """Whether the project's class ``cls`` is a plain subclass of ``dict`` (or ``OrderedDict``),
    one that only makes its items readable as attributes: True when it does (a ``__getattr__``,
    or ``self.__dict__ = self``), False when it adds nothing, None when it is no such class (it
    defines methods of its own, or an ``__init__`` that does more than build the dict)."""
    if depth > 8 or not cls.bases:
        return None
    by_attribute = False
    for name, value in cls.attrs.items():
        if name.startswith("__") and name.endswith("__") and name not in _ATTRIBUTE_DICT_MEMBERS \
                and type(value) is not Func:
            continue  # ``__slots__``, ``__doc__`` and the like
        if name not in _ATTRIBUTE_DICT_MEMBERS:
            return None
        if name == "__init__":
            if type(value) is not Func or not _builds_dict_only(value.node):
                return None
            by_attribute |= _aliases_own_dict(value.node)
        by_attribute |= name == "__getattr__"
    for base in cls.bases:
        if type(base) is Builtin and base.name == "dict" or type(base) is LibRef and base.qual in _DICT_CLASSES:
            continue
        if type(base) is not Class:
            return None
        inherited = _dict_class(base, depth + 1)
        if inherited is None:
            return None
        by_attribute |= inherited
    return by_attribute


def _builds_dict_only(fn) -> bool:
    """An ``__init__`` whose statements only pass its arguments on to the dict's own
    (``super().__init__(*args, **kwargs)``) and alias its items as attributes."""
    for stmt in fn.body:
        if type(stmt) is ast.Expr and type(stmt.value) is ast.Constant:
            continue  # the docstring
        if type(stmt) is ast.Expr and type(stmt.value) is ast.Call and type(stmt.value.func) is ast.Attribute \
                and stmt.value.func.attr == "__init__":
            args = stmt.value.args
            if fn.args.args and args and type(args[0]) is ast.Name and args[0].id == fn.args.args[0].arg:
                args = args[1:]  # ``dict.__init__(self, *args, **kwargs)``
            passed = [a.value.id for a in args if type(a) is ast.Starred and type(a.value) is ast.Name]
            passed += [k.value.id for k in stmt.value.keywords if k.arg is None and type(k.value) is ast.Name]
            own = [fn.args.vararg.arg] if fn.args.vararg else []
            own += [fn.args.kwarg.arg] if fn.args.kwarg else []
            if len(passed) == len(args) + sum(k.arg is None for k in stmt.value.keywords) == len(own) \
                    and sorted(passed) == sorted(own) and not fn.args.args[1:]:
                continue
            return False
        if _aliases_own_dict(fn, stmt):
            continue
        return False
    return True


def _aliases_own_dict(fn, stmt=None) -> bool:
    """``self.__dict__ = self`` in ``fn`` (or is ``stmt``): the items are its attributes."""
    if not fn.args.args:
        return False
    me = fn.args.args[0].arg
    for s in ([stmt] if stmt is not None else fn.body):
        if type(s) is ast.Assign and len(s.targets) == 1 and type(s.targets[0]) is ast.Attribute \
                and s.targets[0].attr == "__dict__" and type(s.targets[0].value) is ast.Name \
                and s.targets[0].value.id == me and type(s.value) is ast.Name and s.value.id == me:
            return True
    return False


def _tensor_subclass(cls: Class, depth: int) -> Val:
    """Whether the project's class ``cls`` derives from ``torch.Tensor``: not when all its
    ancestry is the project's, Python's builtins or torch's layers; unknown past any other
    library class (``nn.Parameter`` is a tensor too)."""
    answer = Const(False)
    for base in cls.bases:
        if type(base) is Class:
            found = _tensor_subclass(base, depth + 1) if depth < MAX_SUBMODULE_DEPTH else UNKNOWN
        elif type(base) is LibRef:
            found = Const(True) if base.qual in api.TENSOR_CLASSES else \
                Const(False) if base.qual in api.MODULES or base.qual in api.MODULE_BASES else UNKNOWN
        else:
            found = Const(False) if type(base) is Builtin else UNKNOWN
        if found == Const(True):
            return found
        answer = answer if found == Const(False) else UNKNOWN
    return answer


def _derives(cls: Class, ancestor: Val, depth: int) -> Val:
    """Whether the project's class ``cls`` is ``ancestor`` (a class of the project, or a torch
    layer class) or derives from it; unknown where its ancestry is."""
    if type(ancestor) is Class and (cls is ancestor or cls.node is ancestor.node):
        return Const(True)
    answer = Const(False)
    for base in cls.bases:
        if type(base) is Class and depth < MAX_SUBMODULE_DEPTH:
            found = _derives(base, ancestor, depth + 1)
            if found == Const(True):
                return found
            answer = answer if found == Const(False) else UNKNOWN
        elif type(base) is LibRef and type(ancestor) is LibRef:
            if base.qual == ancestor.qual:
                return Const(True)
            if base.qual not in api.MODULES and base.qual not in api.MODULE_BASES:
                answer = UNKNOWN  # a library class we do not know: it may derive from the layer
        elif type(base) is not LibRef:  # (a library's class derives from no class of ours)
            answer = UNKNOWN
    return answer


def _compared_shape(v: Val):
    """An operand's shape in an element-wise comparison: a number is 0-dim."""
    if type(v) is Tensor:
        return v.shape
    return () if type(v) is Number or (type(v) is Const and type(v.value) in (int, float, bool)) else None


def _index_items(node, index: Val, known_slice, st: State):
    """A basic index as ``shapes.index`` takes it; None when a part of it is not known. A
    slice is itself where its bounds are known (``known_slice``), else an unknown one."""
    parts = node.elts if isinstance(node, ast.Tuple) else [node]
    values = index.items if type(index) is Tup and isinstance(node, ast.Tuple) else (index,)
    if len(values) != len(parts):
        return None
    items = []
    for part, value in zip(parts, values):
        if isinstance(part, ast.Slice):
            whole = part.lower is None and part.upper is None and part.step is None
            items.append(slice(None) if whole else known_slice(part, st) or shapes.SOME_SLICE)
        elif type(value) is Const and (value.value is None or value.value is Ellipsis
                                       or (type(value.value) is int)):
            items.append(value.value)
        elif type(value) in (After, Number):
            items.append(0)  # (its value does not matter: an int drops the dim)
        else:
            return None
    return items


def _autograd_function(cls: Class) -> bool:
    """A subclass of ``torch.autograd.Function`` (directly or through the project's classes)."""
    return any(type(b) is LibRef and b.qual in api.AUTOGRAD_FUNCTION_BASES
               or type(b) is Class and _autograd_function(b) for b in cls.bases)


def _saves_for_backward(fn_node) -> bool:
    """The function's text hands tensors to ``ctx.save_for_backward``."""
    return any(type(n) is ast.Call and type(n.func) is ast.Attribute and n.func.attr == api.SAVE_FOR_BACKWARD
               for n in ast.walk(fn_node))


def _reads_saved(fn_node):
    """Where the function's text reads ``ctx.saved_tensors`` (first), else None."""
    return next((n for n in ast.walk(fn_node) if type(n) is ast.Attribute and n.attr in api.SAVED_TENSORS), None)


def _walks_graph(node) -> bool:
    """A comprehension whose elements call a backward or ``autograd.grad`` (worked out once)."""
    found = node.__dict__.get("_gg_walks")
    if found is None:
        found = node._gg_walks = any(
            type(n) is ast.Call and (type(n.func) is ast.Attribute and n.func.attr in _GRAPH_WALKS
                                     or type(n.func) is ast.Name and n.func.id in _GRAPH_WALKS) for n in ast.walk(node))
    return found


_GRAPH_WALKS = frozenset({"backward", "grad"})


def _index_loop(node: ast.For):
    """The index variable of ``for i in range(len(xs))``, ``for i in reversed(range(len(xs)))``
    or ``for i, x in enumerate(xs)`` (counting from 0), else None. Not when the body binds the
    name again (an inner ``for i in range(n)``): ``xs[i]`` there is not the loop's element."""
    it, target, name = node.iter, node.target, None
    if _call_of(it, "enumerate") and len(it.args) == 1 and type(target) is ast.Tuple and len(target.elts) == 2 \
            and type(target.elts[0]) is ast.Name:
        name = target.elts[0].id
    if _call_of(it, "reversed") and len(it.args) == 1:
        it = it.args[0]
    if type(target) is ast.Name and _call_of(it, "range") and len(it.args) == 1 \
            and _call_of(it.args[0], "len") and len(it.args[0].args) == 1:
        name = target.id
    return name if name is not None and not _binds(node.body, name) else None


def _binds(body: list, name: str) -> bool:
    """Whether these statements assign ``name`` (not looking into the functions and classes
    they define, whose names are their own; their bodies may not be parsed yet)."""
    todo = list(body)
    while todo:
        node = todo.pop()
        if type(node) is ast.Name:
            if node.id == name and type(node.ctx) is not ast.Load:
                return True
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            if getattr(node, "name", None) == name:
                return True
            continue
        todo.extend(ast.iter_child_nodes(node))
    return False


def _keys_walked(iterable: Val, target) -> Optional[Box]:
    """The dict whose keys ``for k in d`` / ``for k in d.keys()`` walks, each once."""
    if type(target) is not ast.Name:
        return None
    if type(iterable) is Box and iterable.kind == "dict":
        return iterable
    if type(iterable) is Iter and iterable.wrap is not None and iterable.wrap[0] == "view" \
            and iterable.wrap[2] == "keys" and iterable.wrap[1].kind == "dict":
        return iterable.wrap[1]
    return None


# what a test correlated within a pass may be made of (no calls, no subscripts: they may change)
_PURE_TEST_NODES = (ast.Name, ast.Attribute, ast.Constant, ast.Compare, ast.BoolOp, ast.BinOp, ast.UnaryOp,
                    ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop)


def _repeated_tests(scope) -> tuple:
    """The ``if`` statements of a function (or module) whose test text (``not`` aside) some
    other ``if`` of it repeats, with that text; and the (line, name) of each name it stores."""
    tests: dict = {}
    stores = []
    todo = list(scope.body)
    while todo:
        node = todo.pop()
        t = type(node)
        if t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda):
            continue
        if t is ast.If:
            test = node.test
            while type(test) is ast.UnaryOp and type(test.op) is ast.Not:
                test = test.operand
            tests.setdefault(ast.dump(test), []).append(node)
        elif t is ast.Name and type(node.ctx) is not ast.Load:
            stores.append((node.lineno, node.id))
        todo.extend(ast.iter_child_nodes(node))
    repeated = {id(node): text for text, nodes in tests.items() if len(nodes) > 1 for node in nodes}
    return repeated, stores


_INCREMENTED: dict = {}  # id(loop statement) -> (it, the names its body adds to in place)


def _incremented(loop) -> frozenset:
    """The names a loop's body adds to in place (``ep_len += 1``): counters, whose value a
    pass's comparison with a constant sees differ from one iteration to the next."""
    if type(loop) not in (ast.For, ast.AsyncFor, ast.While):
        return frozenset()
    known = _INCREMENTED.get(id(loop))
    if known is not None and known[0] is loop:
        return known[1]
    if len(_INCREMENTED) > 10_000:
        _INCREMENTED.clear()
    names = frozenset(n.target.id for n in ast.walk(loop) if type(n) is ast.AugAssign and type(n.target) is ast.Name)
    _INCREMENTED[id(loop)] = (loop, names)
    return names


def _const_key(index: Val) -> Val:
    """A tuple of known numbers and strings as a key: ``convs[("upconv", i, 0)]`` of a known i."""
    if type(index) is Tup and index.items and all(type(x) is Const and type(x.value) in (int, str, bool)
                                                  for x in index.items):
        return Const(tuple(x.value for x in index.items))
    return index


def _call_of(node, name: str) -> bool:
    return type(node) is ast.Call and type(node.func) is ast.Name and node.func.id == name and not node.keywords


def _whole_slice(node) -> bool:
    return isinstance(node, ast.Slice) and node.lower is None and node.upper is None and node.step is None


def _yields_once(fn) -> bool:
    """A generator function whose only ``yield`` is a statement of its body's top level, after
    no ``return``: every iteration over it yields exactly one item."""
    if type(fn.body) is LazyBody:
        try:
            fn.body.force()
        except SourceError:
            return False
    yields = 0
    for stmt in fn.body:
        if isinstance(stmt, ast.Return):
            return False
        top = isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Yield) or \
            isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Yield)
        stack = [stmt.value.value] if top and stmt.value.value is not None else [] if top else [stmt]
        yields += top
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Return)):
                return False
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            stack.extend(ast.iter_child_nodes(node))
    return yields == 1


def _is_generator(fn, text: str) -> bool:
    if "yield" not in text:  # the common case, decided without walking the body
        return False
    stack = list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(ast.iter_child_nodes(node))
    return False


def _decorator_names(fn):
    for d in getattr(fn, "decorator_list", ()):  # (a lambda held by a class has none)
        if isinstance(d, ast.Name):
            yield d.id
        elif isinstance(d, ast.Attribute):
            yield d.attr


def _is_static(fn) -> bool:
    return "staticmethod" in set(_decorator_names(fn))


def _is_classmethod(fn) -> bool:
    return "classmethod" in set(_decorator_names(fn))


def _is_property(fn) -> bool:
    return "property" in set(_decorator_names(fn))


def _property_accessor(fn) -> Optional[str]:
    """"setter" / "deleter" for ``@<name>.setter`` on a ``def <name>``, else None."""
    for deco in fn.decorator_list:
        if type(deco) is ast.Attribute and deco.attr in ("setter", "deleter") and type(deco.value) is ast.Name \
                and deco.value.id == fn.name:
            return deco.attr
    return None


def _bind_params(fn: Func, args: list, kwargs: dict, unknown_rest: bool) -> dict:
    a = fn.node.args
    params = a.posonlyargs + a.args
    defaults, kw_defaults = fn.defaults
    locals_: dict = {}
    first_default = len(params) - len(defaults)
    for i, p in enumerate(params):
        if i < len(args):
            locals_[p.arg] = args[i]
        elif p.arg in kwargs:
            locals_[p.arg] = kwargs[p.arg]
        elif i >= first_default and not unknown_rest:
            locals_[p.arg] = defaults[i - first_default]
        else:
            locals_[p.arg] = UNKNOWN
    for p in a.kwonlyargs:
        locals_[p.arg] = kwargs.get(p.arg, kw_defaults.get(p.arg, UNKNOWN) if not unknown_rest else UNKNOWN)
    if a.vararg:
        rest = args[len(params):]
        locals_[a.vararg.arg] = Tup(rest)
    if a.kwarg:
        locals_[a.kwarg.arg] = UNKNOWN
    if params:
        locals_["$self"] = locals_.get(params[0].arg, UNKNOWN)
    return locals_


def _every_iteration(stmt, body) -> bool:
    """``stmt`` runs in each pass over ``body``: it is one of its statements, or it is in a
    branch of one of its ``if`` statements whose other branch runs the same statement."""
    if any(s is stmt for s in body):
        return True
    same = ast.dump(stmt)
    for s in body:
        if type(s) is ast.If:
            for mine, other in ((s.body, s.orelse), (s.orelse, s.body)):
                if _every_iteration(stmt, mine) and any(ast.dump(o) == same for o in other):
                    return True
    return False


def _known_length(v: Val, st: State):
    """``len(v)`` where it is certain: a tuple, a list whose items are known, a Sequential or
    ModuleList whose modules are all known (``for i in range(len(net))`` walks each)."""
    if type(v) is Box:
        count = st.heap.get((v.oid, "count"))  # made by a comprehension over a known length
        if type(count) is Const:
            return count.value
        v = st.heap.get((v.oid, "items"))
    if type(v) is Tup:
        return len(v.items)
    if type(v) is Iter and v.wrap is not None and v.wrap[0] == "range":
        values = _range_values(v.wrap)  # ``range(2)``, ``range(n - 1, 0, -1)`` of a known n
        if values is not None:
            return len(values)
    if type(v) is Iter and v.wrap is not None and v.wrap[0] == "genexp" and len(v.wrap[1].generators) == 1 \
            and not v.wrap[1].generators[0].ifs:
        return _known_length(v.wrap[2], st)  # one element per item of what it walks
    if type(v) is Iter and v.wrap is not None and v.wrap[0] in ("zip", "enumerate"):
        parts = v.wrap[1] if v.wrap[0] == "zip" else v.wrap[1:2]
        counts = [_known_length(x, st) for x in parts]
        return min(counts) if counts and None not in counts else None  # zip stops at the shortest
    if type(v) is Layer and (v.qual in api.MODULE_HOLDERS or v.qual in api.MODULE_CONTAINERS) \
            and all(_module_item(c) for c in v.children) and _counted(v):
        return len(v.children)
    if type(v) is Iter and v.wrap is not None and v.wrap[0] == "loader" and v.wrap[4] is not None \
            and v.wrap[5] is not None:
        rows = _known_length(v.wrap[1], st)  # ``DataLoader(dataset, batch_size)``: so many batches
        if rows is not None:
            return rows // v.wrap[4] if v.wrap[5] else -(-rows // v.wrap[4])
    return None


def _mapping_of(node):
    """``d`` of ``d.items()`` (a view is read again at no cost, as ``d`` is); else the node."""
    if type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr in _MAPPING_VIEWS \
            and not node.args and not node.keywords:
        return node.func.value
    return node


def _name_value(name) -> Val:
    """A submodule's name as ``module_names`` found it: a string, an alternative of them, or not known."""
    return Const(name) if type(name) is str else name if type(name) is Alt else UNKNOWN


def _formats_a_string(node) -> bool:
    """``f"layer.{i}."``, ``"block{}".format(i)``, ``"fc" + str(i)``: a name made of a counter."""
    if type(node) is ast.JoinedStr:
        return True
    if type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr == "format":
        return type(node.func.value) is ast.Constant and type(node.func.value.value) is str
    return type(node) is ast.BinOp and any(type(x) is ast.Constant and type(x.value) is str for x in (node.left, node.right))


def _read_again_freely(node) -> bool:
    """An iterable whose expression costs nothing to evaluate twice: a name, an attribute, or
    ``enumerate`` / ``zip`` / ``range`` of those and of constants."""
    if isinstance(node, (ast.Name, ast.Attribute, ast.Constant)):
        return True
    if type(node) is ast.BinOp:  # ``range(n - k, n)``
        return _read_again_freely(node.left) and _read_again_freely(node.right)
    return type(node) is ast.Call and type(node.func) is ast.Name and node.func.id in ("enumerate", "zip", "range") \
        and not node.keywords and all(_read_again_freely(a) for a in node.args)


def _items_of(v: Val, st: State) -> Optional[tuple]:
    """The elements of a tuple or of a list known item by item."""
    if type(v) is Box:
        v = st.heap.get((v.oid, "items"))
    return v.items if type(v) is Tup else None


def _number(v: Val) -> bool:
    return type(v) is Number or type(v) is Const and type(v.value) in (int, float)


def _range_values(wrap: tuple) -> Optional[range]:
    """The numbers of a ``range`` whose bounds (and step) are known, else None."""
    bounds = wrap[1:]
    if len(bounds) < 2 or not all(type(b) is Const and type(b.value) is int for b in bounds):
        return None
    return range(*(b.value for b in bounds))


def _summary_items(v: Val) -> bool:
    """Iterating ``v`` walks a container whose one child stands for several (``enumerate`` of
    it too): a pass over it is not one per element."""
    if type(v) is Iter and v.wrap is not None and v.wrap[0] == "enumerate":
        v = v.wrap[1]
    return type(v) is Layer and not _counted(v)


def _read_here(name, stmt) -> bool:
    """A total's last value, first read through ``name``, is read by this statement itself
    (``total += loss``, ``avg = 0.9 * avg + …``): not a recurrence spread over several statements
    (``q = r + g * q`` then ``q = rho * (q - q_a)``), which is no running total."""
    if name is None or stmt is None:
        return True
    return (stmt.lineno, stmt.col_offset) <= (name.lineno, name.col_offset) \
        and (name.end_lineno, name.end_col_offset) <= (stmt.end_lineno, stmt.end_col_offset)


def _counted(container: Layer) -> bool:
    """Each module of a Sequential or ModuleList is a child of its own (none made in a loop or a
    comprehension, standing for several)."""
    return not (container.spec or {}).get("summary")


def _pure_reference(node) -> bool:
    """A name, a literal or a chain of attributes of a name: read again, the same object (a
    property aside)."""
    while type(node) is ast.Attribute:
        node = node.value
    return type(node) in (ast.Name, ast.Constant, ast.List, ast.Tuple) and (
        type(node) not in (ast.List, ast.Tuple) or all(_pure_reference(e) for e in node.elts))


def _pure_arithmetic(node, depth: int = 0) -> bool:
    """Names and literals combined by arithmetic operators: evaluated again, the same value."""
    t = type(node)
    if t is ast.Name or t is ast.Constant:
        return True
    if depth > 8:
        return False
    if t is ast.UnaryOp:
        return _pure_arithmetic(node.operand, depth + 1)
    return t is ast.BinOp and _pure_arithmetic(node.left, depth + 1) and _pure_arithmetic(node.right, depth + 1)


ARGUMENT_PARSER = "argparse.ArgumentParser"
_STORED_CONSTANTS = {"store_true": False, "store_false": True}


def _argument_default(names: list, kw: dict):
    """``add_argument('--lr-decay', type=float, default='0.1')``: (its dest, the value
    ``parse_args([])`` gives it), as argparse makes them; the value is unknown where the
    analysis cannot tell it; (None, None) when the dest cannot be named. A required argument
    (a positional one) leaves ``parse_args([])`` exiting: its value is unknown."""
    if not names or not all(type(n) is Const and type(n.value) is str and n.value for n in names):
        return None, None
    flags = [n.value for n in names]
    dest = kw.get("dest")
    if dest is not None:
        dest = dest.value if type(dest) is Const and type(dest.value) is str else None
    elif not flags[0].startswith("-"):
        dest = flags[0]
    else:
        longs = [f for f in flags if f.startswith("--")]
        dest = (longs[0] if longs else flags[0]).lstrip("-").replace("-", "_")
    if not dest:
        return None, None
    action = kw.get("action", Const("store"))
    if not flags[0].startswith("-") or kw.get("required", Const(False)) != Const(False) \
            or type(action) is not Const:
        return dest, UNKNOWN
    if action.value in _STORED_CONSTANTS and "default" not in kw:
        return dest, Const(_STORED_CONSTANTS[action.value])
    if action.value not in ("store", "store_true", "store_false", "store_const", "append", "count"):
        return dest, UNKNOWN
    default = kw.get("default", NONE)
    convert = kw.get("type")
    if type(default) is Const and type(default.value) is str and convert is not None:
        # argparse passes a string default through ``type``
        if type(convert) is Builtin and convert.name in ("int", "float", "str"):
            try:
                return dest, Const({"int": int, "float": float, "str": str}[convert.name](default.value))
            except ValueError:
                return dest, UNKNOWN
        return dest, UNKNOWN
    return dest, default


def _requires_grad_test(node) -> bool:
    """``lambda p: p.requires_grad``."""
    return type(node) is ast.Lambda and len(node.args.args) == 1 and not node.args.vararg \
        and type(node.body) is ast.Attribute and node.body.attr == api.REQUIRES_GRAD \
        and type(node.body.value) is ast.Name and node.body.value.id == node.args.args[0].arg


def _own_dict(node) -> bool:
    """``x.__dict__`` or ``vars(x)`` of a name ``x``: its attributes as a dict."""
    if type(node) is ast.Attribute:
        return node.attr == "__dict__" and type(node.value) is ast.Name
    return type(node) is ast.Call and type(node.func) is ast.Name and node.func.id == "vars" \
        and len(node.args) == 1 and type(node.args[0]) is ast.Name and not node.keywords


def _passed_on(box: Box, st: State) -> bool:
    """``box`` is a dict whose keys are all known (a function's ``**kwargs`` as its call made it,
    a display of constant keys), none changed since."""
    keys = st.heap.get((box.oid, "kwkeys"))
    return type(keys) is Tup and all(type(key) is Const and (box.oid, ("k", key.value)) in st.heap
                                     for key in keys.items)


def _optimizer_base(cls, depth: int = 0) -> Optional[str]:
    """The torch optimizer base (``torch.optim.Optimizer``) a project's class derives from."""
    for b in cls.bases:
        if type(b) is LibRef and b.qual in api.OPTIMIZER_BASES:
            return b.qual
        if type(b) is Class and depth < MAX_SUBMODULE_DEPTH:
            found = _optimizer_base(b, depth + 1)
            if found is not None:
                return found
    return None


def _layer_base(cls, depth: int = 0) -> Optional[str]:
    """The torch layer (``torch_api.MODULES``) a project's class derives from, directly or
    through its other bases: ``class Conv2d(nn.Conv2d)``."""
    for b in cls.bases:
        if type(b) is LibRef and b.qual in api.MODULES:
            return b.qual
        if type(b) is Class and depth < MAX_SUBMODULE_DEPTH:
            found = _layer_base(b, depth + 1)
            if found is not None:
                return found
    return None


def _sequential_class(cls) -> bool:
    """A subclass of ``nn.Sequential`` (or of one): without a ``forward`` of its own, calling it
    runs its children in the order they were added."""
    return any((type(b) is LibRef and b.qual in api.MODULE_CONTAINERS) or (type(b) is Class and _sequential_class(b))
               for b in cls.bases)
