"""Bad input gets a clear message and nothing is lost.

Covers the ``gradguard check`` command line (run as ``python -m gradguard check …`` in a
subprocess) and the library entry point ``gradguard.analyze_source``:

* contract of the text / JSON / SARIF outputs and of the exit codes (0 no error-severity
  finding, 1 some, 2 usage or I/O error);
* syntax errors (in a file that can reach a backward: the analysis does not parse the others),
  undecodable bytes, binary and over-size files, missing paths and broken
  notebooks produce a message on stderr naming the file, never a traceback, and do not stop
  the run over the other files (their findings are still reported);
* huge, empty, comment-only and deeply nested inputs are analysed or refused with a
  ``SourceError``; no ``RecursionError`` (or anything else) escapes;
* the analyser never imports or executes the code it analyses.

No timing assertions here: speed is measured by ``bench/engine_throughput.py``.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from cliutil import BUGGY, BUGGY_LINE, CLEAN, SERVER

JSON_KEYS = {"path", "cell", "line", "column", "end_line", "end_column", "code", "severity", "message", "fix",
             "url", "related"}
RELATED_KEYS = {"path", "cell", "line", "column", "message"}
TIMEOUT = 300


# ----------------------------------------------------------------------------- helpers
def _env() -> dict:
    env = dict(os.environ)
    # test the working tree, whether or not (and however) the package is installed
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SERVER), env.get("PYTHONPATH", "")) if p)
    env["PYTHONIOENCODING"] = "utf-8"
    env.pop("PYTHONHASHSEED", None)
    return env


def run_check(*args, cwd) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "gradguard", "check", *map(str, args)],
        cwd=str(cwd), env=_env(), capture_output=True, text=True, encoding="utf-8",
        errors="replace", timeout=TIMEOUT, stdin=subprocess.DEVNULL,
    )


def assert_no_traceback(proc: subprocess.CompletedProcess) -> None:
    assert "Traceback (most recent call last)" not in proc.stderr, proc.stderr
    assert "Traceback (most recent call last)" not in proc.stdout, proc.stdout


def text_findings(stdout: str, code: str | None = None) -> list[tuple[str, int, int, str, str]]:
    """Parse ``path:line:col: CODE message`` lines (path may contain ':' on Windows)."""
    found = []
    for ln in stdout.splitlines():
        m = re.match(r"^(.*?):(\d+):(\d+): (GG\d{3}) (.+)$", ln)
        if m and (code is None or m.group(4) == code):
            found.append((m.group(1), int(m.group(2)), int(m.group(3)), m.group(4), m.group(5)))
    return found


def gg101_lines(stdout: str, name: str) -> list[int]:
    return [line for path, line, _, _, _ in text_findings(stdout, "GG101") if Path(path).name == name]


@pytest.fixture
def gg():
    """The library, imported lazily so that each test fails on its own while it is missing."""
    if str(SERVER) not in sys.path:
        sys.path.insert(0, str(SERVER))
    import gradguard

    return gradguard


@pytest.fixture
def buggy(tmp_path) -> Path:
    p = tmp_path / "buggy.py"
    p.write_text(BUGGY, encoding="utf-8")
    return p


def _max_bytes() -> int:
    try:
        if str(SERVER) not in sys.path:
            sys.path.insert(0, str(SERVER))
        from gradguard import sources

        return int(sources.MAX_BYTES)
    except Exception:  # noqa: BLE001 - fall back to the documented 10 MiB
        return 10 * 1024 * 1024


# ----------------------------------------------------------------------------- text output and exit codes
def test_text_output_reports_gg101_and_exits_1(buggy, tmp_path):
    proc = run_check(buggy.name, cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    found = text_findings(proc.stdout, "GG101")
    assert [(Path(p).name, line) for p, line, *_ in found] == [("buggy.py", BUGGY_LINE)], proc.stdout
    _, _, col, _, message = found[0]
    line_text = BUGGY.splitlines()[BUGGY_LINE - 1]
    assert 1 <= col <= len(line_text), col
    assert message.strip()


def test_clean_file_exits_0_without_findings(tmp_path):
    (tmp_path / "clean.py").write_text(CLEAN, encoding="utf-8")
    proc = run_check("clean.py", cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert text_findings(proc.stdout) == []


def test_warning_only_exits_0(tmp_path):
    # ``x + 1`` and ``sum`` save no tensors: walking the graph twice does not raise (GG102, a warning)
    (tmp_path / "warn.py").write_text(
        "import torch\nx = torch.ones(2, requires_grad=True)\ny = x + 1\n"
        "y.sum().backward()\ny.sum().backward()\n", encoding="utf-8")
    proc = run_check("warn.py", cwd=tmp_path)
    assert_no_traceback(proc)
    assert text_findings(proc.stdout, "GG101") == [], proc.stdout
    assert [f[1] for f in text_findings(proc.stdout, "GG102")] == [5], proc.stdout
    assert proc.returncode == 0, (proc.stdout, proc.stderr)


def test_usage_errors_exit_2(buggy, tmp_path):
    for args in (["--format", "yaml", buggy.name], ["--no-such-option", buggy.name]):
        proc = run_check(*args, cwd=tmp_path)
        assert_no_traceback(proc)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert proc.stderr.strip(), args


def test_missing_path_exits_2_and_other_files_still_checked(buggy, tmp_path):
    proc = run_check("does_not_exist.py", buggy.name, cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "does_not_exist.py" in proc.stderr
    assert gg101_lines(proc.stdout, "buggy.py") == [BUGGY_LINE], proc.stdout


# ----------------------------------------------------------------------------- JSON contract
def _check_json_finding(f: dict) -> None:
    assert set(f) == JSON_KEYS, sorted(f)
    for key in ("path", "code", "severity", "message"):
        assert isinstance(f[key], str), (key, f[key])
    for key in ("line", "column", "end_line", "end_column"):
        assert type(f[key]) is int, (key, f[key])  # noqa: E721 - bool is not an int here
    assert f["line"] >= 1 and f["column"] >= 1, f  # 1-based
    assert (f["end_line"], f["end_column"]) >= (f["line"], f["column"]), f
    assert f["severity"] in {"error", "warning", "info", "hint"}, f
    assert f["cell"] is None or type(f["cell"]) is int, f  # noqa: E721
    assert f["url"].startswith("file://") and f["url"].endswith(f"/{f['code']}.md"), f
    assert f["fix"] is None or (f["fix"]["title"].strip() and f["fix"]["applicability"] in {"safe", "unsafe"}), f
    assert re.fullmatch(r"GG\d{3}", f["code"]), f
    assert f["message"].strip()
    assert isinstance(f["related"], list), f
    for r in f["related"]:
        assert set(r) == RELATED_KEYS, sorted(r)
        assert isinstance(r["path"], str) and isinstance(r["message"], str) and r["message"].strip()
        assert type(r["line"]) is int and type(r["column"]) is int  # noqa: E721
        assert r["line"] >= 1 and r["column"] >= 1, r


def test_json_contract(buggy, tmp_path):
    proc = run_check("--format", "json", buggy.name, cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    data = json.loads(proc.stdout)  # exactly one JSON document on stdout
    assert isinstance(data, list) and data, data
    for f in data:
        _check_json_finding(f)
    gg101 = [f for f in data if f["code"] == "GG101"]
    assert len(gg101) == 1, data
    f = gg101[0]
    assert (tmp_path / f["path"]).resolve() == buggy.resolve(), f["path"]
    assert f["line"] == BUGGY_LINE and f["severity"] == "error", f
    line_text = BUGGY.splitlines()[BUGGY_LINE - 1]
    assert f["column"] <= len(line_text) and f["end_column"] <= len(line_text) + 1, f
    # the message names where the graph was freed
    assert "line 4" in f["message"], f["message"]


def test_json_related_points_at_the_freeing_backward(buggy, tmp_path):
    proc = run_check("--format", "json", buggy.name, cwd=tmp_path)
    data = json.loads(proc.stdout)
    f = next(f for f in data if f["code"] == "GG101")
    assert f["related"], f
    assert 4 in [r["line"] for r in f["related"]], f["related"]
    for r in f["related"]:
        assert (tmp_path / r["path"]).resolve() == buggy.resolve(), r


def test_json_clean_is_empty_array(tmp_path):
    (tmp_path / "clean.py").write_text(CLEAN, encoding="utf-8")
    proc = run_check("--format", "json", "clean.py", cwd=tmp_path)
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert json.loads(proc.stdout) == []


# ----------------------------------------------------------------------------- SARIF contract
def test_sarif_contract(buggy, tmp_path):
    proc = run_check("--format", "sarif", buggy.name, cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    log = json.loads(proc.stdout)
    assert log["version"] == "2.1.0"
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"].lower().startswith("gradguard"), driver.get("name")
    rule_ids = [r["id"] for r in driver["rules"]]
    assert "GG101" in rule_ids, rule_ids
    results = run["results"]
    assert len(results) == 1, results
    res = results[0]
    assert res["ruleId"] == "GG101"
    assert res["message"]["text"].strip()
    assert res.get("level", "warning") == "error"
    loc = res["locations"][0]["physicalLocation"]
    assert loc["region"]["startLine"] == BUGGY_LINE
    assert loc["region"].get("startColumn", 1) >= 1
    assert loc["artifactLocation"]["uri"].endswith("buggy.py"), loc
    if "ruleIndex" in res:
        assert rule_ids[res["ruleIndex"]] == "GG101"


# ----------------------------------------------------------------------------- bad files do not stop the run
def test_syntax_error_reported_and_run_continues(buggy, tmp_path):
    (tmp_path / "broken.py").write_text("import torch\n\ndef f(:\n    loss.backward()\n", encoding="utf-8")
    proc = run_check("broken.py", buggy.name, cwd=tmp_path)
    assert_no_traceback(proc)
    assert "broken.py" in proc.stderr, proc.stderr
    assert "syntax" in proc.stderr.lower(), proc.stderr
    assert re.search(r"broken\.py\D+3\b", proc.stderr), proc.stderr  # says which line
    assert gg101_lines(proc.stdout, "buggy.py") == [BUGGY_LINE], proc.stdout
    assert "broken.py" not in proc.stdout  # messages go to stderr, findings to stdout
    assert proc.returncode in (1, 2), proc.returncode


def test_syntax_error_in_a_body_an_earlier_file_imported_is_reported(tmp_path):
    # train.py (checked first) calls utils.train_epoch, whose body does not parse (``async`` is a
    # keyword since 3.7): the import met the error first, and utils.py's own check must too
    (tmp_path / "train.py").write_text(textwrap.dedent("""\
        import torch
        import utils

        model = torch.nn.Linear(4, 2)
        for epoch in range(2):
            utils.train_epoch([(torch.randn(3, 4), torch.randint(0, 2, (3,)))], model)
        """), encoding="utf-8")
    (tmp_path / "utils.py").write_text(textwrap.dedent("""\
        import torch


        def train_epoch(loader, model):
            loss_sum = 0.0  # (a first statement that parses: the body is left to parse later)
            for input, target in loader:
                input = input.cuda(async=True)
                loss = torch.nn.functional.cross_entropy(model(input), target)
                loss.backward()


        def evaluate(loader, model):
            return [model(x) for x, _ in loader]
        """), encoding="utf-8")
    for jobs in ("1", "2"):
        proc = run_check("--no-cache", "--jobs", jobs, ".", cwd=tmp_path)
        assert_no_traceback(proc)
        assert re.search(r"utils\.py\D+7\b.*syntax", proc.stderr), proc.stderr
        assert proc.returncode == 2, (proc.stdout, proc.stderr)


def test_syntax_error_alone_is_not_success(tmp_path):
    (tmp_path / "broken.py").write_text("loss.backward()\nx = (1,\n", encoding="utf-8")
    proc = run_check("broken.py", cwd=tmp_path)
    assert_no_traceback(proc)
    assert "broken.py" in proc.stderr
    assert proc.returncode != 0, (proc.stdout, proc.stderr)


def test_undecodable_bytes_reported_and_run_continues(buggy, tmp_path):
    (tmp_path / "latin.py").write_bytes(b"x = 1\n# caf\xe9 \xff\xfe\n")  # not UTF-8, no coding line
    proc = run_check("latin.py", buggy.name, cwd=tmp_path)
    assert_no_traceback(proc)
    assert "latin.py" in proc.stderr, proc.stderr
    assert any(w in proc.stderr.lower() for w in ("decode", "utf-8", "utf8", "encoding")), proc.stderr
    assert gg101_lines(proc.stdout, "buggy.py") == [BUGGY_LINE], proc.stdout


def test_binary_file_reported_and_run_continues(buggy, tmp_path):
    (tmp_path / "blob.py").write_bytes(bytes(range(256)) * 64)
    proc = run_check("blob.py", buggy.name, cwd=tmp_path)
    assert_no_traceback(proc)
    assert "blob.py" in proc.stderr, proc.stderr
    assert gg101_lines(proc.stdout, "buggy.py") == [BUGGY_LINE], proc.stdout


def test_oversize_file_reported_and_run_continues(buggy, tmp_path):
    limit = _max_bytes()
    line = "# " + "padding " * 12 + "\n"
    big = tmp_path / "huge.py"
    with big.open("w", encoding="utf-8") as fh:
        fh.write(BUGGY)
        fh.write(line * (limit // len(line) + 10))
    assert big.stat().st_size > limit
    proc = run_check("huge.py", buggy.name, cwd=tmp_path)
    assert_no_traceback(proc)
    assert "huge.py" in proc.stderr, proc.stderr
    assert any(w in proc.stderr.lower() for w in ("limit", "large", "size", "bytes")), proc.stderr
    assert gg101_lines(proc.stdout, "buggy.py") == [BUGGY_LINE], proc.stdout


def test_bad_inputs_keep_json_stdout_valid(buggy, tmp_path):
    (tmp_path / "broken.py").write_text("def f(:\n    loss.backward()\n", encoding="utf-8")
    (tmp_path / "blob.py").write_bytes(b"\x00\x01\x02" * 100)
    for fmt in ("json", "sarif"):
        proc = run_check("--format", fmt, "broken.py", "blob.py", buggy.name, cwd=tmp_path)
        assert_no_traceback(proc)
        data = json.loads(proc.stdout)  # diagnostics about bad files must not leak into stdout
        if fmt == "json":
            assert [(Path(f["path"]).name, f["line"]) for f in data if f["code"] == "GG101"] == \
                [("buggy.py", BUGGY_LINE)]
        else:
            assert [r["ruleId"] for r in data["runs"][0]["results"]] == ["GG101"]
        assert "broken.py" in proc.stderr and "blob.py" in proc.stderr, proc.stderr


def test_crlf_bom_and_coding_cookie_lose_nothing(tmp_path):
    (tmp_path / "crlf.py").write_bytes(b"\xef\xbb\xbf" + BUGGY.replace("\n", "\r\n").encode())
    (tmp_path / "cookie.py").write_bytes(b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + BUGGY.encode())
    (tmp_path / "d\u00e9j\u00e0 vu.py").write_text(BUGGY, encoding="utf-8")
    proc = run_check("crlf.py", "cookie.py", "d\u00e9j\u00e0 vu.py", cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert gg101_lines(proc.stdout, "crlf.py") == [BUGGY_LINE], proc.stdout
    assert gg101_lines(proc.stdout, "cookie.py") == [BUGGY_LINE + 2], proc.stdout
    assert gg101_lines(proc.stdout, "d\u00e9j\u00e0 vu.py") == [BUGGY_LINE], proc.stdout


# ----------------------------------------------------------------------------- notebooks
def _notebook(*cells: str, kind: str = "code") -> str:
    return json.dumps({
        "cells": [
            {"cell_type": kind, "metadata": {}, "source": c.splitlines(keepends=True),
             "outputs": [], "execution_count": None}
            for c in cells
        ],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    })


def test_notebook_is_read(tmp_path):
    nb = _notebook("import torch\nx = torch.ones(2, requires_grad=True)",
                   "y = x * 2\ny.sum().backward()",
                   "y.sum().backward()")
    (tmp_path / "train.ipynb").write_text(nb, encoding="utf-8")
    proc = run_check("train.ipynb", cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert any("train.ipynb" in ln and "GG101" in ln for ln in proc.stdout.splitlines()), proc.stdout


def test_notebook_magics_do_not_hide_findings(tmp_path):
    nb = _notebook("%matplotlib inline\n!pip install torch\nimport torch",
                   "x = torch.ones(2, requires_grad=True)\ny = x * 2\ny.sum().backward()",
                   "%%time\ny.sum().backward()")
    (tmp_path / "magic.ipynb").write_text(nb, encoding="utf-8")
    proc = run_check("magic.ipynb", cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert any("magic.ipynb" in ln and "GG101" in ln for ln in proc.stdout.splitlines()), proc.stdout


def test_broken_notebook_json_reported_and_run_continues(buggy, tmp_path):
    (tmp_path / "broken.ipynb").write_text('{"cells": [{"cell_type": "code", "source": ["x = 1"', encoding="utf-8")
    (tmp_path / "nocells.ipynb").write_text('{"metadata": {}}', encoding="utf-8")
    proc = run_check("broken.ipynb", "nocells.ipynb", buggy.name, cwd=tmp_path)
    assert_no_traceback(proc)
    assert "broken.ipynb" in proc.stderr and "nocells.ipynb" in proc.stderr, proc.stderr
    assert any(w in proc.stderr.lower() for w in ("json", "notebook")), proc.stderr
    assert gg101_lines(proc.stdout, "buggy.py") == [BUGGY_LINE], proc.stdout
    assert proc.returncode in (1, 2)


# ----------------------------------------------------------------------------- library
def test_syntax_error_raises_source_error(gg):
    with pytest.raises(gg.SourceError) as info:
        gg.analyze_source("import torch\n\ndef f(:\n    loss.backward()\n", "bad.py")
    assert isinstance(info.value.message, str) and info.value.message.strip()
    assert "bad.py" in info.value.message or "syntax" in info.value.message.lower()


def test_null_bytes_raise_source_error_not_value_error(gg):
    with pytest.raises(gg.SourceError) as info:
        gg.analyze_source("x.backward()\n\x00\x01\x02 binary\n", "blob.bin")
    assert info.value.message.strip()


def _analysed_or_source_error(gg, text: str, path: str):
    try:
        return gg.analyze_source(text, path)
    except gg.SourceError as exc:
        assert isinstance(exc.message, str) and exc.message.strip()
        return None


def test_binary_content(gg):
    blob = (bytes(range(256)) * 16).decode("latin-1")  # NULs, control characters, high bytes
    result = _analysed_or_source_error(gg, blob, "blob.py")
    if result is not None:
        assert list(result.findings) == []


def test_binary_file_via_analyze_path(gg, tmp_path):
    p = tmp_path / "blob.py"
    p.write_bytes(bytes(range(256)) * 16)
    with pytest.raises(gg.SourceError) as info:
        gg.analyze_path(str(p))
    assert "blob.py" in info.value.message


def test_empty_file(gg):
    result = gg.analyze_source("", "empty.py")
    assert list(result.findings) == []


def test_only_comments(gg):
    text = "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\n" + "# just a comment\n" * 200 + "# end"
    result = gg.analyze_source(text, "comments.py")
    assert list(result.findings) == []


def test_library_finds_gg101_on_line_5(gg):
    result = gg.analyze_source(BUGGY, "buggy.py")
    assert [(f.code, f.location.line) for f in result.findings] == [("GG101", BUGGY_LINE)]
    f = result.findings[0]
    assert f.severity == "error" and f.location.column >= 1


def _big_program(n_lines: int) -> tuple[str, int]:
    chunk = textwrap.dedent('''
        def step_{i}(model, batch, opt):
            """Step {i}."""
            x, y = batch
            out = model(x)
            loss = ((out - y) ** 2).mean() + 0.{i} * sum(p.pow(2).sum() for p in model.parameters())
            opt.zero_grad()
            loss.backward()
            opt.step()
            stats = {{"loss": loss.item(), "n": len(y), "tags": [t for t in ("a", "b") if t]}}
            try:
                return stats
            except KeyError:
                return None

    ''')
    parts = ["import torch\nimport torch.nn as nn\n"]
    lines = 2
    i = 0
    while lines < n_lines - 10:
        part = chunk.format(i=i)
        parts.append(part)
        lines += part.count("\n")
        i += 1
    parts.append(BUGGY.split("\n", 1)[1])  # the bug, at the very end
    text = "".join(parts)
    bug_line = text.count("\n")  # last line holds the second backward
    return text, bug_line


def test_50000_line_file_is_analysed(gg):
    text, bug_line = _big_program(50_000)
    assert text.count("\n") >= 50_000
    result = gg.analyze_source(text, "huge_generated.py")
    gg101 = [f.location.line for f in result.findings if f.code == "GG101"]
    assert gg101 == [bug_line]  # nothing lost at the far end of a large file


DEEP_CASES = {
    "parens_500": "x = " + "(" * 500 + "1" + ")" * 500 + "\n",
    "parens_150": "x = " + "(" * 150 + "1" + ")" * 150 + "\n",
    "add_chain_3000": "import torch\na = torch.ones(2, requires_grad=True)\nb = " + " + ".join(["a"] * 3000)
                      + "\nb.sum().backward()\nb.sum().backward()\n",
    "mul_chain_3000": "import torch\na = torch.ones(2, requires_grad=True)\nb = " + " * ".join(["a"] * 3000)
                      + "\nb.sum().backward()\nb.sum().backward()\n",
    "add_chain_900": "import torch\na = torch.ones(2, requires_grad=True)\nb = " + " + ".join(["a"] * 900)
                     + "\nb.sum().backward()\nb.sum().backward()\n",
    "mul_chain_900": "import torch\na = torch.ones(2, requires_grad=True)\nb = " + " * ".join(["a"] * 900)
                     + "\nb.sum().backward()\nb.sum().backward()\n",
    "call_chain_150": "import torch\na = torch.ones(2, requires_grad=True)\nb = "
                      + "torch.relu(" * 150 + "a" + ")" * 150 + "\nb.sum().backward()\nb.sum().backward()\n",
    "method_chain_2000": "import torch\na = torch.ones(2, requires_grad=True)\nb = a" + ".exp()" * 2000
                         + "\nb.sum().backward()\nb.sum().backward()\n",
    "method_chain_450": "import torch\na = torch.ones(2, requires_grad=True)\nb = a" + ".exp()" * 450
                        + "\nb.sum().backward()\nb.sum().backward()\n",
    "nested_lists_190": "x = " + "[" * 190 + "]" * 190 + "\n",
    "nested_ifs_95": "".join("    " * d + f"if v{d}:\n" for d in range(95)) + "    " * 95 + "pass\n",
    "nested_defs_60": "".join("    " * d + f"def f{d}():\n" for d in range(60)) + "    " * 60 + "return 1\n",
    "bool_chain_3000": "x = " + " and ".join(["a"] * 3000) + "\n",
    "string_concat_3000": "s = " + " + ".join(['"ab"'] * 3000) + "\n",
    "elif_chain_1500": "if a == 0:\n    pass\n" + "".join(f"elif a == {i}:\n    pass\n" for i in range(1, 1500)),
    "lambda_nest_150": "f = " + "lambda: " * 150 + "0\n",
    "subscript_chain_2000": "y = x" + "[0]" * 2000 + "\n",
    # one expression 2,500 deep, each kind: Python 3.11 parses up to about 3,000
    "unary_2500": "import torch\na = torch.ones(2, requires_grad=True)\nb = (" + "-\n" * 2500 + "a * 2)"
                  "\nb.sum().backward()\nb.sum().backward()\n",
    "ternary_2500": "import torch\na = torch.ones(2, requires_grad=True)\nb = ("
                    + "".join(f"a * {i} if a.sum() > {i} else\n" for i in range(2500)) + "a * 2)"
                    "\nb.sum().backward()\nb.sum().backward()\n",
    "attribute_chain_2500": "import torch\na = torch.ones(2, requires_grad=True)\nb = (a * 2" + "\n.T" * 2500 + ")"
                            "\nb.sum().backward()\nb.sum().backward()\n",
    # values nested one statement at a time: no expression is deep, the value is
    "tuple_values_3000": "import torch\na = torch.ones(2, requires_grad=True)\nx = (a,)\n" + "x = (x, a)\n" * 3000
                         + "y = x[1] * 2\ny.sum().backward()\ny.sum().backward()\n",
    "zip_values_3000": "import torch\na = torch.ones(2, requires_grad=True)\nit = [a]\n" + "it = zip(it, [a])\n" * 3000
                       + "for v in it:\n    print(v)\n(a * a).sum().backward()\n",
    "enumerate_values_3000": "import torch\na = torch.ones(2, requires_grad=True)\nit = [a]\n"
                             + "it = enumerate(it)\n" * 3000 + "for v in it:\n    print(v)\n(a * a).sum().backward()\n",
    "generator_values_3000": "import torch\na = torch.ones(2, requires_grad=True)\nit = [a]\n"
                             + "it = (v * 1 for v in it)\n" * 3000 + "for v in it:\n    v.sum().backward()\n",
    "list_of_tuples_3000": "import torch\na = torch.ones(2, requires_grad=True)\nxs = [(a,)]\n"
                           + "xs.append((xs[0], a))\n" * 3000 + "for v in xs:\n    print(v)\n(a * a).sum().backward()\n",
}

_DEEP_DRIVER = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import gradguard
text = open(sys.argv[2], encoding="utf-8").read()
try:
    result = gradguard.analyze_source(text, sys.argv[3])
except gradguard.SourceError as exc:
    print(json.dumps({"outcome": "source_error", "message": exc.message}))
else:
    print(json.dumps({"outcome": "analysed",
                      "findings": [[f.code, f.location.line] for f in result.findings]}))
"""


