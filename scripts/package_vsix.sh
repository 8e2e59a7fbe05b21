#!/usr/bin/env bash
# Builds the GradGuard VS Code extension: dist/gradguard-<version>-linux-x64.vsix (`npm run package`).
#
# The .vsix carries everything the server needs except Python itself:
#   out/extension.js        the client, bundled by esbuild (vscode-languageclient inside)
#   bundled/tool/gradguard  a copy of server/gradguard
#   bundled/libs            the server's pure-Python dependencies (pygls, lsprotocol, cattrs, attrs,
#                           jedi, parso, ...) from pyproject.toml, resolved for CPython 3.10 so the
#                           back-ports (tomli, exceptiongroup) are there for 3.10 too
#   bundled/libs-cp3XX      libcst (compiled) for each supported CPython minor, linux x86-64;
#                           the client puts the one matching the interpreter first on PYTHONPATH
# Hence a platform-specific package (vsce --target linux-x64). See docs/editors.md.
# --allow-package-all-secrets: vsce's secret scan takes ~5 min over the ~7000 bundled library files.
# Needs: node_modules (npm ci), python3 >= 3.11 with pip, the PyPI registry (or a warm pip cache).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TARGET=${GRADGUARD_VSIX_TARGET:-linux-x64}
PY_MINORS=${GRADGUARD_PY_MINORS:-"10 11 12 13"}
PYTHON=${PYTHON:-python3}
STAGE=$ROOT/build/vsix
OUT_DIR=$ROOT/dist
log() { printf '[package] %s\n' "$*" >&2; }

case "$TARGET" in
  linux-x64) PLATFORMS=(--platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64) ;;
  linux-arm64) PLATFORMS=(--platform manylinux2014_aarch64 --platform manylinux_2_28_aarch64) ;;
  *) echo "unsupported target $TARGET" >&2; exit 2 ;;
esac

cd "$ROOT"
rm -rf "$STAGE" && mkdir -p "$STAGE/bundled" "$OUT_DIR"

log "client: tsc --noEmit, esbuild"
npx --no-install tsc --noEmit -p .
node esbuild.js --production --outdir "$STAGE/out"

log "manifest"
node -e '
  const m = require("./package.json");
  for (const k of ["scripts", "devDependencies", "dependencies"]) delete m[k];
  require("fs").writeFileSync(process.argv[1], JSON.stringify(m, null, 2) + "\n");
' "$STAGE/package.json"
cp client/README.md "$STAGE/README.md"
cp .vscodeignore "$STAGE/.vscodeignore"

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
PIP=("$PYTHON" -m pip install --quiet --disable-pip-version-check --no-compile --only-binary :all: --implementation cp "${PLATFORMS[@]}")

log "bundled/libs: ${PURE[*]} (resolved for CPython 3.10)"
"${PIP[@]}" --python-version 3.10 --target "$STAGE/bundled/libs" "${PURE[@]}"
for v in $PY_MINORS; do
  log "bundled/libs-cp3$v: ${COMPILED[*]}"
  "${PIP[@]}" --python-version "3.$v" --target "$STAGE/bundled/libs-cp3$v" "${COMPILED[@]}"
done
# Pure-Python files must not hide behind compiled ones: keep in libs only what is pure.
if find "$STAGE/bundled/libs" -name '*.so' | grep -q .; then
  echo "bundled/libs has compiled files:" >&2; find "$STAGE/bundled/libs" -name '*.so' >&2; exit 1
fi
find "$STAGE/bundled" -name '__pycache__' -type d -prune -exec rm -rf {} +
rm -rf "$STAGE"/bundled/*/bin

log "bundled/tool: server/gradguard"
mkdir -p "$STAGE/bundled/tool"
cp -r server/gradguard "$STAGE/bundled/tool/gradguard"
find "$STAGE/bundled/tool" -name '__pycache__' -type d -prune -exec rm -rf {} +

version=$(node -p 'require("./package.json").version')
vsix=$OUT_DIR/gradguard-$version-$TARGET.vsix
log "vsce package --target $TARGET"
(cd "$STAGE" && "$ROOT/node_modules/.bin/vsce" package --no-dependencies --target "$TARGET" \
    --skip-license --allow-missing-repository --allow-package-all-secrets --out "$vsix" >/dev/null)
log "built $vsix ($(du -h "$vsix" | cut -f1))"
echo "$vsix"
