"""Distributions a user installs: the wheel and sdist (`python -m build`, `twine check`), a pipx
install that checks a project, the pre-commit hook run by real pre-commit, and the five platform
.vsix files with the right native libcst inside.

Marked ``packaging``: they need the package registries (or warm pip / npm caches). The .vsix
build reuses ~/.cache/gradguard/vsix-wheels/ between runs, so after the first it takes a few minutes.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from cliutil import BUGGY, CLEAN, REPO

pytestmark = pytest.mark.packaging
TARGETS = {  # VS Code target -> (what the wheel tag says, how the native module starts)
    "linux-x64": ("x86_64", "elf"),
    "linux-arm64": ("aarch64", "elf"),
    "darwin-x64": ("x86_64", "macho"),
    "darwin-arm64": ("arm64", "macho"),
    "win32-x64": ("amd64", "pe"),
}
MINORS = ("10", "11", "12", "13")


def run(cmd, **kw) -> subprocess.CompletedProcess:
    kw.setdefault("timeout", 900)
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert proc.returncode == 0, f"{cmd}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def source_tree(dest: Path) -> Path:
    """The files a distribution is built from, copied from the working tree (committed or not)."""
    for name in ("pyproject.toml", "setup.py", "README.md", "LICENSE", ".pre-commit-hooks.yaml"):
        shutil.copy(REPO / name, dest / name)
    shutil.copytree(REPO / "server", dest / "server", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    return dest


@pytest.fixture(scope="module")
def dists(tmp_path_factory) -> dict[str, Path]:
    src = source_tree(tmp_path_factory.mktemp("src"))
    # scripts/test.sh names a folder: its wheel phase then tests this wheel instead of building one
    out = Path(os.environ["GRADGUARD_TEST_DISTS"]) if os.environ.get("GRADGUARD_TEST_DISTS") else None
    if out is None:
        out = tmp_path_factory.mktemp("dist")
    else:
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
    # the release command (README): the wheel compiled
    run([sys.executable, "-m", "build", "--outdir", str(out), str(src)], env=dict(os.environ, GRADGUARD_COMPILE="1"),
        timeout=1800)  # the compile: 2 to 15 minutes on a busy 2-core machine
    files = {p.suffix if p.suffix == ".whl" else ".tar.gz": p for p in out.iterdir()}
    assert set(files) == {".whl", ".tar.gz"}, list(out.iterdir())
    return files


def test_wheel_and_sdist_pass_twine_check(dists):
    proc = run([sys.executable, "-m", "twine", "check", "--strict", *map(str, dists.values())])
    assert proc.stdout.count("PASSED") == 2, proc.stdout
    names = zipfile.ZipFile(dists[".whl"]).namelist()
    assert "gradguard/cli.py" in names and "gradguard/lsp/server.py" in names
    assert "gradguard/docs/rules/GG101.md" in names  # the rule links point at these
    assert any(re.fullmatch(r"gradguard-[^/]+\.dist-info/licenses/LICENSE", n) for n in names), names
    entry = next(n for n in names if n.endswith("entry_points.txt"))
    assert "gradguard = gradguard.cli:run" in zipfile.ZipFile(dists[".whl"]).read(entry).decode()
    with tarfile.open(dists[".tar.gz"]) as sdist:
        members = sdist.getnames()
    assert any(m.endswith("/LICENSE") for m in members) and any(m.endswith("/server/gradguard/cli.py") for m in members)
    assert any(m.endswith("/setup.py") for m in members), members


def test_the_wheel_is_compiled_and_carries_no_c_sources(dists):
    """With GRADGUARD_COMPILE=1 setup.py compiles the engine (Cython, from the sdist's .py files):
    the wheel is tagged for this platform and CPython, and neither distribution carries the C."""
    tag = dists[".whl"].name.split("-", 2)[2]
    assert not tag.startswith("py3-none-any"), dists[".whl"].name
    names = zipfile.ZipFile(dists[".whl"]).namelist()
    assert [n for n in names if re.fullmatch(r"gradguard/engine\.[^/]+\.(so|pyd)", n)], names
    assert [n for n in names if re.fullmatch(r"gradguard/rules/gg101\.[^/]+\.(so|pyd)", n)], names
    assert not [n for n in names if re.match(r"gradguard/lsp/.*\.(so|pyd)$", n)]  # the server stays Python
    with tarfile.open(dists[".tar.gz"]) as sdist:
        members = sdist.getnames()
    assert not [n for n in names + members if n.endswith(".c")]
    assert not [n for n in members if n.endswith((".so", ".pyd"))]


def test_a_source_install_is_pure_python(tmp_path):
    """``pip install .`` (README's first command) compiles nothing and asks for no Cython: the
    py3-none-any wheel, whose ``gradguard --version`` says so."""
    src = source_tree(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("GRADGUARD_COMPILE", "PYTHONPATH")}
    proc = run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-v", "-w", str(tmp_path / "out"), str(src)],
               env=env)
    assert not re.search(r"(?i)\bcython\b", proc.stdout), "a pure build installed Cython"
    wheel, = (tmp_path / "out").glob("*.whl")
    assert wheel.name.endswith("-py3-none-any.whl"), wheel.name
    names = zipfile.ZipFile(wheel).namelist()
    assert "gradguard/engine.py" in names and not [n for n in names if n.endswith((".so", ".pyd", ".c"))]
    run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(tmp_path / "site"), str(wheel)])
    proc = run([sys.executable, "-m", "gradguard", "--version"], env=dict(env, PYTHONPATH=str(tmp_path / "site")),
               cwd=tmp_path)
    assert proc.stdout.strip().endswith("(pure Python)"), proc.stdout


def test_cibuildwheel_builds_every_supported_cpython_compiled():
    """pyproject.toml's [tool.cibuildwheel]: CPython 3.10 to 3.13 (requires-python), compiled."""
    proc = run([sys.executable, "-m", "cibuildwheel", "--print-build-identifiers", "--platform", "linux", str(REPO)])
    ids = proc.stdout.split()
    assert {i.split("-")[0] for i in ids} == {"cp310", "cp311", "cp312", "cp313"}, ids
    assert {i.split("-", 1)[1] for i in ids} == {"manylinux_x86_64", "manylinux_aarch64"}, ids
    import tomllib
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["cibuildwheel"]
    assert config["environment"]["GRADGUARD_COMPILE"] == "1" and "e.COMPILED" in config["test-command"]


def test_pipx_install_checks_a_project(dists, tmp_path):
    env = dict(os.environ, PIPX_HOME=str(tmp_path / "pipx"), PIPX_BIN_DIR=str(tmp_path / "bin"),
               PIPX_MAN_DIR=str(tmp_path / "man"))
    env.pop("PYTHONPATH", None)
    run([sys.executable, "-m", "pipx", "install", "--python", sys.executable, str(dists[".whl"])], env=env)
    exe = tmp_path / "bin" / ("gradguard.exe" if os.name == "nt" else "gradguard")
    project = tmp_path / "project"
    (project / "src" / "mylib" / "dist").mkdir(parents=True)
    (project / "src" / "mylib" / "dist" / "train.py").write_text(BUGGY, encoding="utf-8")
    (project / "ok.py").write_text(CLEAN, encoding="utf-8")
    proc = subprocess.run([str(exe), "check", "."], cwd=project, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stderr
    assert re.search(r"src.mylib.dist.train\.py:5:1: GG101 ", proc.stdout), proc.stdout
    url = re.search(r"docs: (file://\S+)", proc.stdout).group(1)
    assert "/pipx/" in url  # the page installed with the package, not the checkout's
    assert "2 files analysed" in proc.stderr


def test_pre_commit_runs_gradguard(tmp_path):
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    source_tree(hooks)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    run(["git", "init", "-q", str(hooks)])
    run([*git, "-C", str(hooks), "add", "-A"])
    run([*git, "-C", str(hooks), "commit", "-qm", "hooks"])
    rev = run(["git", "-C", str(hooks), "rev-parse", "HEAD"]).stdout.strip()
    project = tmp_path / "project"
    project.mkdir()
    run(["git", "init", "-q", str(project)])
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {hooks.as_posix()}\n    rev: {rev}\n    hooks:\n      - id: gradguard\n", encoding="utf-8")
    (project / "train.py").write_text(BUGGY, encoding="utf-8")
    (project / "notes.txt").write_text("not python\n", encoding="utf-8")
    run([*git, "-C", str(project), "add", "-A"])
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "cache"))
    env.pop("PYTHONPATH", None)
    cmd = [sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never"]
    proc = subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "train.py:5:1: GG101" in proc.stdout and "Failed" in proc.stdout, proc.stdout
    (project / "train.py").write_text(CLEAN, encoding="utf-8")
    proc = subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0 and "Passed" in proc.stdout, proc.stdout + proc.stderr


# --- the .vsix files ---------------------------------------------------------------------------

def _native_kind(data: bytes) -> tuple[str, str]:
    """(format, architecture) of a compiled module, from its header."""
    if data[:4] == b"\x7fELF":
        machine = int.from_bytes(data[18:20], "little")
        return "elf", {0x3E: "x86_64", 0xB7: "aarch64"}.get(machine, hex(machine))
    if data[:4] in (b"\xcf\xfa\xed\xfe",):
        cpu = int.from_bytes(data[4:8], "little")
        return "macho", {0x01000007: "x86_64", 0x0100000C: "arm64"}.get(cpu, hex(cpu))
    if data[:2] == b"MZ":
        pe = int.from_bytes(data[0x3C:0x40], "little")
        machine = int.from_bytes(data[pe + 4:pe + 6], "little")
        return "pe", {0x8664: "amd64", 0xAA64: "arm64"}.get(machine, hex(machine))
    return "unknown", ""


@pytest.fixture(scope="module")
def vsix_files() -> dict[str, Path]:
    if not (REPO / "node_modules" / ".bin" / "vsce").exists():
        run(["npm", "ci", "--no-audit", "--no-fund"], cwd=REPO)
    proc = run(["bash", str(REPO / "scripts" / "package_vsix.sh")], cwd=REPO, timeout=1800)
    built = {Path(line).name: Path(line) for line in proc.stdout.split()}
    version = __import__("json").loads((REPO / "package.json").read_text())["version"]
    return {t: built[f"gradguard-{version}-{t}.vsix"] for t in TARGETS}


def test_vsix_is_ready_to_publish(vsix_files, tmp_path):
    """What the marketplace and Open VSX ask for (scripts/package_vsix.sh also fails on any vsce
    warning): icon, repository, license, changelog, a README whose images render there (https,
    no SVG), and ovsx's own checks of the manifest (offline: validateManifest, isLicenseOk)."""
    with zipfile.ZipFile(vsix_files["linux-x64"]) as z:
        names = set(z.namelist())
        manifest = z.read("extension.vsixmanifest").decode()
        package = json.loads(z.read("extension/package.json"))
        readme = z.read("extension/readme.md").decode()
        (tmp_path / "package.json").write_bytes(z.read("extension/package.json"))
        (tmp_path / "LICENSE.txt").write_bytes(z.read("extension/LICENSE.txt"))
    assert {"extension/LICENSE.txt", "extension/changelog.md", "extension/" + package["icon"]} <= names
    assert re.search(r'<Icon>extension/client/icon.png</Icon>', manifest)
    assert package["repository"]["url"].startswith("https://") and 'Links.Source" Value="https://' in manifest
    images = re.findall(r"!\[[^\]]*\]\(([^)\s]+)", readme)
    assert images and all(i.startswith("https://") and not i.endswith(".svg") for i in images), images
    assert not [n for n in names if n.startswith(("extension/src/", "extension/tests/", "extension/node_modules/"))]
    assert not [n for n in names if "/libcst/" in n and "/tests/" in n]
    check = ("const o = require(process.argv[1]); o.validateManifest(require(process.argv[2] + '/package.json'));"
             " o.isLicenseOk(process.argv[2]).then(ok => process.stdout.write(String(ok)))")
    proc = run(["node", "-e", check, str(REPO / "node_modules" / "ovsx"), str(tmp_path)])
    assert proc.stdout == "true", proc.stdout + proc.stderr


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_vsix_carries_the_native_wheels_of_its_platform(vsix_files, target):
    arch, kind = TARGETS[target]
    with zipfile.ZipFile(vsix_files[target]) as z:
        names = z.namelist()
        manifest = z.read("extension.vsixmanifest").decode()
        assert f'TargetPlatform="{target}"' in manifest
        assert "extension/out/extension.js" in names and "extension/bundled/tool/gradguard/cli.py" in names
        assert "extension/bundled/tool/gradguard/docs/rules/GG101.md" in names
        assert "extension/bundled/libs/pygls/__init__.py" in names and "extension/bundled/libs/pathspec/__init__.py" in names
        assert not [n for n in names if n.startswith("extension/bundled/libs/") and n.endswith((".so", ".pyd"))]
        assert not [n for n in names if n.rsplit("/", 1)[-1].startswith(".env")]  # the build skips that scan
        for minor in MINORS:
            prefix = f"extension/bundled/libs-cp3{minor}/"
            wheel = [n for n in names if n.startswith(prefix + "libcst-") and n.endswith(".dist-info/WHEEL")]
            assert len(wheel) == 1, (target, minor, wheel)
            tags = re.findall(r"^Tag: (\S+)$", z.read(wheel[0]).decode(), re.M)
            assert tags and all(t.startswith(f"cp3{minor}-") and arch in t.lower() for t in tags), tags
            natives = [n for n in names if n.startswith(prefix + "libcst/") and n.endswith((".so", ".pyd"))]
            assert natives, (target, minor)
            for name in natives:
                suffix = ".pyd" if kind == "pe" else ".so"
                assert name.endswith(suffix) and f"3{minor}" in name.rsplit("/", 1)[1], name
                assert _native_kind(z.read(name)[:4096]) == (kind, arch), name
