#!/bin/sh
# web.sh OUTDIR OUT.c -- builds the web page (web/) into OUTDIR and embeds
# its files into OUT.c (deploy/embed.sh --keep-ext, table srv_ui_files,
# served by server/ui.c). Run by make.
#   1. web/node_modules from web/package-lock.json with `npm ci` (from the npm
#      registry; again only when the lock file is newer than the install);
#   2. `node web/build.mjs OUTDIR`: esbuild bundles web/src/ into
#      OUTDIR/index.html, app-HASH.js and app-HASH.css.
# Where npm or node is absent, or `npm ci` fails (no registry), OUTDIR gets a
# placeholder index.html that says how to build the page, and
# OUTDIR/.placeholder, which makes the next make try again; the daemon then
# serves that page and tests/test_browser.sh skips. A failing esbuild (an
# error in web/src/) fails the build.
set -eu
[ $# -eq 2 ] || { echo "usage: web.sh OUTDIR OUT.c" >&2; exit 2; }
out=$1; gen=$2

placeholder() {
    echo "web: the web page is not built: $1." >&2
    echo "web: the daemon serves a page saying so; install Node.js (18 or later) and npm, then run make again." >&2
    rm -rf "$out"; mkdir -p "$out"
    cat >"$out/index.html" <<HTML
<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>retargetd</title><link rel="icon" href="data:,"></head>
<body style="font-family: sans-serif; max-width: 40em; margin: 3em auto">
<h1>retargetd</h1>
<p>This retargetd was built without its web page: $1.</p>
<p>To build it, install Node.js (18 or later) and npm and run <code>make</code> again in the
source tree: it installs the page's packages (<code>npm ci</code> in <code>web/</code>, from
<code>web/package-lock.json</code>) and bundles <code>web/src/</code> with esbuild into the daemon.</p>
<p>The HTTP API is served as usual under <a href="/v1/health">/v1</a> (see docs/api.md).</p>
</body></html>
HTML
    : >"$out/.placeholder"
}

if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
    placeholder "npm or node was not found when it was built"
else
    built=1
    if [ ! -f web/node_modules/.package-lock.json ] || [ web/package-lock.json -nt web/node_modules/.package-lock.json ]; then
        echo "web: npm ci in web/" >&2
        # --ignore-scripts: no package needs its install script (esbuild's
        # binary comes as the optional package @esbuild/linux-x64).
        (cd web && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2) || {
            built=0
            placeholder "npm ci in web/ failed (is the npm registry reachable?)"
        }
    fi
    [ $built = 1 ] && node web/build.mjs "$out" >&2
fi
# The files to embed: OUTDIR's plain files, not the dot files.
files=$(find "$out" -maxdepth 1 -type f ! -name '.*' | LC_ALL=C sort)
sh deploy/embed.sh --keep-ext srv_ui_files "$gen" $files
