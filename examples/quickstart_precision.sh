#!/usr/bin/env bash
# The quickstart in fp32 and then in bf16 autocast, one after the other on one torch thread, each run's wall clock
# recorded (docs/scale.md, "bf16 on the CPU"): outputs in outputs/quickstart_fp32 and outputs/quickstart_bf16, and
# their quickstart_results.json and wall clocks copied to results/quickstart_precision/ (or RESULTS=...). Run it
# with nothing else on the machine: the wall clocks are the point. About 30 minutes on a 2-core AVX-512 CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
RESULTS=${RESULTS:-results/quickstart_precision}
mkdir -p "$RESULTS"
for precision in fp32 bf16; do
    bf16=$([ "$precision" = bf16 ] && echo true || echo false)
    start=$(date +%s)
    OMP_NUM_THREADS=1 BF16=$bf16 OUT="outputs/quickstart_$precision" bash examples/quickstart.sh
    seconds=$(( $(date +%s) - start ))
    printf '{"precision": "%s", "omp_num_threads": 1, "wall_clock_s": %d}\n' "$precision" "$seconds" \
        > "$RESULTS/wall_clock_$precision.json"
    cp "outputs/quickstart_$precision/quickstart_results.json" "$RESULTS/quickstart_results_$precision.json"
done
