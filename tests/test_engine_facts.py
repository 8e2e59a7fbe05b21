"""The engine's abstract facts on tiny programs, printed one line per fact (in the style of
beniget's def-use chains): what each tensor name holds where it is read or bound (requires grad?
the lines of the graph behind it, and the backwards that freed part of it) and what each backward
frees. A refactor of the interpreter that changes a fact changes a printed line.

    x@5 grad=yes chain=[4, 5] freed=[6]     name, line; the chain's lines; freed by the calls on
    backward@6 frees=[4, 5] walked-again=[8]  the lines that free, or walk again, that graph
"""
from __future__ import annotations

import re
import textwrap

import pytest

import torchrun

from gradguard.analysis import analyze_source


def facts(program: str) -> list[str]:
    result = analyze_source(textwrap.dedent(program), "<facts>", facts=True)
    out = []
    for (_, line), found in sorted(result.facts.index.items(), key=lambda kv: kv[0][1]):
        for fact in found:
            if fact.location.line != line:
                continue  # a backward spanning lines is listed once, on its first
            if hasattr(fact, "requires_grad"):
                text = f"{fact.name}@{line} grad={fact.requires_grad}"
                if fact.chain:
                    text += f" chain={[s.location.line for s in fact.chain]}"
                if fact.freed_by:
                    text += f" freed={[loc.line for loc in fact.freed_by]}"
            else:
                text = f"backward@{line} frees={[s.location.line for s in fact.frees]}"
                if fact.reused_by:
                    text += f" walked-again={[loc.line for loc in fact.reused_by]}"
            if text not in out:
                out.append(text)
    return out


@pytest.mark.parametrize("program, expected", [
    # the canonical pair: a product saves its operands, and its graph is freed by the backward
    ("""\
     import torch
     w = torch.randn(3, requires_grad=True)
     y = (w * 2).sum()
     y.backward()
     y.backward()
     """, ["w@2 grad=yes", "w@3 grad=yes", "y@3 grad=yes chain=[3]", "y@4 grad=yes chain=[3]",
           "backward@4 frees=[3] walked-again=[5]", "y@5 grad=yes chain=[3] freed=[4]",
           "backward@5 frees=[3]"]),
    # a generator that never ends still hands out what it yields: the caller goes on
    ("""\
     import torch
     def batches():
         while True:
             yield torch.rand(4, 3)
     real = next(batches())
     w = torch.randn(3, requires_grad=True)
     y = (real @ w).sum()
     """, ["real@5 grad=no", "w@6 grad=yes", "real@7 grad=no", "w@7 grad=yes", "y@7 grad=yes chain=[7]"]),
    # an nn.ModuleDict's items() are its (name, module) pairs: each head's output has its graph
    ("""\
     import torch
     import torch.nn as nn
     heads = nn.ModuleDict({"a": nn.Linear(3, 2), "b": nn.Linear(3, 1)})
     x = torch.randn(4, 3)
     for name, head in heads.items():
         y = head(x)
     """, ["x@4 grad=no", "x@6 grad=no", "y@6 grad=yes chain=[6]"]),
    # a forward hook that returns a value replaces the module's output
    ("""\
     import torch
     import torch.nn as nn
     lin = nn.Linear(3, 3)
     lin.register_forward_hook(lambda module, inputs, output: output.detach())
     y = lin(torch.randn(2, 3))
     z = y * 2
     """, ["output@4 grad=yes chain=[5]", "y@5 grad=no", "y@6 grad=no", "z@6 grad=no"]),
    # iterating a dict yields its keys (strings), not the tensors it holds: only items() does
    ("""\
     import torch
     w = torch.randn(3, requires_grad=True)
     out = {"loss": (w * 2).sum()}
     for k in out:
         print(k)
     for k, v in out.items():
         print(v)
     """, ["w@2 grad=yes", "w@3 grad=yes", "v@6 grad=yes chain=[3]", "v@7 grad=yes chain=[3]"]),
    # the argument of type_as / to / expand_as lends its dtype or shape, not its graph
    ("""\
     import torch
     w = torch.randn(3, requires_grad=True)
     m = (w > 0).type_as(w)
     v = torch.zeros(3).expand_as(w)
     """, ["w@2 grad=yes", "w@3 grad=yes", "m@3 grad=no", "w@4 grad=yes", "v@4 grad=no"]),
    # made with grad off, or detached: no graph behind it
    ("""\
     import torch
     w = torch.randn(3, requires_grad=True)
     with torch.no_grad():
         a = w * 2
     b = w.detach() * 2
     """, ["w@2 grad=yes", "w@4 grad=yes", "a@4 grad=no", "w@5 grad=yes", "b@5 grad=no"]),
    # a loop rebuilds its graph each iteration: the backward of the next one walks a new graph
    ("""\
     import torch
     w = torch.randn(3, requires_grad=True)
     for i in range(3):
         loss = (w * i).sum()
         loss.backward()
     """, ["w@2 grad=yes", "w@4 grad=yes", "loss@4 grad=yes chain=[4]", "loss@5 grad=yes chain=[4]",
           "backward@5 frees=[4]"]),
    # a lambda is a function: the hook it registers runs at every call of the layer
    ("""\
     import torch
     net = torch.nn.Linear(2, 2)
     seen = []
     net.register_forward_hook(lambda m, i, out: seen.append(out))
     y = net(torch.randn(2)).sum()
     z = sum(seen)
     """, ["out@4 grad=yes chain=[5]", "y@5 grad=yes chain=[5]", "z@6 grad=yes chain=[5, 6]"]),
    # a dataclass's default_factory gives every instance a list of its own
    ("""\
     from dataclasses import dataclass, field
     import torch
     @dataclass
     class Buffer:
         items: list = field(default_factory=list)
     w = torch.randn(3, requires_grad=True)
     a, b = Buffer(), Buffer()
     a.items.append(w * 2)
     t = sum(b.items)
     s = sum(a.items)
     """, ["w@6 grad=yes", "w@8 grad=yes", "s@10 grad=yes chain=[8, 10]"]),  # b's list stays empty
])
def test_printed_facts(program, expected):
    assert facts(program) == expected


