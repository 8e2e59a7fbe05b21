"""Reading input: only regular files, never more than the size limit, clear refusals; IPython
syntax in notebook cells masked with every other position kept."""
from __future__ import annotations

import ast
import os
import textwrap

import pytest

import torchrun

from gradguard import analyze_cells, analyze_path
from gradguard import sources
from gradguard.sources import SourceError, read_python, strip_magics

BUG = ("import torch\n"
       "w = torch.randn(3, requires_grad=True)\n"
       "h = torch.tanh(w * 2)\n"
       "h.sum().backward()\n"
       "h.sum().backward()\n")


# --- files ------------------------------------------------------------------------------------

@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.py"
    os.mkfifo(fifo)
    with pytest.raises(SourceError, match="not a regular file"):
        read_python(str(fifo))


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero here")
def test_a_link_to_a_device_is_refused_before_reading(tmp_path):
    link = tmp_path / "zero.py"
    link.symlink_to("/dev/zero")
    with pytest.raises(SourceError, match=r"not a regular file \(a character device\)"):
        analyze_path(str(link))


def test_a_directory_named_like_a_file_is_refused(tmp_path):
    folder = tmp_path / "pkg.py"
    folder.mkdir()
    with pytest.raises(SourceError, match="not a regular file|Is a directory"):
        read_python(str(folder))


def test_missing_file_says_so(tmp_path):
    with pytest.raises(SourceError, match="No such file"):
        read_python(str(tmp_path / "absent.py"))


def test_an_oversize_file_is_refused_before_it_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(sources, "MAX_BYTES", 1000)
    big = tmp_path / "big.py"
    big.write_text("x = 1\n" * 200)
    with pytest.raises(SourceError, match="over the 1,000-byte limit"):
        read_python(str(big))
    small = tmp_path / "small.py"
    small.write_text("x = 1\n" * 100)
    assert read_python(str(small)).count("\n") == 100


def test_an_oversize_line_is_refused_clearly():
    long_line = "x = [" + "1, " * (sources.MAX_LINE_CHARS // 3 + 10) + "]\n"
    with pytest.raises(SourceError, match=r"<t>:2: a line of [\d,]+ characters is over the"):
        sources.parse("import torch\n" + long_line, "<t>")
    sources.parse("import torch\n" + "x = 1\n" * (sources.MAX_LINE_CHARS // 3), "<t>")  # long file, short lines


# --- notebook magics ----------------------------------------------------------------------------

MAGIC_LINES = [
    "%matplotlib inline",
    "%load_ext autoreload",
    "%%time",  # only as a first line; below, a line magic named %%time is still masked
    "!pip install torch",
    "!!ls -la",
    "files = !ls *.py",
    "a, b = !echo 1 2",
    "r = %timeit -o torch.ones(2)",
    "%timeit -n 10 -r 3 torch.ones(2)",
    "out = %time torch.ones(2)",
    "torch.randn?",
    "torch.randn??",
    "?torch",
    "%pinfo torch",
    "pip install numpy",
    "cd ..",
    "%env CUDA_VISIBLE_DEVICES=0",
]


@pytest.mark.parametrize("magic", MAGIC_LINES)
def test_every_magic_form_is_masked_and_the_bug_after_it_found(magic):
    """The bug below the magic is found on its own line and column: nothing moved."""
    cell = BUG.replace("h = torch.tanh", magic + "\nh = torch.tanh")
    masked = strip_magics(cell)
    assert masked.count("\n") == cell.count("\n")
    ast.parse(masked)
    findings = analyze_cells([cell], "nb.ipynb").findings
    bad_line = cell.split("\n").index("h.sum().backward()", 4) + 1
    assert [(f.code, f.location.line, f.location.column) for f in findings] == [("GG101", bad_line + 1, 1)]


def test_magics_inside_indented_blocks_keep_the_block():
    cell = "import torch\nfor i in range(2):\n    %time x = torch.ones(2)\n    !echo {i}\n    y = x * 2\n"
    masked = strip_magics(cell)
    ast.parse(masked)
    assert masked.split("\n")[2] == "    pass; x = torch.ones(2)"  # the statement still runs
    assert masked.split("\n")[3] == "    pass"


def test_python_that_only_looks_like_a_magic_is_left_alone():
    cell = textwrap.dedent('''\
        x = (1
             != 2)
        y = (10
             % 3)
        s = """
        !not a shell line
        %not a magic
        """
        loss = x  # twice?
        ''')
    assert strip_magics(cell) == cell


def test_cell_magics_with_python_bodies_keep_them():
    assert strip_magics("%%time\nx = 1\ny = 2") == "\nx = 1\ny = 2"
    assert strip_magics("%%bash\necho hi\nls") == "\n\n"


def test_assignment_magics_run_as_masked_and_raise_where_found(tmp_path):
    """The masked cells are Python; torch raises where the analysis says."""
    cells = ["import torch\nfiles = !ls\nnames = %who_ls",
             "r = %timeit -o -n 1 -r 1 torch.ones(2)\n" + BUG.split("\n", 1)[1]]
    findings = analyze_cells(cells, "nb.ipynb").findings
    assert [(f.code, f.location.cell, f.location.line) for f in findings] == [("GG101", 2, 5)]
    program = tmp_path / "masked.py"
    program.write_text("\n".join(strip_magics(c) for c in cells))
    proc = torchrun.run(program)
    assert "backward through the graph a second time" in proc.stderr
    assert f'masked.py", line {3 + 5}' in proc.stderr  # cell 2 starts on line 4 of the program
