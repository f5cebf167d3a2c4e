#!/bin/sh
# Block-scaled FP8 GEMM variants side by side on the H100 (issue 17, NOTES 3.39):
# benchmarks/blockwise.py at 4096x7168x16384, 128x7168x16384, 4096x4096x7168 and
# 4096x2112x7168, every variant checked against float64 before it is timed;
# about 2-3 minutes. From the repository root, with tawa_xdsl importable (a
# device without xdsl: `source .ab/setup.sh` first, which fills /tmp/site):
#   sh scripts/bench_blockwise.sh [--variants block,overlap,cublas] [--shapes MxNxK,...]
set -e
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}:/tmp/site" PYTHONUNBUFFERED=1
exec python3 benchmarks/blockwise.py "$@"
