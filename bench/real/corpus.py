"""Rebuilds the real-code benchmark corpus from the pinned list in ``repos.txt``.

    python bench/real/corpus.py [--dest DIR] [--mirror DIR] [--list FILE]

Each repository is checked out at its pinned commit into ``DIR/owner+name/`` (default
``bench/real/.corpus/``, ignored by git). ``--list`` names another pinned list
(``robust_repos.txt``, the robustness bench's new code, goes to ``bench/real/.corpus-new/``).
Only the code is kept: ``.py`` and ``.ipynb`` files. With ``--mirror DIR``, a repository found
as a bare clone at ``DIR/owner+name/repo`` (or ``.../repo/.git``) is taken from there; otherwise
it is fetched with git from GitHub.
A repository already present at the right commit is left as it is.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DEST = os.path.join(HERE, ".corpus")
KEEP = (".py", ".ipynb")


DEFAULT_LIST = os.path.join(HERE, "repos.txt")


def pinned(path: str = DEFAULT_LIST) -> list[tuple[str, str, str]]:
    """(owner/name, commit, kind) for every line of the list."""
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].split()
            if line:
                out.append((line[0], line[1], line[2] if len(line) > 2 else ""))
    return out


def _git_dir(mirror: str | None, repo: str) -> str | None:
    if mirror is None:
        return None
    base = os.path.join(mirror, repo.replace("/", "+"), "repo")
    for candidate in (os.path.join(base, ".git"), base):
        if os.path.isfile(os.path.join(candidate, "HEAD")):
            return candidate
    return None


def _fetch(repo: str, commit: str, scratch: str) -> str:
    """A bare git directory holding ``commit``, fetched from GitHub."""
    git_dir = os.path.join(scratch, repo.replace("/", "+") + ".git")
    subprocess.run(["git", "init", "-q", "--bare", git_dir], check=True)
    subprocess.run(["git", "--git-dir", git_dir, "fetch", "-q", "--depth", "1",
                    f"https://github.com/{repo}.git", commit], check=True)
    return git_dir


def _extract(git_dir: str, commit: str, target: str) -> int:
    """Writes the code files of ``commit`` (only those: large assets may be absent from a mirror)."""
    listing = subprocess.run(["git", "--git-dir", git_dir, "ls-tree", "-r", "-z", commit],
                             check=True, capture_output=True).stdout.decode("utf-8", "surrogateescape")
    count = 0
    for entry in filter(None, listing.split("\0")):
        meta, name = entry.split("\t", 1)
        mode, kind, blob = meta.split()
        if kind != "blob" or mode == "120000" or not name.endswith(KEEP):
            continue
        read = subprocess.run(["git", "--git-dir", git_dir, "cat-file", "blob", blob], capture_output=True)
        if read.returncode:  # a snapshot may leave out its largest files: said, not fatal
            print(f"  {name}: absent from {git_dir}", file=sys.stderr)
            continue
        data = read.stdout
        path = os.path.join(target, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        count += 1
    return count


def build(dest: str = DEFAULT_DEST, mirror: str | None = None, log=sys.stderr, listing: str = DEFAULT_LIST) -> str:
    os.makedirs(dest, exist_ok=True)
    scratch = os.path.join(dest, ".git-scratch")
    for repo, commit, _kind in pinned(listing):
        target = os.path.join(dest, repo.replace("/", "+"))
        stamp = os.path.join(target, ".commit")
        if os.path.exists(stamp) and open(stamp).read().strip() == commit:
            continue
        shutil.rmtree(target, ignore_errors=True)
        git_dir = _git_dir(mirror, repo) or _fetch(repo, commit, scratch)
        count = _extract(git_dir, commit, target)
        # a repository of its own, as a user's checkout is (tools find its root by .git)
        subprocess.run(["git", "init", "-q", target], check=True)
        with open(stamp, "w") as f:
            f.write(commit + "\n")
        print(f"{repo}@{commit[:10]}: {count} files", file=log)
    shutil.rmtree(scratch, ignore_errors=True)
    return dest


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dest", default=DEFAULT_DEST)
    parser.add_argument("--mirror", help="a folder of bare clones named owner+name/repo")
    parser.add_argument("--list", default=DEFAULT_LIST, help="the pinned list (default: repos.txt)")
    args = parser.parse_args(argv)
    build(args.dest, args.mirror, listing=args.list)
    return 0


if __name__ == "__main__":
    sys.exit(main())
