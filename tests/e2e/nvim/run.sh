#!/usr/bin/env bash
# Neovim end-to-end test: tests/e2e/nvim/test.lua against `python -m gradguard lsp`, then the
# fixed buffer is run under torch. Environment: GRADGUARD_PYTHON (the server's Python, needs
# pygls & co; default python3, with server/ put on PYTHONPATH), GRADGUARD_E2E_TORCH_PYTHON
# (a Python with torch; default GRADGUARD_PYTHON).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
PYTHON=$(command -v "${GRADGUARD_PYTHON:-python3}") || { echo "[nvim-e2e] FAIL no Python: ${GRADGUARD_PYTHON:-python3}"; exit 1; }
TORCH_PYTHON=${GRADGUARD_E2E_TORCH_PYTHON:-$PYTHON}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$ROOT/tests/e2e/workspace/target_in_loop.py" "$tmp/"

start=$(date +%s)
PYTHONPATH="$ROOT/server${PYTHONPATH:+:$PYTHONPATH}" GRADGUARD_PYTHON="$PYTHON" \
GRADGUARD_FILE="$tmp/target_in_loop.py" GRADGUARD_OUT="$tmp/fixed.py" \
  timeout 120 nvim --headless -u NONE -i NONE -n -c "luafile $ROOT/tests/e2e/nvim/test.lua" >"$tmp/nvim.log" 2>&1 && status=0 || status=$?
grep -v '^$' "$tmp/nvim.log" || true
if [ "$status" != 0 ]; then echo "[nvim-e2e] nvim exited with $status"; exit 1; fi

if out=$(cd "$tmp" && "$TORCH_PYTHON" fixed.py 2>&1) && ! grep -q 'Trying to backward' <<<"$out"; then
  echo "[nvim-e2e] PASS the fixed buffer runs clean under torch — $(tail -n1 <<<"$out")"
else
  echo "[nvim-e2e] FAIL the fixed buffer does not run clean under torch: $out"; exit 1
fi
# The Neovim 0.7 configuration that docs/editors.md gives users, run as their init.lua.
awk '/^Neovim 0.7 and later/{f=1} f&&/^```lua/{g=1;next} g&&/^```/{exit} g' "$ROOT/docs/editors.md" > "$tmp/init.lua"
[ -s "$tmp/init.lua" ] || { echo "[nvim-e2e] FAIL no Neovim 0.7 snippet in docs/editors.md"; exit 1; }
cp "$ROOT/tests/e2e/workspace/two_losses.py" "$tmp/"
mkdir -p "$tmp/bin" && printf '#!/bin/sh\nexec "%s" "$@"\n' "$PYTHON" > "$tmp/bin/python3" && chmod +x "$tmp/bin/python3"
(cd "$tmp" && PATH="$tmp/bin:$PATH" PYTHONPATH="$ROOT/server${PYTHONPATH:+:$PYTHONPATH}" \
  timeout 60 nvim --headless -u "$tmp/init.lua" -i NONE -n -c 'filetype on' -c 'edit two_losses.py' \
  -c "luafile $ROOT/tests/e2e/nvim/snippet_check.lua" 2>&1) || { echo "[nvim-e2e] FAIL the docs snippet"; exit 1; }
# The :GradGuardGraph command docs/editors.md gives, over the same configuration.
awk '/custom request `gradguard\/graph`/{f=1} f&&/^```lua/{g=1;next} g&&/^```/{exit} g' "$ROOT/docs/editors.md" >> "$tmp/init.lua"
grep -q GradGuardGraph "$tmp/init.lua" || { echo "[nvim-e2e] FAIL no :GradGuardGraph snippet in docs/editors.md"; exit 1; }
(cd "$tmp" && PATH="$tmp/bin:$PATH" PYTHONPATH="$ROOT/server${PYTHONPATH:+:$PYTHONPATH}" \
  timeout 90 nvim --headless -u "$tmp/init.lua" -i NONE -n -c 'filetype on' -c 'edit two_losses.py' \
  -c "luafile $ROOT/tests/e2e/nvim/graph_check.lua" 2>&1) || { echo "[nvim-e2e] FAIL the :GradGuardGraph snippet"; exit 1; }
echo "[nvim-e2e] done in $(( $(date +%s) - start ))s"
