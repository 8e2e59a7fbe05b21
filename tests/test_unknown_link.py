"""An error is a proof: every link of its causal chain must come from code the analysis understood.

For every bug program (tests/fixtures ``*_bug``, tests/recall/buggy) and every error-severity
finding GradGuard makes on one of its marked lines, each link of the finding's causal chain is
rewritten in turn so that its value comes out of a function the analysis cannot resolve:
``y = expr`` becomes ``y = mystery(expr)``, with ``from unknown_lib import mystery`` at the top
(no such module exists). The error must go away; a warning is acceptable only if it says why
(the value passed through code GradGuard could not resolve).

The causal chain of a finding, from its related places and the hover index's graph steps:
- its requires-grad origins (``origin_tensor``/``origin_params``);
- for a backward through freed graph (GG101): the statement that built the freed graph and the
  graph steps that carry its value to the finding (only those reading what it built: a fresh
  branch of the same loss is no link of that proof);
- for an in-place change of a saved tensor (GG103): the op that saved it and the graph steps on
  from it;
- for a loss without grad (GG104): where the graph was cut (detached, rebuilt from numbers, grad
  off) and the statements that carry the cut value to the finding;
- otherwise (GG105-GG108): the graph steps of the tensor the finding is about.
The finding's own statement is no link: wrapping it would still run the failing operation.
"""
from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from gradguard.analysis import analyze_source
from gradguard.findings import BackwardFact, Finding, Location, TensorFact

TESTS = Path(__file__).resolve().parent
SOURCES = (TESTS / "fixtures", TESTS / "recall" / "buggy")
RAISING = ("GG101", "GG103", "GG104", "GG105", "GG106", "GG107", "GG108")
EXPECT = re.compile(r"#\s*expect:\s*(.*)$")
IMPORT = "from unknown_lib import mystery\n"
#: what a finding that could not be proved must say about itself
REASON = re.compile(r"could not (be )?resolve")


def _programs() -> list[Path]:
    out = []
    for base in SOURCES:
        for p in sorted(base.iterdir()):
            if p.name.startswith((".", "_")):
                continue
            if base.name == "fixtures" and not p.name.removesuffix(".py").endswith("_bug"):
                continue
            if (p.is_dir() and (p / "main.py").is_file()) or p.suffix == ".py":
                out.append(p)
    return out


def _files(program: Path) -> list[Path]:
    if program.is_dir():
        return sorted(f for f in program.rglob("*.py") if "__pycache__" not in f.parts)
    return [program]


def _marks(file: Path) -> set[tuple[int, str]]:
    found = set()
    for tok in tokenize.generate_tokens(io.StringIO(file.read_text(encoding="utf-8")).readline):
        if tok.type == tokenize.COMMENT and (m := EXPECT.search(tok.string)):
            found.update((tok.start[0], code) for code in re.findall(r"GG\d{3}", m.group(1)))
    return found


def _analyse(file: Path, texts: dict[Path, str], facts: bool = False):
    overlay = {str(p): t for p, t in texts.items() if p != file}
    return analyze_source(texts.get(file) or file.read_text(encoding="utf-8"), str(file), facts=facts,
                          overlay=overlay or None)


# --------------------------------------------------------------------------------------------
# the causal chain


@dataclass(frozen=True)
class Link:
    file: Path
    line: int  # a line of the statement whose value is wrapped
    column: int  # 1-based, as in findings.Location

    def label(self, program: Path) -> str:
        rel = self.file.relative_to(program) if program.is_dir() else self.file.name
        return f"{rel}:{self.line}"


def _statements(tree: ast.Module) -> list[ast.stmt]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.stmt)]


def _statement_at(tree: ast.Module, line: int, column: int):
    """The innermost statement holding (line, column), column 1-based in code points."""
    best = None
    for st in _statements(tree):
        if (st.lineno, st.col_offset) <= (line, column - 1) and line <= st.end_lineno:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and line != st.lineno:
                continue
            if best is None or (st.lineno, st.col_offset) >= (best.lineno, best.col_offset):
                best = st
    return best


def _stores(st: ast.stmt) -> set[str]:
    targets = st.targets if isinstance(st, ast.Assign) else [getattr(st, "target", None)]
    return {ast.unparse(n) for t in targets if t is not None for n in ast.walk(t)
            if isinstance(n, (ast.Name, ast.Attribute)) and isinstance(n.ctx, ast.Store)}


