"""Fuzz inputs for the analyser: mutations of the fixture programs, and how one input is judged.

Shared by tests/test_fuzz.py (a few seconds' worth) and bench/fuzz.py (the full count). The
generated programs come from hypothesmith (a Hypothesis strategy for Python source).
"""
from __future__ import annotations

import random
import re
import resource
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def seeds() -> list[str]:
    """The fixture programs: real-looking PyTorch code with and without bugs."""
    return [p.read_text(encoding="utf-8") for p in sorted(FIXTURES.glob("*.py"))]


def _lines(text: str) -> list[str]:
    return text.split("\n")


def delete_line(text: str, rng: random.Random) -> str:
    lines = _lines(text)
    del lines[rng.randrange(len(lines))]
    return "\n".join(lines)


def duplicate_line(text: str, rng: random.Random) -> str:
    lines = _lines(text)
    i = rng.randrange(len(lines))
    lines.insert(i, lines[i])
    return "\n".join(lines)


def swap_lines(text: str, rng: random.Random) -> str:
    lines = _lines(text)
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[i], lines[j] = lines[j], lines[i]
    return "\n".join(lines)


def truncate(text: str, rng: random.Random) -> str:
    return text[:rng.randrange(len(text) + 1)]


def reindent(text: str, rng: random.Random) -> str:
    lines = _lines(text)
    i = rng.randrange(len(lines))
    lines[i] = (" " * rng.choice((0, 4, 8))) + lines[i].lstrip()
    return "\n".join(lines)


def deep_nesting(text: str, rng: random.Random) -> str:
    """Wrap a top-level statement line in many nested loops and branches (the cost of a
    fixpoint grows with loop depth)."""
    lines = _lines(text)
    top = [i for i, line in enumerate(lines) if line and not line[0].isspace() and not line.startswith(("#", "@"))
           and not line.rstrip().endswith((":", "(", "[", "{", ",", "\\"))]
    if not top:
        return text
    i = rng.choice(top)
    depth = rng.randint(5, 40)
    heads = [rng.choice(("for _i{n} in range(2):", "while x{n}:", "if c{n}:", "with ctx{n}:", "try:"))
             for _ in range(depth)]
    block, tails = [], []
    for n, head in enumerate(heads):
        block.append("    " * n + head.format(n=n))
        if head == "try:":
            tails.append("    " * n + "except Exception:\n" + "    " * (n + 1) + "pass")
    block.append("    " * depth + lines[i])
    lines[i:i + 1] = block + tails[::-1]
    return "\n".join(lines)


def long_line(text: str, rng: random.Random) -> str:
    lines = _lines(text)
    terms = rng.randint(100, 3000)
    lines.insert(rng.randrange(len(lines) + 1), "z = " + " + ".join(f"v{n % 7}" for n in range(terms)))
    return "\n".join(lines)


def long_chain(text: str, rng: random.Random) -> str:
    """A method chain on a tensor from the program, then a backward through it."""
    names = re.findall(r"^(\w+) = ", text, re.M) or ["x"]
    name = rng.choice(names)
    chain = "".join(f".mul({n})" for n in range(rng.randint(50, 400)))
    return text + f"\nchained = {name}{chain}\nchained.sum().backward()\n"


def recursion(text: str, rng: random.Random) -> str:
    """Functions that call themselves and each other, around a backward."""
    names = re.findall(r"^(\w+) = ", text, re.M) or ["x"]
    name = rng.choice(names)
    return text + (f"\n\ndef ping(n):\n    return pong(n - 1) * {name} if n else {name}\n\n"
                   f"def pong(n):\n    return ping(n - 1) + ping(n - 2)\n\n"
                   f"def self_call(n):\n    return self_call(n) + self_call(n + 1)\n\n"
                   f"ping(30).sum().backward()\nself_call(1).sum().backward()\n")


MUTATIONS: dict[str, Callable[[str, random.Random], str]] = {
    f.__name__: f for f in (delete_line, duplicate_line, swap_lines, truncate, reindent, deep_nesting,
                            long_line, long_chain, recursion)
}


def mutants(count: int, seed: int = 0):
    """``count`` (name, program) pairs: one to three mutations of a random fixture each."""
    rng = random.Random(seed)
    programs = seeds()
    for n in range(count):
        text = rng.choice(programs)
        names = rng.sample(sorted(MUTATIONS), rng.randint(1, 3))
        for name in names:
            text = MUTATIONS[name](text, rng)
        yield f"mutant {n} ({'+'.join(names)})", text


@dataclass
class Verdict:
    name: str
    outcome: str  # "ok", "refused" (SourceError: a clear message), "crash", "hang"
    seconds: float  # CPU time
    detail: str = ""


class _OverTime(BaseException):
    """Raised by the CPU-time alarm; not an Exception, so the analyser cannot swallow it."""


def _alarm(signum, frame):
    raise _OverTime()


def judge(name: str, text: str, directory: str, limit: Optional[float] = None) -> Verdict:
    """Analyse ``text`` as a file in ``directory``: a crash is any exception but SourceError; a
    hang is over ``limit`` CPU-seconds (measured with a profiling timer, so it stops the run)."""
    from gradguard.analysis import analyze_source
    from gradguard.sources import SourceError

    use_timer = limit is not None and hasattr(signal, "setitimer")
    if use_timer:
        previous = signal.signal(signal.SIGPROF, _alarm)
        signal.setitimer(signal.ITIMER_PROF, limit)
    start = time.process_time()
    try:
        analysis = analyze_source(text, f"{directory}/fuzz.py", directory, facts=True)
        analysis.fact_at(1, 1)
        verdict = Verdict(name, "ok", 0.0)
    except SourceError as exc:
        verdict = Verdict(name, "refused", 0.0, exc.message)
    except _OverTime:
        verdict = Verdict(name, "hang", 0.0, f"over {limit} CPU-s")
    except Exception as exc:  # noqa: BLE001 - that is what is being looked for
        verdict = Verdict(name, "crash", 0.0, f"{type(exc).__name__}: {exc}"[:300])
    finally:
        if use_timer:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.signal(signal.SIGPROF, previous)
    verdict.seconds = time.process_time() - start
    return verdict


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
