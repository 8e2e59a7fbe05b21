"""One selection grammar for the CLI, [tool.gradguard] and the editor settings (gradguard.selection),
--extend-select / --exit-zero / --statistics, and invalid configuration refused with exit 2."""
from __future__ import annotations

import dataclasses

import pytest

from cliutil import BUGGY, BUGGY_LINE, WARN, findings, run_check
from gradguard import rules, selection
from gradguard.config import load_project_config, parse_editor_settings
from gradguard.selection import Layer, SelectionError, enabled_codes, parse_selectors


@pytest.fixture
def project(tmp_path):
    (tmp_path / "bug.py").write_text(BUGGY, encoding="utf-8")  # GG101 on line 5
    (tmp_path / "warn.py").write_text(WARN, encoding="utf-8")  # GG102 on line 5
    return tmp_path


@pytest.mark.parametrize("args, expected", [
    ([], {"GG101", "GG102"}),
    (["--select", "GG1"], {"GG101", "GG102"}),
    (["--select", "gg101"], {"GG101"}),
    (["--select", "GG101,GG102"], {"GG101", "GG102"}),
    (["--select", "GG102", "--select", "gg101"], {"GG101", "GG102"}),
    (["--select", "GG101", "--extend-select", "GG102"], {"GG101", "GG102"}),
    (["--ignore", "gg101"], {"GG102"}),
    (["--select", "ALL", "--ignore", "GG1"], set()),
    (["--select", "GG102", "--ignore", "GG1"], {"GG102"}),  # the more specific selector wins
])
def test_cli_selection(project, args, expected):
    proc = run_check(*args, "-q", ".", cwd=project)
    assert {code for _, _, code in findings(proc.stdout)} == expected, (args, proc.stdout, proc.stderr)
    assert proc.returncode == (1 if "GG101" in expected else 0), (args, proc.stderr)


@pytest.mark.parametrize("option", ["--select", "--ignore", "--extend-select"])
def test_unknown_selector_exits_2_naming_the_known_codes(project, option):
    proc = run_check(option, "GG101,GG999", ".", cwd=project)
    assert proc.returncode == 2, proc.stderr
    assert "GG999" in proc.stderr and option in proc.stderr
    for code in rules.RULES:
        assert code in proc.stderr
    assert proc.stdout == ""


def test_exit_zero_keeps_the_findings(project):
    proc = run_check("--exit-zero", "bug.py", cwd=project)
    assert proc.returncode == 0
    assert findings(proc.stdout) == [("bug.py", BUGGY_LINE, "GG101")]


def test_exit_zero_does_not_hide_unreadable_input(project):
    proc = run_check("--exit-zero", "bug.py", "missing.py", cwd=project)
    assert proc.returncode == 2 and "missing.py" in proc.stderr


def test_statistics_counts_per_rule(project):
    (project / "bug2.py").write_text(BUGGY, encoding="utf-8")
    proc = run_check("--statistics", ".", cwd=project)
    rows = [line.split("\t") for line in proc.stdout.splitlines()]
    assert [(r[0].strip(), r[1]) for r in rows] == [("2", "GG101"), ("1", "GG102")], proc.stdout
    assert rows[0][2].startswith("[*]") and "backward-through-freed-graph" in rows[0][2]
    assert proc.returncode == 1


@pytest.mark.parametrize("toml, where", [
    ('[tool.gradguard]\nselect = ["GG11"]\n', "tool.gradguard.select"),
    ('[tool.gradguard]\nignore = "GG3"\n', "tool.gradguard.ignore"),
    ('[tool.gradguard]\nseverity = { GG101 = "loud" }\n', "tool.gradguard.severity"),
    ('[tool.gradguard]\nselekt = ["GG1"]\n', "tool.gradguard.selekt"),
    ("[tool.gradguard\nselect = 1\n", "line 1"),
])
def test_invalid_config_exits_2_and_says_where(project, toml, where):
    (project / "pyproject.toml").write_text(toml, encoding="utf-8")
    proc = run_check(".", cwd=project)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "pyproject.toml" in proc.stderr and where in proc.stderr, proc.stderr
    assert proc.stdout == ""


def test_config_selection_and_the_cli_layer(project):
    (project / "pyproject.toml").write_text('[tool.gradguard]\nselect = ["gg102"]\n', encoding="utf-8")
    assert {c for *_, c in findings(run_check("-q", ".", cwd=project).stdout)} == {"GG102"}
    # --select replaces the config's select, --extend-select adds to it
    assert {c for *_, c in findings(run_check("-q", "--select", "GG101", ".", cwd=project).stdout)} == {"GG101"}
    assert {c for *_, c in findings(run_check("-q", "--extend-select", "GG101", ".", cwd=project).stdout)} \
        == {"GG101", "GG102"}


# ----------------------------------------------------------------------------- the grammar itself
def test_grammar():
    assert parse_selectors(["gg101, GG102", " GG1 "], "x") == ("GG101", "GG102", "GG1")
    with pytest.raises(SelectionError) as info:
        parse_selectors("GG1,GG7", "gradguard.select")
    assert "gradguard.select" in info.value.message and "'GG7'" in info.value.message
    gg1 = {code for code in rules.RULES if code.startswith("GG1")}
    assert {"GG101", "GG102", "GG107"} <= gg1
    assert enabled_codes([Layer(select=("GG1",), ignore=("GG102",))]) == gg1 - {"GG102"}
    assert enabled_codes([Layer(select=("GG102",), ignore=("GG1",))]) == {"GG102"}
    assert enabled_codes([Layer(select=("GG101",), ignore=("GG101",))]) == set()  # ties: ignore wins
    assert enabled_codes([Layer(ignore=("GG101",)), Layer(select=("GG1",))]) == gg1
    assert enabled_codes([Layer(ignore=("GG101",)), Layer(extend_select=("GG102",))]) == set(rules.RULES) - {"GG101"}


def test_known_codes_come_from_the_registry(monkeypatch):
    extra = dataclasses.replace(rules.RULES["GG101"], code="GG299")
    monkeypatch.setitem(rules.RULES, "GG299", extra)
    assert "GG299" in selection.known_codes()
    assert parse_selectors("GG29", "x") == ("GG29",)
    assert enabled_codes([Layer(select=("GG29",))]) == {"GG299"}


def test_config_and_editor_use_the_same_grammar(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.gradguard]\nselect = ["gg1", "GG102,gg101"]\n'
                                             'ignore = ["GG9"]\n', encoding="utf-8")
    config = load_project_config(str(tmp_path))
    assert config.select == ("GG1", "GG102", "GG101")
    assert len(config.warnings) == 1 and "'GG9'" in config.warnings[0] and "tool.gradguard.ignore" in config.warnings[0]
    settings, warnings = parse_editor_settings({"select": ["gg101,GG7"]})
    assert settings.select == ("GG101",)
    assert len(warnings) == 1 and "gradguard.select" in warnings[0] and "'GG7'" in warnings[0]
