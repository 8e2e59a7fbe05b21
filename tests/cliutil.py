"""Running ``gradguard check`` from the working tree in a subprocess, for the CLI tests."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# Where the package under test is imported from: the working tree, or the installed wheel's
# folder when scripts/test.sh runs the suite on the wheel (GRADGUARD_TEST_SITE).
SERVER = Path(os.environ.get("GRADGUARD_TEST_SITE") or REPO / "server")
TIMEOUT = 300

BUGGY = (
    "import torch\n"
    "x = torch.ones(2, requires_grad=True)\n"
    "y = x * 2\n"
    "y.sum().backward()\n"
    "y.sum().backward()\n"
)
BUGGY_LINE = 5
CLEAN = (
    "import torch\n"
    "x = torch.ones(2, requires_grad=True)\n"
    "for _ in range(3):\n"
    "    y = x * 2\n"
    "    y.sum().backward()\n"
)
#: GG102 only: ``x + 1`` saves no tensors, walking it twice does not raise
WARN = "import torch\nx = torch.ones(2, requires_grad=True)\ny = x + 1\ny.sum().backward()\ny.sum().backward()\n"


def env() -> dict:
    out = dict(os.environ)
    out["PYTHONPATH"] = os.pathsep.join(p for p in (str(SERVER), out.get("PYTHONPATH", "")) if p)
    out["PYTHONIOENCODING"] = "utf-8"
    return out


def run_check(*args, cwd, timeout: int = TIMEOUT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gradguard", "check", *map(str, args)], cwd=str(cwd), env=env(),
                          capture_output=True, text=True, encoding="utf-8", errors="replace", timeout=timeout,
                          stdin=subprocess.DEVNULL)


def findings(stdout: str, code: str | None = None) -> list[tuple[str, int, str]]:
    """(file name, line, code) of each ``path:line:col: CODE message`` line."""
    out = []
    for ln in stdout.splitlines():
        m = re.match(r"^(.*?):(?:cell \d+:)?(\d+):(\d+): (GG\d{3}) ", ln)
        if m and (code is None or m.group(4) == code):
            out.append((Path(m.group(1)).name, int(m.group(2)), m.group(4)))
    return out
