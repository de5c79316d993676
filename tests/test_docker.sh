#!/bin/sh
# test_docker.sh BUILD -- deploy/Dockerfile, read and built.
#   1. (always) the runtime stage installs the Debian package of every
#      shared library BUILD/retargetd and BUILD/retarget link (libc6,
#      libgcc-s1 and libstdc++6 aside: debian:12 has them; and a sanitizer
#      build's runtimes), and the build stage installs through
#      deploy/deps.sh, the package list `make` checks, and builds the
#      binaries the runtime stage copies;
#   2. where a container engine runs (docker or podman that answers `info`):
#      `ENGINE build -f deploy/Dockerfile .`, then the image run with its
#      port published on loopback: GET /v1/health answers, `retarget
#      --help` runs in it; the container and the image are removed.
# Skips (77) after 1 where no container engine exists or runs (saying so):
# 2 needs the engine, the debian:12 image and the Debian and npm mirrors,
# and takes minutes.
b=${1:-build}
df=deploy/Dockerfile
skip() { echo "test_docker: skipped: $1"; exit 77; }
fail() { echo "test_docker: FAILED: $1"; exit 1; }
[ -x "$b/retargetd" ] && [ -x "$b/retarget" ] || fail "no $b/retargetd or $b/retarget"

# 1. The runtime stage: everything after the last FROM.
runtime=$(awk '/^FROM /{s=""} {s=s $0 "\n"} END{printf "%s", s}' "$df")
build_stage=$(awk '/^FROM /{n++} n==1' "$df")
if command -v readelf >/dev/null 2>&1 && command -v dpkg-query >/dev/null 2>&1; then
    libs=$(readelf -d "$b/retargetd" "$b/retarget" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | sort -u)
    pkgs=""
    for l in $libs; do
        # A sanitizer build's runtimes are the test build's, not the image's.
        case $l in libasan.so* | libubsan.so* | liblsan.so* | libtsan.so*) continue ;; esac
        pkg=""
        for d in /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /lib/aarch64-linux-gnu; do
            [ -e "$d/$l" ] || continue
            real=$(readlink -f "$d/$l")
            for p in "$real" "/lib/${real#/usr/lib/}" "$d/$l"; do
                pkg=$(dpkg-query -S "$p" 2>/dev/null | head -n 1 | cut -d: -f1)
                [ -n "$pkg" ] && break
            done
            [ -n "$pkg" ] && break
        done
        [ -n "$pkg" ] || fail "no Debian package owns $l (linked by $b/retargetd or retarget)"
        case $pkg in libc6 | libgcc-s1 | libstdc++6) continue ;; esac # in debian:12 already
        echo "$runtime" | grep -qw -- "$pkg" || fail "$df: the runtime stage does not install $pkg (for $l)"
        pkgs="$pkgs $pkg"
    done
    echo "test_docker: the runtime stage installs what the binaries link:$pkgs"
else
    echo "test_docker: no readelf or dpkg-query: the runtime packages are not checked"
fi
echo "$build_stage" | grep -q 'deps.sh' || fail "$df: the build stage does not install through deploy/deps.sh"
for p in retargetd retarget; do
    echo "$build_stage" | grep -q "make .*build/cpu/$p" || fail "$df: the build stage does not make build/cpu/$p"
    echo "$runtime" | grep -q "COPY --from=build .*/src/build/cpu/$p" || fail "$df: build/cpu/$p is not copied"
done

# 2. Built and run by an engine.
engine=""
for e in docker podman; do
    command -v $e >/dev/null 2>&1 || continue
    if $e info >/dev/null 2>&1; then engine=$e; break; fi
    why="$why $e is installed but does not run ($($e info 2>&1 | grep -m1 -i -E 'cannot|error' | cut -c1-100));"
done
[ -n "$engine" ] || skip "no container engine runs here:${why:- neither docker nor podman exists}"
tag=retargetd-test:$$
cid=""
cleanup() {
    [ -n "$cid" ] && $engine rm -f "$cid" >/dev/null 2>&1
    $engine rmi -f "$tag" >/dev/null 2>&1
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
t0=$(date +%s)
$engine build -f "$df" -t "$tag" . >"$b/tests/docker_build.log" 2>&1 ||
    { tail -n 30 "$b/tests/docker_build.log"; fail "$engine build failed ($b/tests/docker_build.log)"; }
echo "test_docker: $engine build -f $df: $tag in $(($(date +%s) - t0)) s"
$engine run --rm --entrypoint retarget "$tag" --help >/dev/null 2>&1 || fail "retarget --help fails in the image"
cid=$($engine run -d -p 127.0.0.1::8080 "$tag") || fail "$engine run failed"
port=""
i=0
while :; do
    [ -z "$port" ] && port=$($engine port "$cid" 8080 2>/dev/null | sed -n 's/.*:\([0-9][0-9]*\)$/\1/p' | head -n 1)
    [ -n "$port" ] && curl -sf "http://127.0.0.1:$port/v1/health" >/dev/null 2>&1 && break
    i=$((i + 1))
    [ $i -gt 150 ] && { $engine logs "$cid" 2>&1 | tail -n 10; fail "the container did not answer /v1/health in 15 s"; }
    sleep 0.1
done
echo "test_docker: the container answers GET /v1/health on 127.0.0.1:$port"
echo "test_docker: ok"
