"""Settings: ``[tool.gradguard]`` in the nearest pyproject.toml, and the editor's ``gradguard.*``.

Both the CLI and the language server filter findings through :meth:`Config.apply`.  Editor
settings win over the project's where they are set (non-empty), like Ruff's "editorFirst".
Bad values never raise: they are reported in ``warnings`` (naming the setting) and the
default is used instead; the CLI turns such warnings into an error (exit 2), the language
server shows them.  ``select``/``ignore`` use the grammar of :mod:`gradguard.selection`.
"""
from __future__ import annotations

import dataclasses
import fnmatch
import functools
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Iterable, Mapping

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

from .findings import Finding
from .selection import Layer, code_enabled, known_codes, split_selectors, unknown_message, unknown_selectors

#: The severity names, the same in the config, the editor settings, JSON and the docs.
SEVERITIES = ("error", "warning", "info", "hint")
#: Accepted spellings: the names above, and "information" (LSP's and older VS Code settings').
SEVERITY_LEVELS = {**{name: name for name in SEVERITIES}, "information": "info"}
RUN_MODES = ("onType", "onSave")
#: which backward calls get a code lens: those a finding involves, every one, none
CODE_LENS_MODES = ("findings", "all", "off")
#: whose diagnostics are shown: the open documents', or every file of the workspace folders
DIAGNOSTIC_SCOPES = ("openFiles", "workspace")

#: Editor setting defaults; must equal ``contributes.configuration`` in the root package.json
#: (tests/lsp/test_config.py checks this).
EDITOR_DEFAULTS: dict[str, Any] = {
    "enable": True,
    "run": "onType",
    "select": [],
    "ignore": [],
    "severity": {},
    "codeLens": "findings",
    "inlayHints": False,
    "diagnosticScope": "openFiles",
}
#: Settings the VS Code client consumes itself; the server accepts and ignores them.
CLIENT_ONLY_SETTINGS = frozenset({"interpreter", "importStrategy", "trace", "path", "args"})


@dataclass(frozen=True)
class Config:
    """Which findings to report and how loudly, for one project."""

    select: tuple[str, ...] = ()  # codes or prefixes; empty = all
    ignore: tuple[str, ...] = ()  # codes or prefixes
    severity: Mapping[str, str] = field(default_factory=dict)  # code -> Finding/LSP level
    exclude: tuple[str, ...] = ()  # globs relative to ``root``
    root: str | None = None  # directory of the pyproject.toml it came from
    warnings: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    #: later layers of selection (the command line), applied over this config's own
    layers: tuple[Layer, ...] = ()
    #: where it came from, "<path>: tool.gradguard"; None when the pyproject.toml has no such table
    source: str | None = None

    @functools.cached_property
    def _layers(self) -> tuple[Layer, ...]:
        own = Layer(tuple(split_selectors(self.select)) or None, tuple(split_selectors(self.extend_select)),
                    tuple(split_selectors(self.ignore)))
        return (own, *self.layers)

    def enabled(self, code: str) -> bool:
        return code_enabled(code, self._layers)

    def apply(self, findings: Iterable[Finding]) -> list[Finding]:
        """Drop unselected/ignored findings and apply severity overrides."""
        kept = []
        for finding in findings:
            if not self.enabled(finding.code):
                continue
            level = self.severity.get(finding.code)
            kept.append(dataclasses.replace(finding, severity=level) if level else finding)
        return kept

    def excludes(self, path: str) -> bool:
        """Whether ``path`` matches an ``exclude`` glob (relative to the pyproject directory)."""
        if not self.exclude or not path:
            return False
        try:
            rel = Path(os.path.abspath(path)).relative_to(self.root) if self.root else Path(path)
        except ValueError:
            return False
        rel_posix = PurePosixPath(rel.as_posix())
        candidates = [rel_posix, *rel_posix.parents]  # "build" excludes build/x/y.py too
        return any(
            fnmatch.fnmatch(str(c), pat.rstrip("/")) or fnmatch.fnmatch(str(c), pat.rstrip("/") + "/**")
            for pat in self.exclude for c in candidates if str(c) != "."
        )

    def with_editor(self, editor: "EditorSettings") -> "Config":
        """The project config overridden by editor settings that are set."""
        return dataclasses.replace(
            self,
            select=editor.select or self.select,
            extend_select=() if editor.select else self.extend_select,
            ignore=editor.ignore or self.ignore,
            severity={**self.severity, **editor.severity},
        )

    def with_layer(self, layer: Layer) -> "Config":
        """This config with the command line's selection applied over it."""
        return dataclasses.replace(self, layers=(*self.layers, layer))