def test_a_dataclass_keeps_the_init_its_body_defines(tmp_path):
    """Run with torch too: it raises where the finding is."""
    program = """\
        from dataclasses import dataclass
        import torch
        @dataclass(init=False)
        class Holder:
            t: torch.Tensor
            def __init__(self):
                self.t = (torch.ones(2, requires_grad=True) * 2).sum()
        h = Holder()
        h.t.backward()
        h.t.backward()
        """
    program = textwrap.dedent(program)
    path = tmp_path / "holder.py"
    path.write_text(program)
    ran = torchrun.run(path)
    assert "Trying to backward through the graph a second time" in ran.stderr
    line = int(re.findall(r'holder\.py", line (\d+)', ran.stderr)[-1])
    assert [(f.code, f.location.line) for f in analyze_source(program, "<t>").findings] == [("GG101", line)]


def test_hooks_registered_differently_on_two_paths():
    """Found by the 100,000-program fuzz run: the paths' hook lists join to unknown; registering
    or calling after that must not crash (the hooks then run on neither)."""
    program = """\
        import sys
        import torch
        net = torch.nn.Linear(2, 2)
        if len(sys.argv) > 3:
            net.register_forward_hook(lambda m, i, o: None)
            net.register_forward_hook(lambda m, i, o: None)
        else:
            net.register_forward_hook(lambda m, i, o: None)
        net.register_forward_hook(lambda m, i, o: None)
        y = net(torch.ones(2)).sum()
        """
    assert facts(program)[-1] == "y@10 grad=yes chain=[10]"


def test_a_list_cleared_on_one_path_only(tmp_path):
    """Its known items (none, or two) join to unknown: the loop over it is not unrolled, and
    nothing crashes. The program runs clean under torch, and nothing is reported."""
    program = textwrap.dedent("""\
        import sys
        import torch
        xs = [1, 2]
        if len(sys.argv) > 2:
            xs.clear()
        w = torch.ones(1, requires_grad=True)
        for x in xs:
            (w * x).sum().backward()
        """)
    path = tmp_path / "cleared.py"
    path.write_text(program)
    assert torchrun.run(path).returncode == 0
    assert analyze_source(program, "<t>").findings == []


SECOND_TIME = "Trying to backward through the graph a second time"


def agrees_with_torch(tmp_path, program: str, code="GG101", message=SECOND_TIME) -> None:
    """Run ``program`` with torch: the analysis reports ``code`` exactly on the line where it
    raises (with ``message``), and nothing if it runs clean."""
    path = tmp_path / "prog.py"
    path.write_text(program)
    ran = torchrun.run(path)
    found = [(f.code, f.location.line) for f in analyze_source(program, "<t>").findings]
    raised = re.findall(r'prog\.py", line (\d+)', ran.stderr) if ran.returncode else []
    if ran.returncode:
        assert message in ran.stderr, ran.stderr
    assert found == ([(code, int(raised[-1]))] if raised else [])


CYCLED = """\
    import itertools
    import torch
    enc = torch.nn.Linear(3, 3)
    opt = torch.optim.SGD(itertools.chain(enc.parameters()), lr=0.1)
    batches = [enc(torch.randn(2, 3)) for _ in range(2)]
    for step, h in zip(range(5), {iterate}):
        loss = (h * h).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    """
RUNNING_MEAN = """\
    import torch
    class Norm(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("mean", torch.zeros(3))
        def forward(self, x):
            {update}
            return (x - self.mean) * x
    net = torch.nn.Sequential(torch.nn.Linear(3, 3), Norm())
    for step in range(3):
        loss = net(torch.randn(4, 3)).sum()
        loss.backward()
    """


@pytest.mark.parametrize("program", [
    CYCLED.format(iterate="itertools.cycle(batches)"),  # the same graphs again after two steps
    CYCLED.format(iterate="itertools.chain(batches, batches)"),
    CYCLED.format(iterate="batches"),  # each graph once
    CYCLED.format(iterate="itertools.repeat(batches[0], 3)"),  # the same graph at every step
    CYCLED.format(iterate="itertools.chain(batches, [enc(torch.randn(2, 3))])"),
    CYCLED.format(iterate="[batches[0], enc(torch.randn(2, 3))]"),  # two graphs, each walked once
    # a buffer updated in place with grad recording on holds the batch's graph from then on
    RUNNING_MEAN.format(update="self.mean.mul_(0.9).add_(0.1 * x.mean(0))"),
    RUNNING_MEAN.format(update="self.mean.mul_(0.9).add_(0.1 * x.mean(0).detach())"),
    RUNNING_MEAN.format(update="with torch.no_grad(): self.mean.mul_(0.9).add_(0.1 * x.mean(0))"),
], ids=["cycle", "chain-twice", "once", "repeat", "chain-once", "literal", "buffer", "buffer-detached", "buffer-no-grad"])
def test_iterators_and_buffers_against_torch(tmp_path, program):
    """Each program runs under torch; GG101 is reported exactly where it raises, if it does."""
    agrees_with_torch(tmp_path, textwrap.dedent(program))


