#!/usr/bin/env bash
# Builds the GradGuard VS Code extension, one platform-specific .vsix per target (`npm run package`):
#   dist/gradguard-<version>-<target>.vsix  for linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64
#
# Usage: bash scripts/package_vsix.sh [TARGET ...]      (default: all five; or GRADGUARD_VSIX_TARGETS)
#
# Each .vsix carries everything the server needs except Python itself:
#   out/extension.js        the client, bundled by esbuild (vscode-languageclient inside)
#   bundled/tool/gradguard  a copy of server/gradguard
#   bundled/libs            the server's pure-Python dependencies (pygls, lsprotocol, cattrs, attrs,
#                           jedi, parso, pathspec, ...) from pyproject.toml, resolved for CPython 3.10
#                           so the back-ports (tomli, exceptiongroup) are there for 3.10 too; the same
#                           files for every target
#   bundled/libs-cp3XX      libcst (compiled) and its dependencies for each supported CPython minor,
#                           built for the target's platform; the client puts the one matching the
#                           interpreter first on PYTHONPATH
# The platform wheels are fetched with `pip download --platform` (as Ruff and Microsoft's Python-tool
# extensions ship per-platform builds) into ~/.cache/gradguard/vsix-wheels/ (GRADGUARD_VSIX_WHEELS),
# which later runs reuse as they are (GRADGUARD_VSIX_REFRESH=1 asks the registry for newer versions).
# --allow-package-all-secrets --allow-package-env-file: vsce's secret and .env scans take ~50 CPU-s
# per package over the ~7000 bundled library files (ours and PyPI's, with no secrets or .env in them;
# tests/test_packaging.py checks there is no .env); with both it packs one in ~10 s.
# Needs: node_modules (npm ci), python3 >= 3.11 with pip, the PyPI registry (or the wheel cache filled).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ALL_TARGETS="linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64"
if [ $# -gt 0 ]; then TARGETS="$*"; else TARGETS=${GRADGUARD_VSIX_TARGETS:-$ALL_TARGETS}; fi
PY_MINORS=${GRADGUARD_PY_MINORS:-"10 11 12 13"}
# The interpreter itself, not a version manager's shim: pyenv's shim rehashes after every
# `pip install`, and the targets install in parallel (a race that failed a build).
PYTHON=$("${PYTHON:-python3}" -c 'import sys; print(sys.executable)')
BUILD=$ROOT/build
# Outside the checkout, so that a fresh clone on the same machine (CI) reuses the downloads.
WHEELS=${GRADGUARD_VSIX_WHEELS:-${XDG_CACHE_HOME:-$HOME/.cache}/gradguard/vsix-wheels}
OUT_DIR=$ROOT/dist
log() { printf '[package] %s\n' "$*" >&2; }

# The pip platform tags of a VS Code target. pip also accepts wheels of older compatible tags
# (manylinux2014 for manylinux_2_28, macOS 10.x for 11.0, ...).
platforms() {
  case "$1" in
    linux-x64) echo "--platform manylinux_2_28_x86_64" ;;
    linux-arm64) echo "--platform manylinux_2_28_aarch64" ;;
    darwin-x64) echo "--platform macosx_11_0_x86_64" ;;
    darwin-arm64) echo "--platform macosx_11_0_arm64" ;;
    win32-x64) echo "--platform win_amd64" ;;
    *) echo "unsupported target $1 (supported: $ALL_TARGETS)" >&2; return 2 ;;
  esac
}
for target in $TARGETS; do platforms "$target" >/dev/null; done

cd "$ROOT"
mkdir -p "$OUT_DIR" "$WHEELS"

log "client: tsc --noEmit, esbuild"
npx --no-install tsc --noEmit -p .
CLIENT=$BUILD/vsix-client
rm -rf "$CLIENT" && node esbuild.js --production --outdir "$CLIENT/out"

# Dependencies as pyproject.toml declares them, split into pure-Python ones and libcst.
mapfile -t DEPS < <("$PYTHON" - <<'PY'
import re, tomllib
deps = tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]
for d in deps:
    print(re.sub(r"\s*;.*$", "", d))  # the markers are for the interpreter running pip, not the user's
PY
)
PURE=(); COMPILED=()
for d in "${DEPS[@]}"; do
  case "$d" in libcst*) COMPILED+=("$d") ;; *) PURE+=("$d") ;; esac
done
# pip evaluates dependency markers for the Python running it, not --python-version: name the
# back-ports that cattrs needs on 3.10 (they are unused on newer Pythons).
PURE+=(exceptiongroup typing_extensions)
export PIP_ROOT_USER_ACTION=ignore
PIP=("$PYTHON" -m pip --disable-pip-version-check)

