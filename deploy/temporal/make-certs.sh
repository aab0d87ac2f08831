#!/bin/sh
# make-certs.sh DIR [NAME...]: a self-signed CA (DIR/ca.pem) and a frontend certificate it signs (DIR/server.pem,
# DIR/server-key.pem) for localhost, 127.0.0.1 and each NAME. Cadenza trusts the CA with
# TEMPORAL_TLS_SERVER_CA_CERT_PATH; a client without it is refused. For tests and a private cluster, not a public one.
set -eu
dir="$1"
shift
mkdir -p "$dir"
san="DNS:localhost,IP:127.0.0.1"
for name in "$@"; do san="$san,DNS:$name"; done
openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=Cadenza test CA" \
  -keyout "$dir/ca-key.pem" -out "$dir/ca.pem" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout "$dir/server-key.pem" -out "$dir/server.csr" 2>/dev/null
printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\n' "$san" >"$dir/server.ext"
openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca-key.pem" -CAcreateserial -days 30 \
  -extfile "$dir/server.ext" -out "$dir/server.pem" 2>/dev/null
rm -f "$dir/server.csr" "$dir/server.ext"