LOADED = """\
    import torch
    from torch.utils.data import DataLoader, Dataset, TensorDataset
    enc = torch.nn.Linear(3, 3)
    head = torch.nn.Linear(3, 1)
    class Encoded(Dataset):
        def __init__(self, raw):
            self.raw = raw
            {init}
        def __len__(self):
            return len(self.raw)
        def __getitem__(self, i):
            return {item}, 1.0
    raw = torch.randn(8, 3)
    loader = DataLoader({dataset}, batch_size=4{options})
    for epoch in range(2):
        for x, y in loader:
            loss = (head(x).squeeze(1) - y).pow(2).mean()
            loss.backward()
    """


@pytest.mark.parametrize("init, item, dataset, options", [
    ("self.x = enc(raw)", "self.x[i]", "Encoded(raw)", ""),  # one graph under every batch
    ("self.x = enc(raw)", "self.x[i]", "Encoded(raw)", ", shuffle=True, num_workers=0"),
    ("self.x = enc(raw).detach()", "self.x[i]", "Encoded(raw)", ""),
    ("pass", "enc(self.raw[i])", "Encoded(raw)", ""),  # each item computed when asked for
    ("pass", "0", "TensorDataset(enc(raw), torch.zeros(8))", ""),
    ("pass", "0", "TensorDataset(raw, torch.zeros(8))", ", drop_last=True"),
], ids=["learned-transform", "options", "detached", "per-item", "tensor-dataset", "raw-tensors"])
def test_data_loader_batches_against_torch(tmp_path, init, item, dataset, options):
    program = textwrap.dedent(LOADED).format(init=init, item=item, dataset=dataset, options=options)
    agrees_with_torch(tmp_path, program)


KEYED = """\
    import random
    import torch
    w = torch.ones(3, requires_grad=True)
    parts = {{name: w * (i + 2) for i, name in enumerate(["a", "b"])}}
    heads = [w * 3 for _ in range(2)]
    {body}
    """


@pytest.mark.parametrize("body", [
    # the same element every read: its graph is walked again
    "for step in range(2):\n    parts['a'].sum().backward()",
    "for step in range(2):\n    (heads[0] * heads[1]).sum().backward()",
    # a different element each time, or one the analysis cannot name: nothing to say
    "for key in ('a', 'b'):\n    parts[key].sum().backward()",
    "parts['a'].sum().backward()\nparts['b'].sum().backward()",
    "for step in range(2):\n    random.shuffle(heads)\n    heads[0].sum().backward()",
], ids=["same-key", "same-index", "each-key", "two-keys", "shuffled"])
def test_keyed_reads_against_torch(tmp_path, body):
    """Each program runs under torch; GG101 is reported exactly where it raises, if it does
    (a shuffled list may or may not give the same element: then nothing is reported)."""
    program = textwrap.dedent(KEYED.format(body=body.replace("\n", "\n    ")))
    if "shuffle" in body:
        assert analyze_source(program, "<t>").findings == []
    else:
        agrees_with_torch(tmp_path, program)


NAMED = """\
    import collections
    import typing
    import torch
    net = torch.nn.Linear(4, 3)
    {define}
    memory = []
    for episode in range(2):
        for t in range(2):
            out = net(torch.randn(1, 4))
            memory.append(Saved(out[0, 0] * 2, value=out[0, 1] * 3))
        loss = sum(s.logp + s.value ** 2 for s in memory)
        loss.backward()
        {after}
    """


@pytest.mark.parametrize("define, after", [
    ('Saved = collections.namedtuple("Saved", ["logp", "value"])', "pass"),
    ('Saved = collections.namedtuple("Saved", "logp value")', "memory.clear()"),
    ('class Saved(typing.NamedTuple):\n    logp: torch.Tensor\n    value: torch.Tensor', "pass"),
    ('class Saved(typing.NamedTuple):\n    logp: torch.Tensor\n    value: torch.Tensor', "del memory[:]"),
], ids=["namedtuple", "namedtuple-cleared", "NamedTuple", "NamedTuple-cleared"])
def test_named_tuples_against_torch(tmp_path, define, after):
    program = textwrap.dedent(NAMED.format(define=define.replace("\n", "\n    "), after=after))
    agrees_with_torch(tmp_path, program)


FROZEN = """\
    import torch
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Linear(4, 1))
    for p in model.parameters():
        p.requires_grad = False
    {unfreeze}
    loss = model(torch.randn(2, 3)).sum()
    loss.backward()
    """


@pytest.mark.parametrize("unfreeze", [
    "pass",
    "for p in model[1].parameters():\n    p.requires_grad_(True)",
    "for p in model[1].parameters():\n    p.requires_grad = True",
    "model[0].weight.requires_grad_()",
], ids=["frozen", "head-method", "head-attribute", "one-weight"])
def test_unfreezing_against_torch(tmp_path, unfreeze):
    """GG104 where torch raises that nothing requires grad; nothing once a part is trainable again."""
    program = textwrap.dedent(FROZEN.format(unfreeze=unfreeze.replace("\n", "\n    ")))
    agrees_with_torch(tmp_path, program, "GG104", "does not require grad")


