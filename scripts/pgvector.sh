# Sourced by scripts/test-postgres.sh: installs the pgvector extension (HNSW needs >= 0.5; iterative index scans, which
# a per-user filter needs, >= 0.8) into the local PostgreSQL server when it lacks it. Debian bookworm packages no
# pgvector for PostgreSQL 15, so it is built once from the release's sources, fetched as a module zip from the Go module
# proxy (the GitHub archive is not reachable here) and checked against a pinned sha256, then staged under
# $CADENZA_CACHE/pgvector-<version>-pg<major>; later runs only copy the staged files. Without it the tests' Postgres
# runs as a production server without the extension would: memory and discovery score vectors in process.
PGVECTOR_VERSION="0.8.0"
PGVECTOR_ZIP_SHA256="542c112013c5d0c936a741daa8c2e98fc5e28e0a5df9dcf0c1e8337236d6ab39"

# Runs a command as root (directly, or through sudo).
as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else return 1; fi
}

# $1: the server's bin directory (its pg_config says where extensions go).
ensure_pgvector() {
  local pg_config="$1/pg_config"
  [ -x "$pg_config" ] || pg_config="$(command -v pg_config || true)"
  [ -n "$pg_config" ] || { say "no pg_config: pgvector not installed (vectors are scored in process)"; return 0; }
  [ -f "$("$pg_config" --sharedir)/extension/vector--$PGVECTOR_VERSION.sql" ] && return 0
  local major stage
  major="$("$pg_config" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')"
  stage="$CADENZA_CACHE/pgvector-$PGVECTOR_VERSION-pg$major"
  if [ ! -f "$stage/.done" ]; then build_pgvector "$pg_config" "$major" "$stage" || {
    say "could not build pgvector $PGVECTOR_VERSION: the tests' Postgres has no vector extension (vectors are scored in process)"
    return 0
  }; fi
  as_root cp -r "$stage/root/." / || { say "could not install pgvector (no root): vectors are scored in process"; return 0; }
  say "pgvector $PGVECTOR_VERSION installed into PostgreSQL $major"
}

build_pgvector() {
  local pg_config="$1" major="$2" stage="$3" tmp zip
  command -v make >/dev/null && command -v gcc >/dev/null || apt_install make gcc || return 1
  [ -d "$("$pg_config" --includedir-server)" ] || apt_install "postgresql-server-dev-$major" || return 1
  say "building pgvector $PGVECTOR_VERSION for PostgreSQL $major (once, into $stage)"
  tmp="$(mktemp -d)"
  zip="$tmp/pgvector.zip"
  curl -fsSL "https://proxy.golang.org/github.com/pgvector/pgvector/@v/v$PGVECTOR_VERSION.zip" -o "$zip" || { rm -rf "$tmp"; return 1; }
  check_sha256 "$zip" "$PGVECTOR_ZIP_SHA256" || { rm -rf "$tmp"; return 1; }
  unzip -q "$zip" -d "$tmp"
  local src="$tmp/github.com/pgvector/pgvector@v$PGVECTOR_VERSION"
  # OPTFLAGS="" leaves out -march=native: the staged build may be copied to another CPU of the same architecture.
  (cd "$src" && make -s PG_CONFIG="$pg_config" OPTFLAGS="" >&2 && make -s PG_CONFIG="$pg_config" DESTDIR="$tmp/root" install >&2) ||
    { rm -rf "$tmp"; return 1; }
  rm -rf "$stage"
  mkdir -p "$stage"
  mv "$tmp/root" "$stage/root"
  touch "$stage/.done"
  rm -rf "$tmp"
}
