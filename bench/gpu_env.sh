#!/bin/sh
# gpu_env.sh -- sourced (`. bench/gpu_env.sh`) by the lent-GPU scripts
# (bench/gpu_*.sh), run from the repository root: unpacks the Debian
# libraries carried in .debs that the GPU machine lacks (libcjson1,
# libmicrohttpd12, libzip4) into /tmp/debs, never into /, puts them on the
# library path, and points the programs at the shared data carried in
# .gpudata (../shared/GPU.md).
mkdir -p /tmp/debs
for f in .debs/*.deb; do dpkg -x "$f" /tmp/debs; done
export LD_LIBRARY_PATH=/tmp/debs/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export RT_SHARED_DATA="$PWD/.gpudata"