@pytest.mark.parametrize("body", [
    "for p in model.parameters():\n    p.requires_grad = True\n",
    "for i in range(n):\n    z = torch.randn(3, requires_grad=True)\n    total = total + z.sum()\n",
    "for i in range(n):\n    layer = nn.Linear(2, 2)\n    out = layer(torch.ones(2))\n",
])
def test_a_loop_making_a_requires_grad_origin_each_iteration_settles(monkeypatch, body):
    """One origin per site and context, as segments are: a new one each pass grew the values'
    roots and kept the loop from its fixpoint until the passes ran out."""
    from gradguard import engine as engine_module

    passes = []
    real_loop = engine_module.Engine.loop

    def loop(self, key, st, step, orelse, forever=None):
        counted = lambda s, first: passes.append(key.lineno) or step(s, first)  # noqa: E731
        return real_loop(self, key, st, counted, orelse, forever)

    monkeypatch.setattr(engine_module.Engine, "loop", loop)
    program = "import torch\nimport torch.nn as nn\nmodel = nn.Linear(2, 2)\nn = int(input())\ntotal = 0\n" + body
    analyze_source(program + "model(torch.ones(2)).sum().backward()\n", "<roots>")
    assert passes == [6, 6]


# A generator expression's outermost iterable is evaluated where it is written (Python does so);
# read lazily, ``ps = tuple(p for p in ps ...)`` was a generator walking itself, without end
# (the compiled build overflowed the C stack on torchdiffeq's adjoint.py, gpytorch, functorch).
GENERATORS = {
    "rebinds-its-iterable": """\
        import torch
        w = torch.ones(3, requires_grad=True)
        ps = [w, torch.ones(3, requires_grad=True)]
        ps = tuple(p for p in ps if p.requires_grad)
        loss = (ps[0] * ps[0]).sum()
        loss.backward()
        {again}
        """,
    "rebinds-in-a-loop": """\
        import torch
        w = torch.ones(3, requires_grad=True)
        xs = [w * 2, w * 3]
        for step in range(3):
            xs = (x * 1 for x in xs)
        for x in xs:
            y = (x * x).sum()
            y.backward()
            {again}
        """,
    "returned-from-a-function": """\
        import torch
        def scaled(ws):
            return (v * v for v in ws)
        w = torch.ones(3, requires_grad=True)
        for y in scaled([w, w]):
            y.sum().backward()
            {again}
        """,
    "nested-in-itself": """\
        import torch
        w = torch.ones(3, requires_grad=True)
        it = [w]
        it = (a * a for a in (b for b in it))
        it = list(it)
        loss = it[0].sum()
        loss.backward()
        {again}
        """,
}


@pytest.mark.parametrize("shape, again", [
    (shape, again) for shape in sorted(GENERATORS)
    for again in ("pass", "y.sum().backward()" if "for y" in GENERATORS[shape] or "y =" in GENERATORS[shape]
                  else "loss.backward()")
])
def test_generator_expressions_against_torch(tmp_path, shape, again):
    """Each shape once clean, once with a second backward that torch refuses."""
    program = textwrap.dedent(GENERATORS[shape])
    if shape in WIDENED:
        # the loop's generators of generators join into one whose elements are unknown: what
        # it reports must still be true, if less than torch raises
        path = tmp_path / "prog.py"
        path.write_text(program.format(again=again))
        ran = torchrun.run(path)
        raised = re.findall(r'prog\.py", line (\d+)', ran.stderr) if ran.returncode else []
        found = [(f.code, f.location.line) for f in analyze_source(path.read_text(), "<t>").findings]
        assert set(found) <= ({("GG101", int(raised[-1]))} if raised else set())
    else:
        agrees_with_torch(tmp_path, program.format(again=again))


WIDENED = {"rebinds-in-a-loop"}


# One backward meets a freed graph and an overwritten saved tensor: torch runs the nodes made
# last first, and raises for the first of the two it meets.
TWO_PROBLEMS = {
    "overwritten-made-last": ("""\
        import torch
        w = torch.ones(3, requires_grad=True)
        a = (w * w).sum()
        h = torch.sigmoid(w * 2)
        (a * 3 + (h * 1).sum()).backward()
        z = torch.sigmoid(w * 2)
        z.add_(1)
        loss = (a * 2) + z.sum()
        loss.backward()
        """, "GG103", "modified by an inplace operation"),
    "freed-made-last": ("""\
        import torch
        w = torch.ones(3, requires_grad=True)
        z = torch.sigmoid(w * 2)
        z.add_(1)
        a = (w * w).sum()
        a.backward()
        loss = (a * 2) + z.sum()
        loss.backward()
        """, "GG101", SECOND_TIME),
}


@pytest.mark.parametrize("case", sorted(TWO_PROBLEMS))
def test_the_error_torch_meets_first(tmp_path, case):
    program, code, message = TWO_PROBLEMS[case]
    agrees_with_torch(tmp_path, textwrap.dedent(program), code, message)