def _str_list(value: Any, name: str, warnings: list[str]) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        warnings.append(f"'{name}' must be a list of strings; ignoring {value!r}")
        return ()
    return tuple(v.strip() for v in value if v.strip())


def _selectors(value: Any, name: str, warnings: list[str]) -> tuple[str, ...]:
    """Rule selectors (codes, prefixes, comma lists); unknown ones are reported and left out."""
    selectors = split_selectors(_str_list(value, name, warnings))
    unknown = unknown_selectors(selectors)
    if unknown:
        warnings.append(unknown_message(f"'{name}'", unknown))
    return tuple(s for s in selectors if s not in unknown)


def _severity_map(value: Any, name: str, warnings: list[str]) -> dict[str, str]:
    if value == []:  # clients that cannot tell an empty map from an empty list (Neovim's {})
        return {}
    if not isinstance(value, Mapping):
        warnings.append(f"'{name}' must map rule codes to a level; ignoring {value!r}")
        return {}
    result = {}
    for code, level in value.items():
        mapped = SEVERITY_LEVELS.get(str(level).lower())
        if str(code).upper() not in known_codes():
            warnings.append(f"'{name}.{code}': unknown rule code (known codes: {', '.join(known_codes())})")
        elif mapped is None:
            warnings.append(f"'{name}.{code}': unknown level {level!r} (use {', '.join(SEVERITIES)})")
        else:
            result[str(code).upper()] = mapped
    return result


_PROJECT_KEYS = ("select", "extend-select", "ignore", "severity", "exclude")


def parse_project_table(table: Any, root: str | None = None, where: str = "tool.gradguard") -> Config:
    """A Config from a ``[tool.gradguard]`` table (already parsed TOML)."""
    warnings: list[str] = []
    if not isinstance(table, Mapping):
        return Config(root=root, warnings=(f"'{where}' must be a table",))
    for key in table:
        if key not in _PROJECT_KEYS:
            warnings.append(f"'{where}.{key}' is not a GradGuard setting")
    return Config(
        select=_selectors(table.get("select", []), f"{where}.select", warnings),
        extend_select=_selectors(table.get("extend-select", []), f"{where}.extend-select", warnings),
        ignore=_selectors(table.get("ignore", []), f"{where}.ignore", warnings),
        severity=_severity_map(table.get("severity", {}), f"{where}.severity", warnings),
        exclude=_str_list(table.get("exclude", []), f"{where}.exclude", warnings),
        root=root,
        warnings=tuple(warnings),
        source=where,
    )


