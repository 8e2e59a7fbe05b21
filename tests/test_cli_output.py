"""Machine formats: JSON's ``cell`` keys, SARIF 2.1.0 validated against the official schema
(tests/sarif/), notebook locations inside the .ipynb text, absolute rule links, unreadable
inputs as tool execution notifications; and the text format's fix and docs lines."""
from __future__ import annotations

import json
import urllib.parse
from pathlib import Path

import jsonschema
import pytest

from cliutil import BUGGY, BUGGY_LINE, REPO, run_check
from gradguard.rules import RULES

SCHEMA = json.loads((REPO / "tests" / "sarif" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
CELLS = ["import torch\nx = torch.ones(2, requires_grad=True)",
         "# a comment\ny = x * 2\ny.sum().backward()",
         "y.sum().backward()  # here"]


def notebook(cells) -> str:
    nb = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": ["# Title\n"]}]
          + [{"cell_type": "code", "metadata": {}, "source": c.splitlines(keepends=True), "outputs": [],
              "execution_count": None} for c in cells],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


@pytest.fixture
def project(tmp_path):
    (tmp_path / "bug.py").write_text(BUGGY, encoding="utf-8")
    (tmp_path / "nb.ipynb").write_text(notebook(CELLS), encoding="utf-8")
    (tmp_path / "broken.py").write_text("loss.backward(\n", encoding="utf-8")
    (tmp_path / "blob.py").write_bytes(b"\x00\x01" * 50)
    return tmp_path


def validate(log: dict) -> None:
    jsonschema.Draft4Validator(SCHEMA).validate(log)


def test_sarif_validates_against_the_official_schema(project):
    proc = run_check("--format", "sarif", ".", cwd=project)
    assert proc.returncode == 2  # two unreadable inputs
    log = json.loads(proc.stdout)
    validate(log)
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert "informationUri" not in driver  # the project has no public home yet: no invented one
    for rule in driver["rules"]:
        url = urllib.parse.urlparse(rule["helpUri"])
        assert url.scheme == "file" and Path(urllib.parse.unquote(url.path)).is_file(), rule["helpUri"]
        assert rule["help"]["markdown"].startswith(f"# {rule['id']}")
    assert [r["id"] for r in driver["rules"]] == list(RULES)
    assert sorted(r["ruleId"] for r in run["results"]) == ["GG101", "GG101"]
    # unreadable inputs are reported, not dropped
    notes = run["invocations"][0]["toolExecutionNotifications"]
    noted = {n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]: n for n in notes}
    assert set(noted) == {"broken.py", "blob.py"}, noted
    assert all(n["level"] == "error" and n["message"]["text"].strip() for n in notes)


def test_sarif_notebook_locations_point_into_the_ipynb_text(project):
    proc = run_check("--format", "sarif", "nb.ipynb", cwd=project)
    log = json.loads(proc.stdout)
    validate(log)
    (result,) = log["runs"][0]["results"]
    physical = result["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"]["uri"] == "nb.ipynb"
    region = physical["region"]
    file_lines = (project / "nb.ipynb").read_text(encoding="utf-8").splitlines()
    line = file_lines[region["startLine"] - 1]
    # the JSON line holding `y.sum().backward()  # here` of the 4th cell, the column at its `y`
    assert line[region["startColumn"] - 1:].startswith('y.sum().backward()  # here'), (region, line)
    assert line[region["endColumn"] - 2] == ")", (region, line)
    assert result["locations"][0]["properties"] == {"cell": 4, "cellLine": 1, "cellColumn": 1}
    related = {r["message"]["text"]: r["physicalLocation"]["region"] for r in result["relatedLocations"]}
    built = next(region for text, region in related.items() if "computed here" in text)
    assert file_lines[built["startLine"] - 1][built["startColumn"] - 1:].startswith("y = x * 2")


def test_sarif_columns_inside_escaped_notebook_text(tmp_path):
    cells = ['import torch\nx = torch.ones(2, requires_grad=True)\ns = "tab\\tquote\\"" ; y = x * 2',
             'y.sum().backward()\nt = "é\\u00e9"; y.sum().backward()']
    (tmp_path / "esc.ipynb").write_text(notebook(cells), encoding="utf-8")
    log = json.loads(run_check("--format", "sarif", "esc.ipynb", cwd=tmp_path).stdout)
    (result,) = log["runs"][0]["results"]
    region = result["locations"][0]["physicalLocation"]["region"]
    line = (tmp_path / "esc.ipynb").read_text(encoding="utf-8").splitlines()[region["startLine"] - 1]
    assert line[region["startColumn"] - 1:].startswith("y.sum().backward()\""), (region, line)


def test_json_cell_keys(project):
    proc = run_check("--format", "json", "nb.ipynb", "bug.py", cwd=project)
    data = json.loads(proc.stdout)
    by_path = {f["path"]: f for f in data}
    assert set(by_path) == {"nb.ipynb", "bug.py"}
    nb = by_path["nb.ipynb"]
    assert (nb["cell"], nb["line"]) == (4, 1)
    assert {(r["cell"], r["line"]) for r in nb["related"]} >= {(3, 2), (3, 3)}  # built, freed
    assert all(r["path"] == "nb.ipynb" for r in nb["related"])
    assert by_path["bug.py"]["cell"] is None and all(r["cell"] is None for r in by_path["bug.py"]["related"])


def test_text_ends_with_the_fix_and_the_docs_link(project):
    proc = run_check("bug.py", cwd=project)
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(f"bug.py:{BUGGY_LINE}:1: GG101 ")
    assert lines[1].startswith("  fix: ") and "retain_graph=True" in lines[1] and "--fix" in lines[1]
    assert lines[2] == "  docs: " + RULES["GG101"].url
    assert RULES["GG101"].url.startswith("file://")
    assert len(lines) == 3