# A view shares its base's version counter: an in-place write through either spoils what the
# other's ops saved. ``{write}`` is the write; each case once as written, once on a clone.
VIEWS = {
    "write-through-view": ("h = torch.sigmoid(w * 2)\nv = h{copy}.view(-1)\nv[0] = 5.0\nloss = h.sum()"),
    "write-base-column": ("x = w * 2\ne = torch.log(x[:, 0]{copy})\nx[:, 0] += 1\nloss = e.sum()"),
    "write-base-transposed": ("x = w * 2\ne = torch.log(x.t(){copy})\nx.mul_(2)\nloss = e.sum()"),
    "write-detached": ("h = torch.sigmoid(w * 2)\nd = h.detach(){copy}\nd.zero_()\nloss = h.sum()"),
    "write-row-select": ("x = w * 2\ne = x[1]{copy} * x[1]\nx[1].fill_(0)\nloss = e.sum()"),
    # reshape, flatten and ravel view a contiguous tensor and copy any other (a transposed one,
    # and what element-wise ops compute from it, keeping its strides)
    "write-through-flatten": ("h = torch.sigmoid(w * 2)\nv = torch.flatten(h{copy})\nv.mul_(2)\nloss = h.sum()"),
    "write-through-reshape": ("h = torch.sigmoid(w * 2)\nv = h{copy}.reshape(2, 6)\nv[0] = 5.0\nloss = h.sum()"),
    "write-through-ravel": ("h = torch.relu(w * 3)\nv = h{copy}.ravel()\nv.zero_()\nloss = h.sum()"),
    "write-reshaped-transposed": ("h = torch.sigmoid(w * 2).t()\nv = h{copy}.reshape(-1)\nv.mul_(2)\nloss = h.sum()"),
    "write-flattened-strided": ("h = torch.sigmoid(w.t() * 2)\nv = h{copy}.flatten()\nv.mul_(2)\nloss = h.sum()"),
    "write-flattened-contiguous": ("h = torch.sigmoid(w.t() * 2).contiguous()\nv = h{copy}.flatten()\nv.mul_(2)\n"
                                   "loss = h.sum()"),
}


@pytest.mark.parametrize("copy", ["", ".clone()"], ids=["view", "clone"])
@pytest.mark.parametrize("case", sorted(VIEWS))
def test_views_share_the_version_counter_against_torch(tmp_path, case, copy):
    body = VIEWS[case].format(copy=copy)
    program = "import torch\nw = torch.ones(4, 3, requires_grad=True)\n" + body + "\nloss.backward()\n"
    agrees_with_torch(tmp_path, program, "GG103", "modified by an inplace operation")


ALL_ANY = {
    "all-true": "all(b.numel() > 0 for b in bufs)",
    "any-false": "not any(b.numel() == 0 for b in bufs)",
    "all-of-a-tuple": "all((bufs[0].dim() == 1, w.dim() == 1))",
    "any-of-a-tuple": "any((bufs[1].dim() == 2, w.dim() == 2))",
}


@pytest.mark.parametrize("case", sorted(ALL_ANY))
def test_all_and_any_decide_a_branch_against_torch(tmp_path, case):
    """``all``/``any`` run their generator's test on the items: where it is one constant for
    what stands for every item, the branch is decided (an in-place write that surely runs)."""
    program = ("import torch\nw = torch.ones(3, requires_grad=True)\nbufs = [torch.zeros(2), torch.zeros(2)]\n"
               f"y = torch.sigmoid(w * 2)\nif {ALL_ANY[case]}:\n    y.mul_(2)\ny.sum().backward()\n")
    agrees_with_torch(tmp_path, program, "GG103", "modified by an inplace operation")


def test_an_unresolved_torch_function_over_a_list_may_pass_its_graphs_on(tmp_path):
    """``pad_sequence(rows)`` is not in the table: what it makes of a list of tensors is not
    known, so the rows' graphs may reach the backward over its result (a total built into them
    is walked, maybe: no GG202), and nothing about its result is claimed."""
    program = textwrap.dedent("""\
        import torch
        from torch.nn.utils.rnn import pad_sequence
        w = torch.ones(4, 3, requires_grad=True)
        h = w * 2
        for i in range(3):
            h = h + (w * i).sum() * 0
        rows = [h[k][: k + 1] for k in range(4)]
        padded = pad_sequence(rows, batch_first=True)
        padded.sum().backward()
        """)
    agrees_with_torch(tmp_path, program)


@pytest.mark.parametrize("stop", ["1", "n", "2", "1 + n"])
def test_a_range_of_one_runs_its_body_once_against_torch(tmp_path, stop):
    """``for epoch in range(1)`` (a setting of 1) has no second iteration to walk a freed graph
    again; ``range(2)`` has."""
    program = ("import torch\nw = torch.ones(3, requires_grad=True)\ny = (w * 2).sum()\nn = 1\n"
               f"for _ in range({stop}):\n    y.backward()\n")
    agrees_with_torch(tmp_path, program)


@pytest.mark.parametrize("over, retain", [("xs", ""), ("xs[:1]", ""), ("xs", ", retain_graph=True")])
def test_a_comprehension_of_gradients_walks_the_graph_once_per_step_against_torch(tmp_path, over, retain):
    """``[autograd.grad(out, x)[0] for x in xs]``: the second step walks what the first freed."""
    program = ("import torch\nw = torch.ones(3, requires_grad=True)\n"
               "xs = [torch.ones(3, requires_grad=True) for _ in range(2)]\n"
               "out = (w * sum(xs)).sum() * (w * 2).sum()\n"
               f"grads = [torch.autograd.grad(out, x{retain})[0] for x in {over}]\n")
    agrees_with_torch(tmp_path, program)
    for finding in analyze_source(program, "<t>").findings:  # the comprehension's previous step
        assert finding.message.endswith("in the previous iteration"), finding.message


CUSTOM_FUNCTION = """\
    import torch

    class Spike(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, alpha):
            {keep}
            return (x > 0).float() * alpha

        @staticmethod
        def backward(ctx, grad):
            {read}
            return grad * ctx.alpha, None

    w = torch.ones(3, requires_grad=True)
    h = {wrap}
    for _ in range(2):
        h.sum().backward()
    """


