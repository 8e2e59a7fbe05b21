"""gradguard.config: [tool.gradguard] in pyproject.toml and the editor's gradguard.* settings."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from gradguard.config import (EDITOR_DEFAULTS, Config, EditorSettings, load_project_config,
                              parse_editor_settings)
from gradguard.findings import Finding, Location

REPO = Path(__file__).resolve().parents[2]


def finding(code, severity="error", path="/p/a.py"):
    return Finding(code, severity, "m", Location(path, 1, 1, 1, 2))


def test_project_config_from_the_nearest_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.gradguard]\nselect = ["GG1"]\nignore = ["GG102"]\n'
        'severity = { GG101 = "warning" }\nexclude = ["build", "notebooks/*.ipynb"]\n')
    sub = tmp_path / "src" / "pkg"
    sub.mkdir(parents=True)
    config = load_project_config(str(sub))
    assert config.root == str(tmp_path.resolve())
    assert config.warnings == ()
    kept = config.apply([finding("GG101"), finding("GG102"), finding("GG201")])
    assert [(f.code, f.severity) for f in kept] == [("GG101", "warning")]
    assert config.excludes(str(tmp_path / "build" / "x" / "y.py"))
    assert config.excludes(str(tmp_path / "notebooks" / "a.ipynb"))
    assert not config.excludes(str(tmp_path / "src" / "pkg" / "m.py"))


def test_no_pyproject_means_everything_reported(tmp_path):
    config = load_project_config(str(tmp_path))  # /tmp has no pyproject.toml above it
    assert config.apply([finding("GG101")]) == [finding("GG101")]


def test_bad_project_values_warn_and_fall_back(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.gradguard]\nselect = "GG101"\nignore = 3\nseverity = { GG102 = "loud" }\ncolour = 1\n')
    config = load_project_config(str(tmp_path))
    assert config.select == ("GG101",)
    assert config.ignore == ()
    assert config.severity == {}
    text = "\n".join(config.warnings)
    assert "tool.gradguard.ignore" in text and "GG102" in text and "tool.gradguard.colour" in text


def test_broken_toml_is_a_warning_not_a_crash(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.gradguard\n")
    config = load_project_config(str(tmp_path))
    assert config.warnings and config.apply([finding("GG101")])


@pytest.mark.parametrize("raw", [
    {"settings": {"gradguard": {"run": "onSave", "ignore": ["GG102"]}}},  # VS Code initializationOptions
    {"gradguard": {"run": "onSave", "ignore": ["GG102"]}},
    {"gradguard.run": "onSave", "gradguard.ignore": ["GG102"]},
    {"run": "onSave", "ignore": ["GG102"], "interpreter": [], "importStrategy": "useBundled"},
])
def test_editor_settings_shapes(raw):
    settings, warnings = parse_editor_settings(raw)
    assert warnings == []
    assert settings == EditorSettings(run="onSave", ignore=("GG102",))


def test_bad_editor_values_name_the_setting_and_use_defaults():
    settings, warnings = parse_editor_settings(
        {"gradguard": {"enable": "yes", "run": "sometimes", "severity": {"GG101": "fatal"}, "speed": 1}})
    assert settings == EditorSettings()
    assert [w.split("'")[1] for w in warnings] == ["gradguard.enable", "gradguard.run",
                                                  "gradguard.severity.GG101", "gradguard.speed"]
    assert parse_editor_settings(None) == (EditorSettings(), [])


def test_editor_settings_override_the_project():
    project = Config(select=("GG101",), severity={"GG101": "warning"})
    settings, _ = parse_editor_settings({"select": [], "ignore": ["GG101"], "severity": {"GG102": "hint"}})
    merged = project.with_editor(settings)
    assert merged.select == ("GG101",)  # an empty editor list leaves the project's
    assert merged.ignore == ("GG101",)
    assert merged.severity == {"GG101": "warning", "GG102": "hint"}
    assert merged.apply([finding("GG101")]) == []


def test_server_defaults_equal_package_json():
    manifest = REPO / "package.json"
    if not manifest.exists():
        pytest.skip("no package.json (VS Code manifest) in this checkout")
    properties = json.loads(manifest.read_text())["contributes"]["configuration"]["properties"]
    for key, default in EDITOR_DEFAULTS.items():
        assert properties[f"gradguard.{key}"]["default"] == default, key
    assert EditorSettings() == parse_editor_settings(
        {key: properties[f"gradguard.{key}"]["default"] for key in EDITOR_DEFAULTS})[0]
    # every level the manifest allows is one the server accepts
    levels = properties["gradguard.severity"]["additionalProperties"]["enum"]
    for level in levels:
        assert parse_editor_settings({"severity": {"GG101": level}})[1] == [], level
