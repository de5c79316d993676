#!/bin/sh
# deps.sh -- make sure the Debian packages the build needs are installed.
# Run by `make` before compiling. As root it installs what is missing with
# apt-get; otherwise it names the missing packages and fails.
# Usage: deploy/deps.sh [extra-package...]
set -eu
pkgs="gcc make pkg-config libexpat1-dev libcjson-dev libmicrohttpd-dev libsqlite3-dev \
libopenblas-dev liblapacke-dev libcurl4-openssl-dev python3 $*"
missing=""
for p in $pkgs; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
    echo "deps: installing:$missing" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y --no-install-recommends $missing >/dev/null 2>&1 || {
        apt-get update >/dev/null 2>&1
        apt-get install -y --no-install-recommends $missing
    }
else
    echo "deps: missing Debian packages:$missing (run make as root, or: sudo apt-get install$missing)" >&2
    exit 1
fi
