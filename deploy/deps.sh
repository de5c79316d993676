#!/bin/sh
# deps.sh -- make sure the Debian packages the build needs are installed.
# Run by `make` before compiling. As root it installs what is missing with
# apt-get; otherwise it names the missing packages and fails.
# Usage: deploy/deps.sh [extra-package...]
#        deploy/deps.sh --optional package...
# --optional is for what only some tests need (`make test` asks for the
# browser, chromium, this way): as root it installs what is missing like
# the required packages, but where that cannot be done (not root, no
# dpkg or apt-get, no repository reachable) it says so and exits 0, and the
# tests that need the package skip.
set -eu
optional=0
if [ "${1:-}" = "--optional" ]; then
    optional=1
    shift
    pkgs="$*"
else
    pkgs="gcc make pkg-config libexpat1-dev libcjson-dev libmicrohttpd-dev libsqlite3-dev \
libopenblas-dev liblapacke-dev libcurl4-openssl-dev libssl-dev libzip-dev libzstd-dev python3 python3-numpy $*"
fi
if [ $optional = 1 ] && ! command -v dpkg-query >/dev/null 2>&1; then
    echo "deps: no dpkg: not installing $pkgs (the tests that need it skip)" >&2
    exit 0
fi
missing=""
for p in $pkgs; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "deps: installing:$missing" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y --no-install-recommends $missing >/dev/null 2>&1 || {
        apt-get update >/dev/null 2>&1 || true
        apt-get install -y --no-install-recommends $missing || {
            [ $optional = 1 ] || exit 1
            echo "deps: could not install$missing (the tests that need it skip)" >&2
        }
    }
elif [ $optional = 1 ]; then
    echo "deps: optional Debian packages missing:$missing (the tests that need them skip; as root: apt-get install$missing)" >&2
else
    echo "deps: missing Debian packages:$missing (run make as root, or: sudo apt-get install$missing)" >&2
    exit 1
fi
