#!/usr/bin/env bash
# Neovim end-to-end test: tests/e2e/nvim/test.lua against `python -m gradguard lsp`, then the
# fixed buffer is run under torch. Environment: GRADGUARD_PYTHON (the server's Python, needs
# pygls & co; default python3, with server/ put on PYTHONPATH), GRADGUARD_E2E_TORCH_PYTHON
# (a Python with torch; default GRADGUARD_PYTHON).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
PYTHON=${GRADGUARD_PYTHON:-python3}
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
echo "[nvim-e2e] done in $(( $(date +%s) - start ))s"