@pytest.mark.parametrize("keep, read, wrap", [
    ("ctx.save_for_backward(x); ctx.alpha = alpha", "pass", "Spike.apply(w + 1, 0.5) * 2"),
    ("ctx.alpha = alpha", "pass", "torch.sigmoid(Spike.apply(w + 1, 0.5))"),
    ("ctx.alpha = alpha", "pass", "Spike.apply(w.detach() + 1, 0.5)"),
])
def test_a_custom_autograd_function_is_one_node_against_torch(tmp_path, keep, read, wrap):
    """``Cls.apply(...)``: one node over the tensor arguments, which raises on a second walk
    only if its backward reads what its forward saved (a sigmoid after it saves its output)."""
    agrees_with_torch(tmp_path, textwrap.dedent(CUSTOM_FUNCTION.format(keep=keep, read=read, wrap=wrap)),
                      "GG104" if "detach" in wrap else "GG101",
                      "does not require grad" if "detach" in wrap else SECOND_TIME)


def test_a_custom_backward_reading_what_was_freed_raises_in_the_backward_call(tmp_path):
    """torch raises in the custom backward's ``ctx.saved_tensors``, under the user's second
    ``backward()`` call: the line the finding is on."""
    program = textwrap.dedent(CUSTOM_FUNCTION.format(keep="ctx.save_for_backward(x); ctx.alpha = alpha",
                                                     read="x, = ctx.saved_tensors", wrap="Spike.apply(w + 1, 0.5)"))
    path = tmp_path / "prog.py"
    path.write_text(program)
    ran = torchrun.run(path)
    assert ran.returncode != 0 and SECOND_TIME in ran.stderr
    found = [(f.code, f.severity, f.location.line) for f in analyze_source(program, str(path)).findings]
    line = next(i for i, text in enumerate(program.splitlines(), 1) if "h.sum().backward()" in text)
    assert found == [("GG101", "error", line)] and f'prog.py", line {line}' in ran.stderr


def test_a_custom_autograd_function_that_saves_nothing_walks_again_without_raising(tmp_path):
    program = textwrap.dedent(CUSTOM_FUNCTION.format(keep="ctx.alpha = alpha", read="pass",
                                                     wrap="Spike.apply(w + 1, 0.5)"))
    path = tmp_path / "prog.py"
    path.write_text(program)
    assert torchrun.run(path).returncode == 0
    assert [(f.code, f.severity) for f in analyze_source(program, str(path)).findings] == [("GG102", "warning")]


ENSEMBLE = """\
    import torch
    import torch.nn as nn
    models = [nn.Linear(5, 4), nn.Linear(5, 4)]
    x = torch.randn(6, 5)
    outputs = []
    for model in models:
        outputs.append(model(x))
    for epoch in range({epochs}):
        for i in {indices}:
            loss = outputs[i].sum()
            loss.backward()
    """


@pytest.mark.parametrize("indices", ["range(len(outputs))", "range(2)"])
def test_each_element_of_a_list_known_apart_is_walked_once(tmp_path, indices):
    """Two models' outputs, each backwarded once by index: an element read by an index not
    pinned is one of them, so a walk of a freed graph through it is a maybe (never an error)
    unless every element's graph is freed, as in a second epoch (torch raises there)."""
    once = textwrap.dedent(ENSEMBLE.format(epochs=1, indices=indices))
    path = tmp_path / "once.py"
    path.write_text(once)
    assert torchrun.run(path).returncode == 0
    found = analyze_source(once, str(path)).findings
    assert all(f.severity == "warning" and "one of several" in f.message for f in found), found
    agrees_with_torch(tmp_path, textwrap.dedent(ENSEMBLE.format(epochs=2, indices="range(len(outputs))")))


SPLIT = """\
    import torch
    w = torch.ones(4, 3, requires_grad=True)
    out = w * 2
    _, p = torch.max(out, 1)
    v, i = out.max(dim=1)
    s, j = out.sort(1)
    m = torch.max(out, out * 3)
    print(p.numpy(), i.numpy(), j.numpy(), out.topk(2).indices.numpy(), torch.kthvalue(out, 1, 1)[1].numpy())
    (v.sum() + s.sum() + m.sum()).backward()
    {last}
    """


@pytest.mark.parametrize("last", ["print(torch.max(out, 1).values.numpy())", "print(out.max(1)[1].numpy())"])
def test_indices_of_multi_output_ops_against_torch(tmp_path, last):
    """(values, indices) pairs: only the values require grad."""
    agrees_with_torch(tmp_path, textwrap.dedent(SPLIT).format(last=last), "GG107", "Can't call numpy()")


REINFORCE = """\
    import torch
    class Policy:
        def __init__(self):
            self.w = torch.ones(3, requires_grad=True)
            self.data = []
        def put(self, item):
            self.data.append(item)
        def train(self):
            R = 0
            for r, p in self.data{part}:
                R = r + 0.9 * R
                loss = -p * R
                loss.backward()
            self.data = []
    pi = Policy()
    for i in range(4):
        pi.put((1.0, (pi.w * 2).sum()))
    pi.train()
    """


@pytest.mark.parametrize("part", ["", "[::-1]", "[1:]", "[:]"])
def test_a_slice_of_a_list_is_a_list_against_torch(tmp_path, part):
    """minimalRL's REINFORCE walks its (reward, log-prob) pairs backwards: each position keeps
    its own value through the slice (a float is no graph)."""
    agrees_with_torch(tmp_path, textwrap.dedent(REINFORCE).format(part=part))


