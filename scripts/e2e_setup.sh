#!/usr/bin/env bash
# Installs what the editor end-to-end tests (tests/e2e/) need on a fresh Debian 12 machine:
#   - Debian packages: chromium (driven by playwright-core), neovim (0.7), ripgrep, and what
#     code-server's native modules build with (libkrb5-dev, build-essential, pkg-config);
#   - the extension's npm dependencies (npm ci from package-lock.json);
#   - code-server 4.100.3 (a real VS Code 1.100 on Node 20) into $GRADGUARD_E2E_CACHE
#     (default: <repo>/.e2e/code-server);
#   - JupyterLab with jupyterlab-lsp and GradGuard (editable, `.[jupyter]`) in a virtual
#     environment of their own, $GRADGUARD_E2E_CACHE/jupyter-venv, and client/jupyterlab's
#     extension (gradguard-jupyterlab) built and installed into it.
# Idempotent: each step is skipped when its result is already there (a second run takes ~1 s).
# Needs root (or sudo) for apt-get; no network besides the Debian and npm registries.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${GRADGUARD_E2E_CACHE:-$ROOT/.e2e}
CODE_SERVER_VERSION=4.100.3
CS_PREFIX=$CACHE/code-server-$CODE_SERVER_VERSION
log() { printf '[e2e_setup] %s\n' "$*" >&2; }

SUDO=
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi

# 1. Debian packages.
PKGS=(chromium neovim ripgrep libkrb5-dev build-essential pkg-config python3 python3-venv ca-certificates)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "apt-get install ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  log "Debian packages present"
fi

# 2. The extension's own npm dependencies (esbuild, typescript, vsce, playwright-core, ...).
cd "$ROOT"
stamp=node_modules/.gradguard-lock.sha256
if [ "$(cat "$stamp" 2>/dev/null)" != "$(sha256sum package-lock.json | cut -d' ' -f1)" ]; then
  log "npm ci"
  npm ci --no-audit --no-fund --loglevel=error
  sha256sum package-lock.json | cut -d' ' -f1 > "$stamp"
else
  log "node_modules matches package-lock.json"
fi

# 3. code-server into the cache directory.
if [ -x "$CS_PREFIX/bin/code-server" ] && "$CS_PREFIX/bin/code-server" --version >/dev/null 2>&1; then
  log "code-server $CODE_SERVER_VERSION present in $CS_PREFIX"
else
  log "installing code-server $CODE_SERVER_VERSION into $CS_PREFIX (about a minute)"
  mkdir -p "$CACHE"
  # @vscode/ripgrep downloads rg from GitHub unless its cache already holds the tarball:
  # give it Debian's rg under the name this code-server version asks for.
  tmp=${TMPDIR:-/tmp}
  rgcache=$tmp/vscode-ripgrep-cache-1.15.11
  rgtar=$rgcache/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz
  if [ ! -s "$rgtar" ]; then
    mkdir -p "$rgcache"
    d=$(mktemp -d); cp "$(command -v rg)" "$d/rg"; tar -C "$d" -czf "$rgtar" rg; rm -rf "$d"
  fi
  rm -rf "$CS_PREFIX"
  # unsafe_perm: code-server's postinstall refuses root otherwise; yes: node-pty runs `npx node-gyp`;
  # nodedir: Debian keeps Node's headers in /usr/include/node; npm 11 blocks dependency install
  # scripts unless allowed, and code-server's postinstall runs nested npm installs that need them.
  # A local (not -g) install: a global one leaks npm_config_global into the nested installs.
  mkdir -p "$CS_PREFIX" && echo '{"name":"gradguard-e2e-code-server","private":true}' > "$CS_PREFIX/package.json"
  (cd "$CS_PREFIX" && npm_config_unsafe_perm=true npm_config_yes=true npm_config_nodedir=/usr \
    npm_config_dangerously_allow_all_scripts=true \
    npm install --no-audit --no-fund --no-package-lock --loglevel=error "code-server@$CODE_SERVER_VERSION")
  mkdir -p "$CS_PREFIX/bin" && ln -sfn ../node_modules/.bin/code-server "$CS_PREFIX/bin/code-server"
  "$CS_PREFIX/bin/code-server" --version >/dev/null
fi
ln -sfn "$CS_PREFIX" "$CACHE/code-server"

# 4. JupyterLab + jupyterlab-lsp, pinned, with GradGuard editable: jupyter-lsp finds it through
# its entry point (pyproject.toml), as it would in a user's environment.
JUPYTER_PINS=(jupyterlab==4.6.6 jupyterlab-lsp==5.3.0 jupyter-lsp==2.3.1)
JVENV=$CACHE/jupyter-venv
jstamp=$JVENV/.gradguard-setup.sha256
jsum=$( { sha256sum pyproject.toml; echo "${JUPYTER_PINS[*]}"; } | sha256sum | cut -d' ' -f1)
if [ -x "$JVENV/bin/jupyter-lab" ] && [ "$(cat "$jstamp" 2>/dev/null)" = "$jsum" ]; then
  log "JupyterLab venv present in $JVENV"
else
  log "installing JupyterLab and jupyterlab-lsp into $JVENV (about a minute)"
  [ -x "$JVENV/bin/python" ] || python3 -m venv "$JVENV"
  "$JVENV/bin/python" -m pip install --quiet --disable-pip-version-check -e ".[jupyter]" "${JUPYTER_PINS[@]}"
  echo "$jsum" > "$jstamp"
fi

# 5. gradguard-jupyterlab (client/jupyterlab: GradGuard's quick fixes in notebook cells), built
# against that JupyterLab and installed into it as a prebuilt extension.
EXT=$ROOT/client/jupyterlab
EXT_DEST=$JVENV/share/jupyter/labextensions/gradguard-jupyterlab
estamp=$JVENV/.gradguard-jupyterlab.sha256
esum=$(cd "$EXT" && cat package.json package-lock.json tsconfig.json src/*.ts "$jstamp" | sha256sum | cut -d' ' -f1)
if [ -f "$EXT_DEST/package.json" ] && [ "$(cat "$estamp" 2>/dev/null)" = "$esum" ]; then
  log "gradguard-jupyterlab present in $EXT_DEST"
else
  log "building gradguard-jupyterlab into $EXT_DEST (about 40 s)"
  (cd "$EXT" && npm ci --no-audit --no-fund --loglevel=error && PYTHON=$JVENV/bin/python npm run --silent build >/dev/null)
  rm -rf "$EXT_DEST" && cp -r "$EXT/labextension" "$EXT_DEST"
  echo "$esum" > "$estamp"
fi
log "ready: $CACHE/code-server/bin/code-server, /usr/bin/chromium, $(command -v nvim), $JVENV/bin/jupyter-lab (with gradguard-jupyterlab)"