def _small_stack() -> None:
    """1 MB of C stack, as a Windows thread has: the compiled build's recursion is bounded by
    counting (``engine.MAX_NESTING``), not by Python's recursion limit, and must fit."""
    import resource

    resource.setrlimit(resource.RLIMIT_STACK, (1 << 20, resource.getrlimit(resource.RLIMIT_STACK)[1]))


@pytest.mark.parametrize("case", sorted(DEEP_CASES))
def test_deep_nesting_is_analysed_or_refused_cleanly(case, tmp_path):
    """Run in a child process so that a crash (even a C stack overflow) fails only this case."""
    src = tmp_path / f"{case}.py"
    src.write_text(DEEP_CASES[case], encoding="utf-8")
    proc = subprocess.run([sys.executable, "-c", _DEEP_DRIVER, str(SERVER), str(src), src.name],
                          capture_output=True, text=True, timeout=TIMEOUT, env=_env(),
                          preexec_fn=_small_stack if os.name == "posix" else None)
    assert proc.returncode == 0, f"crashed (rc {proc.returncode}):\n{proc.stderr[-3000:]}"
    assert "RecursionError" not in proc.stderr, proc.stderr[-3000:]
    outcome = json.loads(proc.stdout.strip().splitlines()[-1])
    try:
        compile(DEEP_CASES[case], src.name, "exec")
    except (SyntaxError, RecursionError, MemoryError):
        compiles = False
    else:
        compiles = True
    if outcome["outcome"] == "source_error":
        assert not compiles, f"CPython compiles it, GradGuard refused it: {outcome['message']}"
        assert outcome["message"].strip()
    else:
        assert isinstance(outcome["findings"], list)