STATEFUL = """\
    import torch
    import torch.nn as nn
    class Leaky(nn.Module):
        def __init__(self):
            super().__init__()
            self.mem = None
        def reset_mem(self):
            self.mem = None
        def forward(self, x):
            if self.mem is None:
                self.mem = torch.zeros_like(x)
            self.mem = 0.9 * self.mem + x
            return torch.sigmoid(self.mem)
    def reset(m):
        if isinstance(m, Leaky):
            m.reset_mem()
    net = nn.Sequential(nn.Linear(3, 4), Leaky(), nn.Linear(4, 2), Leaky())
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for batch in range(2):
        {reset}
        loss = net(torch.randn(2, 3)).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    """


@pytest.mark.parametrize("reset", [
    "pass",  # the membranes carry the last batch's graph: raises
    "for m in net.modules():\n        reset(m)",
    "for _, m in net.named_modules():\n        reset(m)",
    "net.apply(reset)",
    "for m in net.children():\n        if isinstance(m, nn.Linear):\n            continue\n        m.reset_mem()",
])
def test_a_model_walks_its_own_submodules_against_torch(tmp_path, reset):
    agrees_with_torch(tmp_path, textwrap.dedent(STATEFUL).format(reset=reset))


def test_init_loops_over_modules_against_torch(tmp_path):
    """nn.init in a loop over modules() and through apply() is no in-place write on a leaf; a
    loop over children() freezes them all."""
    agrees_with_torch(tmp_path, INIT_LOOPS, "GG104", "does not require grad")


INIT_LOOPS = """\
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)
        self.fc = nn.Linear(4, 2)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out")
            elif isinstance(m, nn.Linear):
                nn.init.constant_(m.bias, 0)
                m.weight.data.normal_(0, 0.01)
    def forward(self, x):
        return self.fc(self.conv(x).mean(dim=(2, 3)))
def init_weights(m):
    if type(m) == nn.Linear:
        torch.nn.init.xavier_uniform_(m.weight)
        m.bias.data.fill_(0.01)
net = Net()
net.apply(init_weights)
for c in net.children():
    c.requires_grad_(False)
out = net(torch.randn(2, 1, 5, 5))
out.sum().backward()
"""


@pytest.mark.parametrize("size", ["-1", "x.size(0), -1", "x.shape[0], -1", "len(x), -1", "int(x.shape[0]) * 1, -1",
                                  "x.numel() // 8, 8", "round(float(x.sum().item())) * 0 + 2, -1"])
def test_numbers_are_no_tensors_against_torch(tmp_path, size):
    """Sizes, lengths and ``.item()`` are Python numbers: a frozen network's output viewed with
    them still requires no grad."""
    program = ("import torch\nnet = torch.nn.Linear(8, 8)\nnet.requires_grad_(False)\n"
               "x = torch.randn(2, 8)\n"
               f"y = net(x).view({size})\n"
               "y.sum().backward()\n")
    agrees_with_torch(tmp_path, program, "GG104", "does not require grad")


HEADS = """\
    import torch
    import torch.nn as nn
    class Heads(nn.Module):
        def __init__(self, ch=(4, 8)):
            super().__init__()
            self.m = nn.ModuleList({modules})
        def forward(self, feats):
            outs = []
            for i, x in enumerate(feats):
                bs, _, ny, nx = x.shape
                outs.append(self.m[i](x).view(bs, 3, ny, nx))
            return outs
    def show(*arrays):
        for array in arrays:
            print(array{convert}.numpy().shape)
    feats = [torch.rand(1, 4, 4, 4), torch.rand(1, 8, 4, 4)]
    show(*Heads()(feats))
    """


@pytest.mark.parametrize("modules", ["nn.Conv2d(c, 3, 1) for c in ch", "[nn.Conv2d(c, 3, 1) for c in ch]",
                                     "(nn.Conv2d(4, 3, 1), nn.Conv2d(8, 3, 1))"])
@pytest.mark.parametrize("convert", [".cpu()", ".detach().cpu()"])
def test_a_module_list_indexed_in_a_loop_against_torch(tmp_path, modules, convert):
    agrees_with_torch(tmp_path, textwrap.dedent(HEADS).format(modules=modules, convert=convert), "GG107",
                      "Can't call numpy()")


def test_a_graph_stored_into_an_unknown_object_may_be_walked(tmp_path):
    """``g.ndata["H"] = H`` of a graph library: the loss read back from it walks H, so the
    residual ``H = h + H`` is no running total nobody walks (GG202). Run with a stand-in library."""
    (tmp_path / "graphlib.py").write_text(
        "class Graph:\n    def __init__(self):\n        self.ndata = {}\n"
        "def graph():\n    return Graph()\n"
        "def mean_nodes(g, key):\n    return g.ndata[key].mean(0)\n")
    program = textwrap.dedent("""\
        import torch
        import torch.nn as nn
        import graphlib
        class Layer(nn.Module):
            def __init__(self):
                super().__init__()
                self.A = nn.Linear(4, 4)
            def forward(self, g, h):
                H = h + self.A(h)
                g.ndata["H"] = H
                return H
        layers = nn.ModuleList([Layer(), Layer()])
        opt = torch.optim.SGD(layers.parameters(), lr=0.1)
        g = graphlib.graph()
        for step in range(2):
            h = torch.randn(3, 4)
            for layer in layers:
                h = layer(g, h)
            loss = graphlib.mean_nodes(g, "H").sum()
            opt.zero_grad()
            loss.backward()
        """)
    path = tmp_path / "prog.py"
    path.write_text(program)
    assert torchrun.run(path, cwd=tmp_path).returncode == 0
    # analysed where the library is not part of the project: it is unknown code
    assert analyze_source(program, "<escape>").findings == []


