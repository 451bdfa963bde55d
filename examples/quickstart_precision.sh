#!/usr/bin/env bash
# The quickstart in fp32 and then in bf16 autocast, one after the other on one torch thread, each run's wall clock
# recorded (docs/scale.md, "bf16 on the CPU"): outputs in outputs/quickstart_fp32 and outputs/quickstart_bf16, and
# their quickstart_results.json, wall clocks, each run's all_results.json and gzipped per-example predictions copied
# to results/quickstart_precision/ (or RESULTS=...). Run it
# with nothing else on the machine: the wall clocks are the point. About 30 minutes on a 2-core AVX-512 CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
RESULTS=${RESULTS:-results/quickstart_precision}
mkdir -p "$RESULTS"
collect_run() {  # each run's all_results.json and gzipped per-example predictions (hf_srnets.experiments.per_example)
    for run in full_ce mask_poe_50; do
        cp "outputs/quickstart_$1/$run/all_results.json" "$RESULTS/${run}_all_results_$1.json"
        python - "outputs/quickstart_$1/$run/eval_predictions" "$RESULTS/per_example/$1/$run" <<'PY'
import os, sys
from hf_srnets.experiments.per_example import compact_rows, write_set
for name in ("mnli", "hans"):
    write_set(compact_rows(os.path.join(sys.argv[1], name + ".jsonl")), os.path.join(sys.argv[2], name + ".jsonl.gz"))
PY
    done
}
for precision in fp32 bf16; do
    bf16=$([ "$precision" = bf16 ] && echo true || echo false)
    start=$(date +%s)
    OMP_NUM_THREADS=1 BF16=$bf16 OUT="outputs/quickstart_$precision" bash examples/quickstart.sh
    seconds=$(( $(date +%s) - start ))
    printf '{"precision": "%s", "omp_num_threads": 1, "wall_clock_s": %d}\n' "$precision" "$seconds" \
        > "$RESULTS/wall_clock_$precision.json"
    cp "outputs/quickstart_$precision/quickstart_results.json" "$RESULTS/quickstart_results_$precision.json"
    collect_run "$precision"
done
