"""A module cached between analyses is reused only while every file its top level read is
unchanged, and reusing it counts what it read: the same dependencies as a cold analysis."""
from __future__ import annotations

import gc
import os
import time

from gradguard import resolve
from gradguard.analysis import analyze_source

MAIN = "import torch\nfrom mid import make\nx = make()\ny = x * 2\ny.sum().backward()\ny.sum().backward()\n"
MID = "from low import make\n"
LOW_GRAD = "import torch\ndef make():\n    return torch.ones(2, requires_grad=True)\n"
LOW_NOGRAD = "import torch\ndef make():\n    return torch.ones(2)\n"


def _codes(root) -> list:
    text = (root / "main.py").read_text()
    result = analyze_source(text, str(root / "main.py"), str(root))
    return [f.code for f in result.findings], sorted(os.path.basename(p) for p in result.dependencies)


def test_a_change_two_imports_down_reaches_the_analysis(tmp_path):
    resolve.clear_caches()
    (tmp_path / "main.py").write_text(MAIN)
    (tmp_path / "mid.py").write_text(MID)
    (tmp_path / "low.py").write_text(LOW_GRAD)
    assert _codes(tmp_path) == (["GG101"], ["low.py", "mid.py"])
    time.sleep(0.01)
    (tmp_path / "low.py").write_text(LOW_NOGRAD + "# changed\n")  # mid.py itself is unchanged
    assert _codes(tmp_path) == (["GG104"], ["low.py", "mid.py"])


def test_a_warm_analysis_has_the_dependencies_of_a_cold_one(tmp_path):
    resolve.clear_caches()
    (tmp_path / "main.py").write_text(MAIN)
    (tmp_path / "mid.py").write_text(MID)
    (tmp_path / "low.py").write_text(LOW_GRAD)
    cold = _codes(tmp_path)
    assert _codes(tmp_path) == cold == (["GG101"], ["low.py", "mid.py"])


def test_a_text_is_parsed_once_whether_analysed_or_imported(tmp_path, monkeypatch):
    """The analysed file's tree serves a later analysis of the same text and the import of
    that file; an edited text is parsed anew. Findings are those of fresh parses."""
    resolve.clear_caches()
    parsed = []
    real_parse = resolve.parse_lazily
    monkeypatch.setattr(resolve, "parse_lazily", lambda text, path: parsed.append(os.path.basename(path))
                        or real_parse(text, path))
    (tmp_path / "low.py").write_text(LOW_GRAD)
    (tmp_path / "mid.py").write_text(MID)
    low = analyze_source(LOW_GRAD, str(tmp_path / "low.py"), str(tmp_path))
    again = analyze_source(LOW_GRAD, str(tmp_path / "low.py"), str(tmp_path))
    assert low.findings == again.findings and parsed == ["low.py"]
    (tmp_path / "main.py").write_text(MAIN)
    assert _codes(tmp_path) == (["GG101"], ["low.py", "mid.py"])
    assert parsed == ["low.py", "main.py", "mid.py"]  # low.py's import reused its tree
    analyze_source(LOW_GRAD + "# edited\n", str(tmp_path / "low.py"), str(tmp_path))
    assert parsed[-1] == "low.py"


def test_a_module_loaded_before_still_counts_for_the_next_importer(tmp_path):
    """``mid`` imports ``low`` after ``main`` loaded it: ``low`` is in ``mid``'s closure, so a
    change to ``low`` makes the cached ``mid`` (whose ``make`` is ``low``'s) stale."""
    resolve.clear_caches()
    (tmp_path / "main.py").write_text("import low\n" + MAIN)
    (tmp_path / "mid.py").write_text(MID)
    (tmp_path / "low.py").write_text(LOW_GRAD)
    assert _codes(tmp_path) == (["GG101"], ["low.py", "mid.py"])
    time.sleep(0.01)
    (tmp_path / "low.py").write_text(LOW_NOGRAD + "# changed\n")
    assert _codes(tmp_path) == (["GG104"], ["low.py", "mid.py"])


def test_a_module_out_of_the_cache_takes_its_importers_and_is_released(tmp_path, monkeypatch):
    """Evicting ``low`` evicts ``mid``, whose names are ``low``'s values; both are released
    (their cycles broken) once the analysis is over, and the next analysis loads them anew."""
    resolve.clear_caches()
    monkeypatch.setattr(resolve, "MAX_CACHED_MODULES", 1)
    (tmp_path / "main.py").write_text(MAIN)
    (tmp_path / "mid.py").write_text(MID)
    (tmp_path / "low.py").write_text(LOW_GRAD)
    retired = []
    real_retire = resolve._retire
    monkeypatch.setattr(resolve, "_retire", lambda path: retired.append(resolve._LOADED.get(path)) or
                        real_retire(path))
    assert _codes(tmp_path) == (["GG101"], ["low.py", "mid.py"])
    gone = [entry[1] for entry in retired if entry is not None]
    assert sorted(m.name for m in gone) == ["low", "mid"] and not resolve._LOADED
    assert all(m.env == {} and m.tree is None for m in gone)
    assert _codes(tmp_path) == (["GG101"], ["low.py", "mid.py"])


def test_an_analysis_leaves_no_cyclic_garbage(tmp_path):
    """Segments of a loop (an old one points at its current one, which depends on it), the
    module's classes and functions, and retired cached modules are freed by reference counting:
    no full collector pass is needed after each analysis."""
    resolve.clear_caches()
    (tmp_path / "mid.py").write_text(MID)
    (tmp_path / "low.py").write_text(LOW_GRAD)
    text = ("import torch\nfrom mid import make\n\nclass Cell(torch.nn.Module):\n    def forward(self, x, h):\n"
            "        return torch.tanh(x * h)\n\ncell = Cell()\nh = make()\nfor x in [make(), make()]:\n"
            "    h = cell(x, h)\n    h.sum().backward(retain_graph=True)\n")
    gc.collect()
    gc.disable()
    try:
        analyze_source(text, str(tmp_path / "main.py"), str(tmp_path))
        resolve.clear_caches()
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_a_check_run_stamps_each_file_once_and_then_lets_go(tmp_path, monkeypatch):
    """``gradguard check`` holds the stamps of the files it reads for its run (the tree does
    not change under it); the analyses after it (``--fix`` writing files) see changes again."""
    from gradguard import cli

    resolve.clear_caches()
    (tmp_path / "main.py").write_text(MAIN)
    (tmp_path / "mid.py").write_text(MID)
    (tmp_path / "low.py").write_text(LOW_GRAD)
    stats = []
    real_stat = os.stat
    monkeypatch.setattr(resolve.os, "stat", lambda p, *a, **k: stats.append(os.path.basename(p)) or real_stat(p, *a, **k))
    assert cli.analyse_file(str(tmp_path / "main.py"))[0] == "ok"
    first = stats.count("low.py")
    for _ in range(2):
        assert cli.analyse_file(str(tmp_path / "main.py"))[0] == "ok"
    assert first and stats.count("low.py") == first
    cli.analyse_all([], 1, None, cli._Progress(0, False))
    time.sleep(0.01)
    (tmp_path / "low.py").write_text(LOW_NOGRAD)
    assert _codes(tmp_path) == (["GG104"], ["low.py", "mid.py"])