def _reads(st: ast.stmt) -> set[str]:
    value = getattr(st, "value", None) if isinstance(st, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return)) else st
    return {ast.unparse(n) for n in ast.walk(value) if isinstance(n, (ast.Name, ast.Attribute))
            and isinstance(n.ctx, ast.Load)} if value is not None else set()


def _downstream(tree: ast.Module, sources: list[ast.stmt]) -> set[int]:
    """Lines of the statements that read, directly or through others, what ``sources`` store."""
    names = set().union(*(_stores(s) for s in sources)) if sources else set()
    lines = {s.lineno for s in sources}
    changed = True
    while changed:
        changed = False
        for st in _statements(tree):
            if isinstance(st, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and st.lineno not in lines \
                    and _reads(st) & names:
                lines.add(st.lineno)
                names |= _stores(st)
                changed = True
    return lines


def _made_without_grad(tree: ast.Module, st: ast.stmt, line: int) -> list[ast.stmt]:
    """Where grad recording is off (GG104's ``grad_off``): the assignments in the body of a
    ``with torch.no_grad():``, or the returns of a function decorated with ``@torch.no_grad()``."""
    if isinstance(st, (ast.With, ast.AsyncWith)) and st.lineno == line:
        # what leaves the block as it was made: a value the block goes on computing from was made
        # without grad whatever it was (an unknown input changes nothing there)
        body = [x for x in st.body if isinstance(x, (ast.Assign, ast.AnnAssign))]
        return [x for i, x in enumerate(body) if not any(_stores(x) & _reads(y) for y in body[i + 1:])]
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(d.lineno == line for d in fn.decorator_list):
            return [x for x in ast.walk(fn) if isinstance(x, ast.Return) and x.value is not None]
    return []


def _upstream(tree: ast.Module, target: ast.stmt) -> set[int]:
    """Lines of the statements whose values ``target`` reads, directly or through others."""
    names = _reads(target)
    lines: set[int] = set()
    changed = True
    while changed:
        changed = False
        for st in _statements(tree):
            if isinstance(st, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and st.lineno not in lines \
                    and _stores(st) & names:
                lines.add(st.lineno)
                names |= _reads(st)
                changed = True
    return lines


def _carries(analysis, step: Location, st, source: Location) -> bool:
    """Whether the value ``st`` stores at a graph step holds the graph made at ``source`` (a step
    may only be where a call built graph that went elsewhere: ``action = agent.act(obs)``)."""
    if st is None:
        return False
    names = {n.id for t in (st.targets if isinstance(st, ast.Assign) else [getattr(st, "target", None)])
             if t is not None for n in ast.walk(t) if isinstance(n, ast.Name)}
    for fact in analysis.facts.index.get((step.cell, step.line), ()):
        if isinstance(fact, TensorFact) and fact.name in names and (fact.freed_by or any(
                (g.location.path, g.location.line) == (source.path, source.line) for g in fact.chain)):
            return True
    return False


def _freer_steps(analysis, freed) -> tuple:
    for fact in analysis.facts.index.get((freed.cell, freed.line), ()):
        if isinstance(fact, BackwardFact) and (fact.location.line, fact.location.column) == (freed.line, freed.column):
            return fact.frees
    return ()


def _subject(analysis, finding: Finding):
    """The tensor the finding is about: on its range, the one with the longest known chain."""
    loc = finding.location
    facts = [f for f in analysis.facts.index.get((loc.cell, loc.line), ()) if isinstance(f, TensorFact)]
    facts.sort(key=lambda f: (-len(f.chain), f.location.column))
    return facts[0] if facts else None


def chain(finding: Finding, analysis, files: list[Path]) -> list[Link]:
    trees = {f: ast.parse(f.read_text(encoding="utf-8")) for f in files}
    file_of = {str(f): f for f in files}
    related = {r.key: r.location for r in finding.related}
    here = file_of.get(finding.location.path)
    # an origin is a link only if it is the only one (two layers of one statement are one): with
    # several, the others may carry the proof on their own
    origins = [r.location for r in finding.related if r.key in ("origin_tensor", "origin_params")]
    places = origins if len({(o.path, o.line) for o in origins}) == 1 else []
    subject = _subject(analysis, finding)
    steps = [s.location for s in subject.chain] if subject is not None else []
    if "freed" in related:  # the backward that freed the graph walked it through these steps
        steps += [s.location for s in _freer_steps(analysis, related["freed"])]
    source_keys = {"GG101": ("built",), "GG103": ("saved",), "GG104": ("detached", "rebuilt", "grad_off",
                                                                       "no_create_graph")}.get(finding.code)
    if source_keys is None:
        places += steps
    else:
        sources = [related[k] for k in source_keys if k in related]
        places += sources
        if finding.code == "GG104" and not sources and here is not None:
            # nothing cut the graph (frozen parameters): every value the loss is computed from
            # is part of the proof that none requires grad
            tree = trees[here]
            target = _statement_at(tree, finding.location.line, finding.location.column)
            up = _upstream(tree, target) if target is not None else set()
            places += [_loc_of(x, str(here)) for x in _statements(tree) if x.lineno in up]
        for src in sources:  # the steps that carry what the source made on to the finding
            tree = trees.get(file_of.get(src.path))
            st = _statement_at(tree, src.line, src.column) if tree is not None else None
            made = _made_without_grad(tree, st, src.line) if tree is not None else []
            if st is None and not made:
                continue
            target = _statement_at(tree, finding.location.line, finding.location.column) \
                if file_of[src.path] == here else None
            up = _upstream(tree, target) if target is not None else None
            places += [_loc_of(x, src.path) for x in made  # a return: the call is on the path
                       if up is None or x.lineno in up or isinstance(x, ast.Return)]
            down = _downstream(tree, made or [st])
            places += [s for s in steps if s.path == src.path and s.line in down
                       and _carries(analysis, s, _statement_at(tree, s.line, s.column), src)]
            if finding.code == "GG104" and up is not None:
                # a value without grad has no graph steps: follow the names to the finding
                places += [_loc_of(x, src.path) for x in _statements(tree) if x.lineno in down & up]
    out = {}
    for loc in places:
        file = file_of.get(loc.path)
        st = _statement_at(trees[file], loc.line, loc.column) if file is not None else None
        if st is None or not isinstance(st, (ast.Assign, ast.AnnAssign, ast.Return)) or st.value is None:
            continue
        if file == here and st.lineno <= finding.location.line <= st.end_lineno:
            continue  # the finding's own statement
        out.setdefault((file, st.lineno), Link(file, st.lineno, st.col_offset + 1))
    return sorted(out.values(), key=lambda k: (str(k.file), k.line))


def _loc_of(st: ast.stmt, path: str) -> Location:
    return Location(path, st.lineno, st.col_offset + 1, st.end_lineno, st.end_col_offset + 1)


# --------------------------------------------------------------------------------------------
# the rewrite


class _Wrap(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, line: int, column: int):
        self.line, self.column, self.done = line, column - 1, False

    def _at(self, node) -> bool:
        start = self.get_metadata(PositionProvider, node).start
        return (start.line, start.column) == (self.line, self.column)

    def _wrapped(self, value):
        self.done = True
        if isinstance(value, cst.Tuple) and not value.lpar:  # ``a, b = x, y``: one argument
            value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return cst.Call(cst.Name("mystery"), [cst.Arg(value)])

    def leave_Assign(self, original, updated):
        return updated.with_changes(value=self._wrapped(updated.value)) if self._at(original) else updated

    def leave_AnnAssign(self, original, updated):
        if updated.value is not None and self._at(original):
            return updated.with_changes(value=self._wrapped(updated.value))
        return updated

    def leave_Return(self, original, updated):
        if updated.value is not None and self._at(original):
            return updated.with_changes(value=self._wrapped(updated.value))
        return updated


def _import_line(tree: ast.Module) -> int:
    """The line the import goes on: after the docstring and ``from __future__`` imports."""
    after = 0
    for i, st in enumerate(tree.body):
        docstring = i == 0 and isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant) \
            and isinstance(st.value.value, str)
        if docstring or (isinstance(st, ast.ImportFrom) and st.module == "__future__"):
            after = st.end_lineno
        else:
            break
    return after + 1


def rewrite(link: Link) -> tuple[str, int]:
    """The file's text with the link wrapped, and the line the import was inserted at."""
    text = link.file.read_text(encoding="utf-8")
    wrap = _Wrap(link.line, link.column)
    body = MetadataWrapper(cst.parse_module(text)).visit(wrap)
    assert wrap.done, f"no statement to wrap at {link.file}:{link.line}"
    at = _import_line(ast.parse(text))
    lines = body.code.splitlines(keepends=True)
    new = "".join(lines[:at - 1]) + IMPORT + "".join(lines[at - 1:])
    ast.parse(new)  # still a program
    return new, at


# --------------------------------------------------------------------------------------------
# the cases


def _errors(program: Path):
    """(analysed file, finding) for every error-severity finding on a marked line, with its chain."""
    files = _files(program)
    for file in files:
        analysis = _analyse(file, {}, facts=True)
        for f in analysis.findings:
            if f.severity == "error" and f.code in RAISING and f.location.path == str(file) \
                    and (f.location.line, f.code) in _marks(file):
                yield file, f, chain(f, analysis, files)


def _cases():
    out = []
    for program in _programs():
        name = f"{program.parent.name}/{program.name}"
        out.append(pytest.param(program, id=name))
    return out


def survivors(program: Path) -> list[str]:
    """The links of ``program``'s error findings whose wrapping leaves the error standing (or
    turns it into a warning that does not say why)."""
    failures = []
    for file, finding, links in _errors(program):
        for link in links:
            text, at = rewrite(link)
            line = finding.location.line + (1 if link.file == file and finding.location.line >= at else 0)
            after = _analyse(file, {link.file: text})
            for f in after.findings:
                if f.code != finding.code or f.location.path != str(file) or f.location.line != line:
                    continue
                if f.severity == "error":
                    if _torch_still_raises(program, link.file, text, line, finding.code):
                        continue  # true all the same
                    failures.append(f"{finding.code} line {finding.location.line}: wrapping {link.label(program)} "
                                    f"leaves the error")
                elif not REASON.search(f.message):
                    failures.append(f"{finding.code} line {finding.location.line}: wrapping {link.label(program)} "
                                    f"leaves a warning that does not say why")
    return failures


def _torch_still_raises(program: Path, changed: Path, text: str, line: int, code: str) -> bool:
    """Whether torch raises ``code`` on ``line`` of the rewritten program when ``mystery`` cuts
    the graph (returns its argument as a new leaf): then the link was not needed for the error, and
    the error that survives is true (a CycleGAN pool's fake is walked again by another backward).
    Also when the program stops before, on an error that is not autograd's: no evidence then."""
    import json
    import shutil
    import tempfile

    import torchrun

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "prog"
        base = program if program.is_dir() else program.parent
        if program.is_dir():
            shutil.copytree(program, root)
        else:
            root.mkdir()
            shutil.copy(program, root / program.name)
        (root / changed.relative_to(base)).write_text(text, encoding="utf-8")
        (root / "unknown_lib.py").write_text(
            "def mystery(x):\n    if hasattr(x, 'detach') and x.is_floating_point():\n"
            "        return x.detach().requires_grad_()\n    return x\n", encoding="utf-8")
        target = root if program.is_dir() else root / program.name
        ran = torchrun.run(TESTS / "oracle.py", str(target), timeout=600)
        result = json.loads(ran.stdout)[str(target)]
    if result.get("status") == "error":
        # the program stopped on another exception, which ``mystery`` caused (a new leaf whose
        # parameters get no ``.grad``: ``p.grad.norm()``): torch never got to say
        return True
    return result.get("status") == "raised" and result.get("code") == code and result.get("line") == line


def test_every_error_has_a_chain():
    """The test means something: most error findings have at least one link to wrap."""
    total = linked = 0
    for program in _programs():
        for _, _, links in _errors(program):
            total += 1
            linked += bool(links)
    assert total >= 100 and linked >= 0.9 * total, (total, linked)


def test_rewrite_wraps_the_value(tmp_path):
    src = tmp_path / "p.py"
    src.write_text('"""doc"""\nfrom __future__ import annotations\nimport torch\ny = torch.ones(2) * 2\n'
                   'a, b = y, y\n')
    text, at = rewrite(Link(src, 4, 1))
    assert at == 3
    assert text.splitlines()[2:] == ["from unknown_lib import mystery", "import torch",
                                     "y = mystery(torch.ones(2) * 2)", "a, b = y, y"]
    assert rewrite(Link(src, 5, 1))[0].splitlines()[-1] == "a, b = mystery((y, y))"


@pytest.mark.parametrize("program", _cases())
def test_unknown_link_breaks_the_error(program: Path):
    assert survivors(program) == []