def test_deep_nesting_through_the_cli(tmp_path, buggy):
    names = ["parens_500", "add_chain_3000", "add_chain_900", "mul_chain_900", "method_chain_450",
             "elif_chain_1500", "subscript_chain_2000", "nested_ifs_95"]
    for name in names:
        (tmp_path / f"{name}.py").write_text(DEEP_CASES[name], encoding="utf-8")
    proc = run_check(*[f"{n}.py" for n in names], buggy.name, cwd=tmp_path)
    assert_no_traceback(proc)
    assert "RecursionError" not in proc.stderr
    assert gg101_lines(proc.stdout, "buggy.py") == [BUGGY_LINE], (proc.stdout, proc.stderr)


def test_recursion_limit_left_alone(gg):
    before = sys.getrecursionlimit()
    _analysed_or_source_error(gg, DEEP_CASES["add_chain_3000"], "chain.py")
    assert sys.getrecursionlimit() == before


# ----------------------------------------------------------------------------- never imports or executes
def _side_effect_project(tmp_path) -> tuple[Path, str, Path]:
    proj = tmp_path / "proj"
    proj.mkdir()
    mod = f"gg_side_effect_{uuid.uuid4().hex[:10]}"
    marker = tmp_path / "IMPORTED_MARKER"
    (proj / f"{mod}.py").write_text(
        f"from pathlib import Path\n"
        f"Path({str(marker)!r}).write_text('imported')\n"
        f"import torch\n"
        f"def make():\n    return torch.ones(2, requires_grad=True)\n"
        f"raise SystemExit('executed {mod}')\n",
        encoding="utf-8")
    (proj / "main.py").write_text(
        f"import torch\nimport {mod}\nfrom {mod} import make\n"
        f"x = make()\ny = x * 2\ny.sum().backward()\ny.sum().backward()\n",
        encoding="utf-8")
    return proj, mod, marker