def test_a_lambda_held_by_a_class_is_a_method_against_torch(tmp_path):
    program = textwrap.dedent("""\
        import torch
        class A:
            scale = lambda self, x: x * 2
            def run(self, x):
                return self.scale(x)
        w = torch.ones(2, requires_grad=True)
        y = A().run(w)
        y.sum().backward()
        y.sum().backward()
        """)
    agrees_with_torch(tmp_path, program)


def test_requires_grad_on_an_attribute_of_a_known_object_against_torch(tmp_path):
    """``h.p.requires_grad_()`` on an object the analysis sees changes ``h.p`` only: a tensor
    made later, detached, still has no graph (torch raises on its backward, and so must the
    finding say), while ``h.p`` now requires grad."""
    program = textwrap.dedent("""\
        import torch
        class Holder:
            pass
        h = Holder()
        h.p = torch.zeros(3)
        h.p.requires_grad_()
        (h.p * 2).sum().backward()
        w = torch.randn(3, requires_grad=True)
        loss = (w * 2).detach().sum()
        loss.backward()
        """)
    path = tmp_path / "holder.py"
    path.write_text(program, encoding="utf-8")
    found = [(f.code, f.location.line, f.severity) for f in analyze_source(program, str(path)).findings]
    assert found == [("GG104", 10, "error")]
    run = torchrun.run(path, timeout=120)
    assert "does not require grad" in run.stderr and 'line 10' in run.stderr


RETAINED_BY_AN_OLD_KEYWORD = """\
import torch
w = torch.randn(3, requires_grad=True)
p = (w * 2).sigmoid()
d_loss = p.sum()
g_loss = (1 - p).log().sum()
d_loss.backward({keyword}=True)
g_loss.backward()
"""


@pytest.mark.parametrize("keyword", ["retain_variables", "retain_graph"])
def test_a_keyword_backward_does_not_take_ends_the_program(tmp_path, keyword):
    """torch < 0.4's ``retain_variables`` is a TypeError now: the program stops there, so the
    backward after it, which would walk a freed graph, never runs (a false GG101 in a
    MorvanZhou/PyTorch-Tutorial notebook). With ``retain_graph`` both backwards run."""
    program = RETAINED_BY_AN_OLD_KEYWORD.format(keyword=keyword)
    path = tmp_path / "prog.py"
    path.write_text(program)
    ran = torchrun.run(path)
    assert (ran.returncode != 0) == (keyword == "retain_variables")
    if ran.returncode:
        assert "unexpected keyword argument 'retain_variables'" in ran.stderr, ran.stderr
    assert [f.code for f in analyze_source(program, "<t>").findings] == []


def test_numpy_of_tensors_the_analysis_is_unsure_of_keeps_their_graph():
    """``np.sum([...])`` of losses that may require grad (computed by code the analysis does not
    see): NumPy raises on them if they do, else the sum holds what they held. Either way the
    retained graph is not known to be unused (d2l's style transfer: a false GG203)."""
    program = textwrap.dedent("""\
        import numpy as np
        import torch
        from features import extract
        x = torch.randn(3, requires_grad=True)
        targets = extract(torch.randn(3))
        for epoch in range(3):
            losses = np.array([((extract(x) - y) ** 2).mean() for y in targets])
            l = np.sum(losses) + x.abs().mean()
            l.backward(retain_graph=True)
        """)
    assert [f.code for f in analyze_source(program, "<t>").findings] == []
    known = program.replace("from features import extract\n", "extract = lambda t: [t * 2, t * 3]\n")
    assert [f.code for f in analyze_source(known, "<t>").findings] == ["GG107"]


def test_retain_grad_holds_for_the_tensor_read_back_from_a_container(tmp_path):
    """``out.retain_grad()``, then ``.grad`` read from the dict that holds ``out``: torch keeps
    the gradient and does not warn (nni's speedup after its PR 5343: a false GG106)."""
    program = textwrap.dedent("""\
        import torch
        net = torch.nn.Linear(3, 3)
        results = {}
        for name in ["a", "b"]:
            out = net(torch.randn(2, 3))
            out.retain_grad()
            results[name] = out
        sum(o.sum() for o in results.values()).backward()
        for name in results:
            print(results[name].grad is not None)
        """)
    path = tmp_path / "prog.py"
    path.write_text(program)
    ran = torchrun.run(path)
    assert ran.returncode == 0 and "not a leaf" not in ran.stderr and "False" not in ran.stdout, ran.stderr
    assert analyze_source(program, "<t>").findings == []
    plain = program.replace("    out.retain_grad()\n", "")
    assert [f.code for f in analyze_source(plain, "<t>").findings] == ["GG106"]


@pytest.mark.parametrize("call", ["f = w.mul\ny = f(2)", "for f in (w.mul, w.add):\n    y = f(2)",
                                  "f = w.detach_\nf()\ny = w * 2", "f = w.numpy\nf()\ny = w * 2"])
def test_a_tensor_method_called_by_another_name(call):
    """A bound tensor method held in a variable (gpytorch's notebooks): its receiver has no
    expression at the call; the analysis goes on (found by the round-4 corpus, an internal error)."""
    program = "import torch\nw = torch.ones(2, requires_grad=True)\n" + call + "\ny.sum().backward()\n"
    analyze_source(program, "<t>")