def find_pyproject(start_dir: str) -> Path | None:
    """The nearest pyproject.toml at or above ``start_dir``."""
    here = Path(start_dir).resolve()
    for directory in (here, *here.parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


_cache: dict[Path, tuple[int, Config]] = {}


def load_project_config(start_dir: str) -> Config:
    """``[tool.gradguard]`` of the nearest pyproject.toml (an empty Config when there is none).

    Cached per file and modification time: the language server calls this on every analysis.
    """
    pyproject = find_pyproject(start_dir)
    if pyproject is None:
        return Config()
    try:
        mtime = pyproject.stat().st_mtime_ns
    except OSError:
        return Config()
    cached = _cache.get(pyproject)
    if cached and cached[0] == mtime:
        return cached[1]
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        config = Config(root=str(pyproject.parent), warnings=(f"{pyproject}: {exc}",))
    else:
        tool = data.get("tool", {})
        table = tool.get("gradguard", {}) if isinstance(tool, Mapping) else {}
        config = parse_project_table(table, root=str(pyproject.parent),
                                     where=f"{pyproject}: tool.gradguard")
        if not (isinstance(tool, Mapping) and "gradguard" in tool):
            config = dataclasses.replace(config, source=None)
    _cache[pyproject] = (mtime, config)
    return config


@dataclass(frozen=True)
class EditorSettings:
    """The editor's ``gradguard.*`` settings (defaults: :data:`EDITOR_DEFAULTS`)."""

    enable: bool = EDITOR_DEFAULTS["enable"]
    run: str = EDITOR_DEFAULTS["run"]
    select: tuple[str, ...] = tuple(EDITOR_DEFAULTS["select"])
    ignore: tuple[str, ...] = tuple(EDITOR_DEFAULTS["ignore"])
    severity: Mapping[str, str] = field(default_factory=lambda: dict(EDITOR_DEFAULTS["severity"]))
    code_lens: str = EDITOR_DEFAULTS["codeLens"]
    inlay_hints: bool = EDITOR_DEFAULTS["inlayHints"]
    diagnostic_scope: str = EDITOR_DEFAULTS["diagnosticScope"]


def _unwrap(raw: Any) -> Mapping[str, Any]:
    """Accept ``{"settings": {"gradguard": {...}}}`` (the VS Code client's initializationOptions),
    ``{"gradguard": {...}}``, ``{"gradguard.run": ...}`` or a flat ``{...}``."""
    if not isinstance(raw, Mapping):
        return {}
    if isinstance(raw.get("settings"), Mapping):
        return _unwrap(raw["settings"])
    if isinstance(raw.get("gradguard"), Mapping):
        return raw["gradguard"]
    dotted = {k.split(".", 1)[1]: v for k, v in raw.items() if k.startswith("gradguard.")}
    return dotted or raw


def parse_editor_settings(raw: Any) -> tuple[EditorSettings, list[str]]:
    """Editor settings from initializationOptions / didChangeConfiguration / workspace/configuration.

    Returns the settings and one warning per bad value (that value falls back to its default).
    """
    values = _unwrap(raw)
    warnings: list[str] = []
    settings: dict[str, Any] = {}
    for key, value in values.items():
        name = f"gradguard.{key}"
        if value is None or key in CLIENT_ONLY_SETTINGS:
            continue
        if key in ("enable", "inlayHints"):
            if isinstance(value, bool):
                settings["inlay_hints" if key == "inlayHints" else key] = value
            else:
                warnings.append(f"'{name}' must be true or false, not {value!r}")
        elif key == "codeLens":
            if value in CODE_LENS_MODES:
                settings["code_lens"] = value
            else:
                warnings.append(f"'{name}' must be one of {', '.join(CODE_LENS_MODES)}, not {value!r}")
        elif key == "diagnosticScope":
            if value in DIAGNOSTIC_SCOPES:
                settings["diagnostic_scope"] = value
            else:
                warnings.append(f"'{name}' must be one of {', '.join(DIAGNOSTIC_SCOPES)}, not {value!r}")
        elif key == "run":
            if value in RUN_MODES:
                settings["run"] = value
            else:
                warnings.append(f"'{name}' must be one of {', '.join(RUN_MODES)}, not {value!r}")
        elif key in ("select", "ignore"):
            settings[key] = _selectors(value, name, warnings)
        elif key == "severity":
            settings["severity"] = _severity_map(value, name, warnings)
        else:
            warnings.append(f"'{name}' is not a GradGuard setting")
    return EditorSettings(**settings), warnings