def test_library_never_imports_the_analysed_code(gg, tmp_path):
    proj, mod, marker = _side_effect_project(tmp_path)
    main = proj / "main.py"
    modules_before = set(sys.modules)
    path_before = list(sys.path)
    gg.analyze_source(main.read_text(encoding="utf-8"), str(main), root=str(proj))
    gg.analyze_source((proj / f"{mod}.py").read_text(encoding="utf-8"), str(proj / f"{mod}.py"), root=str(proj))
    assert not marker.exists(), "the analysed module was executed"
    assert mod not in sys.modules
    assert not any(m == mod or m.startswith(mod + ".") for m in set(sys.modules) - modules_before)
    assert sys.path == path_before


def test_cli_never_imports_the_analysed_code(tmp_path):
    proj, mod, marker = _side_effect_project(tmp_path)
    proc = run_check("main.py", f"{mod}.py", cwd=proj)
    assert_no_traceback(proc)
    assert not marker.exists(), "the analysed module was executed"
    assert f"executed {mod}" not in proc.stdout + proc.stderr
    assert proc.returncode in (0, 1), (proc.stdout, proc.stderr)


def test_a_long_import_chain_is_followed_within_bounds(tmp_path):
    """300 modules, each re-exporting the next one's name: the question whether the name can reach
    a backward recurses once per module; past ``reach.MAX_DEPTH`` the answer is "may" and the file
    is analysed (compiled, that recursion must not run the C stack out: a 1 MB stack here)."""
    n = 300
    for i in range(n - 1):
        (tmp_path / f"m{i}.py").write_text(f"from m{i + 1} import step\n", encoding="utf-8")
    (tmp_path / f"m{n - 1}.py").write_text(
        "import torch\ndef step(w):\n    y = w * 2\n    y.sum().backward()\n    y.sum().backward()\n",
        encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    main = tmp_path / "main.py"
    main.write_text("import torch\nfrom m0 import step\nstep(torch.ones(2, requires_grad=True))\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, "-c", _DEEP_DRIVER, str(SERVER), str(main), str(main)],
                          capture_output=True, text=True, timeout=TIMEOUT, env=_env(), cwd=tmp_path,
                          preexec_fn=_small_stack if os.name == "posix" else None)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1])["outcome"] == "analysed"


def test_a_generated_table_line_is_analysed(gg):
    """A 60,000-character line (a parser table) is read, and positions on a long line are right."""
    table = "TABLE = [" + ", ".join(str(i) for i in range(11_000)) + "]\n"
    pad = "z = 0; " * 200
    text = ("import torch\n" + table + "x = torch.ones(2, requires_grad=True)\n"
            + pad + "y = x * 2; y.sum().backward(); y.sum().backward()\n")
    assert len(table) > 50_000
    result = gg.analyze_source(text, "table.py")
    (finding,) = [f for f in result.findings if f.code == "GG101"]
    line = text.splitlines()[3]
    assert finding.location.line == 4 and finding.location.column == line.rindex("y.sum().backward()") + 1