# pip download: fetch (or find already fetched) the wheels for one platform and CPython minor.
fetch() {  # fetch DEST PYVERSION PLATFORM-ARGS... -- REQUIREMENTS...
  local dest=$1 version=$2; shift 2
  local args=(); while [ "$1" != "--" ]; do args+=("$1"); shift; done; shift
  mkdir -p "$dest"
  # everything already there from an earlier build? (GRADGUARD_VSIX_REFRESH=1 asks for newer ones)
  if [ -z "${GRADGUARD_VSIX_REFRESH:-}" ] && "${PIP[@]}" download --quiet --no-index --find-links "$dest" \
      --only-binary :all: --implementation cp --python-version "$version" "${args[@]}" --dest "$dest" "$@" 2>/dev/null; then
    return 0
  fi
  "${PIP[@]}" download --quiet --only-binary :all: --implementation cp --python-version "$version" \
    "${args[@]}" --dest "$dest" "$@"
}
install_from() {  # install_from WHEEL-DIR TARGET-DIR PYVERSION PLATFORM-ARGS... -- REQUIREMENTS...
  local wheels=$1 into=$2 version=$3; shift 3
  local args=(); while [ "$1" != "--" ]; do args+=("$1"); shift; done; shift
  "${PIP[@]}" install --quiet --no-index --find-links "$wheels" --no-compile --only-binary :all: \
    --implementation cp --python-version "$version" "${args[@]}" --target "$into" "$@"
}

log "bundled/libs: ${PURE[*]} (resolved for CPython 3.10, shared by every target)"
PURE_DIR=$BUILD/vsix-pure
rm -rf "$PURE_DIR"
fetch "$WHEELS/pure" 3.10 $(platforms linux-x64) -- "${PURE[@]}"
install_from "$WHEELS/pure" "$PURE_DIR" 3.10 $(platforms linux-x64) -- "${PURE[@]}"
# Only what the server runs: jedi's typeshed stubs of third-party packages (4300 files; GradGuard
# asks jedi where modules are, never about braintree's or networkx's types) would be most of the
# package (vsce warns past 5000 files).
rm -rf "$PURE_DIR/jedi/third_party/typeshed/stubs"
# Pure-Python files must not hide behind compiled ones: keep in libs only what is pure.
if find "$PURE_DIR" -name '*.so' -o -name '*.pyd' | grep -q .; then
  echo "bundled/libs has compiled files:" >&2; find "$PURE_DIR" -name '*.so' -o -name '*.pyd' >&2; exit 1
fi

# One version: gradguard.__version__ (pyproject.toml reads it too); package.json must say the same.
version=$(PYTHONPATH=server "$PYTHON" -c 'import gradguard; print(gradguard.__version__)')
if [ "$(node -p 'require("./package.json").version')" != "$version" ]; then
  echo "package.json's version is not gradguard.__version__ ($version)" >&2; exit 1
fi
build_target() {
  local target=$1 v
  local STAGE=$BUILD/vsix-$target
  rm -rf "$STAGE" && mkdir -p "$STAGE/bundled"
  cp -r "$CLIENT/out" "$STAGE/out"
  node -e '
    const m = require("./package.json");
    for (const k of ["scripts", "devDependencies", "dependencies"]) delete m[k];
    require("fs").writeFileSync(process.argv[1], JSON.stringify(m, null, 2) + "\n");
  ' "$STAGE/package.json"
  cp client/README.md "$STAGE/README.md"
  cp CHANGELOG.md LICENSE "$STAGE/"
  mkdir -p "$STAGE/client" && cp client/icon.png "$STAGE/client/icon.png"
  cp .vscodeignore "$STAGE/.vscodeignore"
  cp -r "$PURE_DIR" "$STAGE/bundled/libs"
  for v in $PY_MINORS; do
    log "$target: bundled/libs-cp3$v: ${COMPILED[*]}"
    install_from "$WHEELS/$target/cp3$v" "$STAGE/bundled/libs-cp3$v" "3.$v" $(platforms "$target") -- "${COMPILED[@]}"
  done
  find "$STAGE/bundled" -name '__pycache__' -type d -prune -exec rm -rf {} +
  find "$STAGE"/bundled/libs-cp3*/libcst -name tests -type d -prune -exec rm -rf {} +  # libcst's own tests
  rm -rf "$STAGE"/bundled/*/bin

  mkdir -p "$STAGE/bundled/tool"
  cp -r server/gradguard "$STAGE/bundled/tool/gradguard"
  find "$STAGE/bundled/tool" -name '__pycache__' -type d -prune -exec rm -rf {} +

  local vsix=$OUT_DIR/gradguard-$version-$target.vsix
  log "$target: vsce package"
  # a warning (no repository, icon, LICENSE, an image the marketplace will not show, ...) fails
  # the build: the packages are published as built
  (cd "$STAGE" && "$ROOT/node_modules/.bin/vsce" package --no-dependencies --target "$target" \
      --allow-package-all-secrets --allow-package-env-file --out "$vsix" </dev/null >"$STAGE.log" 2>&1) ||
    { cat "$STAGE.log" >&2; return 1; }
  if grep -qi 'warn' "$STAGE.log"; then
    cat "$STAGE.log" >&2; log "$target: vsce warned"; return 1
  fi
  log "built $vsix ($(du -h "$vsix" | cut -f1))"
}

# Downloads first, one after the other (pip's cache is not made for concurrent writers) ...
for target in $TARGETS; do
  for v in $PY_MINORS; do
    fetch "$WHEELS/$target/cp3$v" "3.$v" $(platforms "$target") -- "${COMPILED[@]}"
  done
done
# ... then the packages side by side: zipping ~7000 files each is most of the time.
pids=()
for target in $TARGETS; do
  build_target "$target" & pids+=($!)
done
failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
[ "$failed" = 0 ] || { echo "a package failed to build" >&2; exit 1; }
for target in $TARGETS; do echo "$OUT_DIR/gradguard-$version-$target.vsix"; done
