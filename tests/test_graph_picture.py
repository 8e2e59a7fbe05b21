"""``gradguard explain``: the graph picture of a finding, golden files on the seed programs and
properties on every bug fixture. Refresh the golden files with GRADGUARD_UPDATE_GOLDEN=1."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from gradguard import graph_render
from gradguard.analysis import analyze_path
from gradguard.explain import link, source_lines, texter
from gradguard.graph_picture import build

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "graph" / "golden"
EXPECT = re.compile(r"#\s*expect:\s*(GG1\d\d)")
CASES = {  # golden name -> the place the finding is at
    "seed000": "demo/seed000_bug/main.py:35",
    "seed001": "demo/seed001_bug.py:33",
    "seed002": "demo/seed002_bug.py:32",
    "seed003": "demo/seed003_bug.py:52",
    "seed003_notebook": "demo/seed003_notebook_bug.ipynb:6:1",
    "seed004": "demo/seed004_bug.py:12",
    "seed004_add": "demo/seed004_add_bug.py:7",
    "gg103_inplace": "tests/fixtures/gg103_softmax_iadd_eps_bug.py:20",
    "gg104_no_grad": "tests/fixtures/gg104_no_grad_predict_bug.py:27",
    "gg105_vector": "tests/fixtures/gg105_stacked_task_losses_bug.py:19",
    "long_chain": "tests/graph/long_chain_bug.py:37",
}

#: the picture each rule's page shows (server/gradguard/docs/rules/graphs/GGxxx.svg)
RULE_PAGES = {
    "GG101": "demo/seed000_bug/main.py:35",
    "GG102": "demo/seed004_add_bug.py:7",
    "GG103": "tests/fixtures/gg103_softmax_iadd_eps_bug.py:20",
    "GG104": "tests/fixtures/gg104_no_grad_predict_bug.py:27",
    "GG105": "tests/fixtures/gg105_stacked_task_losses_bug.py:19",
    "GG106": "tests/fixtures/gg106_adversarial_random_start_bug.py:17",
    "GG107": "tests/fixtures/gg107_embedding_export_bug.py:18",
    "GG108": "tests/fixtures/gg108_manual_sgd_bug.py:15",
    "GG201": "tests/fixtures/gg201_accumulation_no_reset_bug.py:15",
    "GG202": "tests/fixtures/gg202_adaptation_inner_losses_bug.py:23",
    "GG203": "tests/fixtures/gg203_cargo_cult_training_bug.py:15",
}
DOCS = ROOT / "server" / "gradguard" / "docs" / "rules"


def explain(place: str, fmt: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gradguard", "explain", place, "--format", fmt],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("fmt", ["svg", "text"])
def test_golden(name, fmt):
    run = explain(CASES[name], fmt)
    assert run.returncode == 0, run.stderr
    golden = GOLDEN / f"{name}.{fmt if fmt == 'svg' else 'txt'}"
    if os.environ.get("GRADGUARD_UPDATE_GOLDEN"):
        golden.write_text(run.stdout, encoding="utf-8")
    assert run.stdout == golden.read_text(encoding="utf-8")


def test_html_is_a_page_with_a_strict_policy():
    run = explain(CASES["seed000"], "html")
    assert run.returncode == 0, run.stderr
    assert "default-src 'none'" in run.stdout and "<script" not in run.stdout
    assert f"style-src '{graph_render.style_hash()}'" in run.stdout
    assert '<a class="value origin" href="demo/seed000_bug/main.py#L9"' in run.stdout


def test_no_finding_on_the_line_says_where_they_are():
    run = explain("demo/seed000_bug/main.py:34", "text")
    assert run.returncode == 1 and "line 35" in run.stderr and not run.stdout


def test_malformed_place_is_a_usage_error():
    assert explain("demo/seed000_bug/main.py", "text").returncode == 2
    assert explain("demo/seed003_notebook_bug.ipynb:1", "text").returncode == 2


def _raising_fixtures():
    """Bug fixtures whose raising line is marked (tests/oracle.py checks each mark with torch)."""
    out = []
    for path in sorted((ROOT / "tests" / "fixtures").glob("*_bug.py")) + [ROOT / "tests/graph/long_chain_bug.py"]:
        for n, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
            if (m := EXPECT.search(line)) and m.group(1) in ("GG101", "GG103"):
                out.append((path, n, m.group(1)))
    return out


@pytest.mark.parametrize("path,line,code", _raising_fixtures(), ids=lambda v: getattr(v, "name", str(v)))
def test_pictures_of_raising_fixtures(path, line, code):
    """Where torch raises, the picture ends with the walk that raises; for GG101 a backward
    freed what it walks (and, if a loop carries the graph, in the iteration before), for GG103
    an in-place write changed what a step saved. The SVG is well-formed, every node links to
    its line, and a second rendering is the same bytes."""
    analysis = analyze_path(str(path), facts=True)
    finding = next((f for f in analysis.findings if f.location.line == line and f.code == code), None)
    if finding is None:  # a miss of the analysis: tests/test_fixtures.py reports it
        pytest.skip(f"no {code} finding on line {line}")
    picture = build(finding, analysis.facts, texter(str(path), source_lines(str(path))))
    walk = picture.events[-1]
    assert (walk.role, walk.location.line) == ("walk", line)
    if code == "GG101":
        frees = [e for e in picture.events if e.role == "free"]
        assert frees and any(n.freed and n.saves for n in picture.chain)
        assert all(e.lane == 0 for e in frees) and (walk.lane == 1) == picture.loop
        if not picture.loop:
            assert frees[0].location.line < line
    else:
        assert any(e.role == "modify" for e in picture.events) and any(n.saved for n in picture.chain)
    svg = graph_render.svg(picture, link)
    tree = ET.fromstring(svg)
    linked = {int(a.get("data-line")) for a in tree.iter("{http://www.w3.org/2000/svg}a")}
    wanted = {n.location.line for n in picture.origins + picture.chain + picture.events}
    assert linked == wanted
    again = analyze_path(str(path), facts=True)
    assert graph_render.svg(build(next(f for f in again.findings if f.location.line == line and f.code == code),
                                  again.facts, texter(str(path), source_lines(str(path)))), link) == svg


def test_every_rule_has_a_picture():
    """One bug fixture of each rule named after it (GG101 and GG102 above): the finding's place is the last event, named by its rule."""
    seen = set()
    for path in sorted((ROOT / "tests" / "fixtures").glob("gg*_bug.py")):
        code = path.name[:5].upper()
        if code in seen:
            continue
        analysis = analyze_path(str(path), facts=True)
        finding = next((f for f in analysis.findings if f.code == code), None)
        if finding is None:
            continue
        seen.add(code)
        picture = build(finding, analysis.facts, texter(str(path), source_lines(str(path))))
        assert picture.events[-1].location == finding.location
        ET.fromstring(graph_render.svg(picture, link))
        assert graph_render.where(finding.location) in graph_render.text(picture)
    assert {"GG103", "GG104", "GG105", "GG106", "GG107", "GG108", "GG201", "GG202", "GG203"} <= seen


@pytest.mark.parametrize("code", sorted(RULE_PAGES))
def test_rule_pages_show_a_real_picture(code):
    """Each rule's page shows the picture ``gradguard explain`` draws today of one of its findings."""
    run = explain(RULE_PAGES[code], "svg")
    assert run.returncode == 0, run.stderr
    assert "<svg" in run.stdout and f"{code} · " in run.stdout
    picture = DOCS / "graphs" / f"{code}.svg"
    if os.environ.get("GRADGUARD_UPDATE_GOLDEN"):
        picture.write_text(run.stdout, encoding="utf-8")
    assert run.stdout == picture.read_text(encoding="utf-8")
    assert f"](graphs/{code}.svg)" in (DOCS / f"{code}.md").read_text(encoding="utf-8")
