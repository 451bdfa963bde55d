#!/usr/bin/env bash
# The RMC comparison at equal budgets (examples/rmc_large_minilm_mnli_equal.yaml): the six IMP-family methods
# re-run for 308 steps, as head pruning and the SRNet trained, then every table regenerated from committed
# per-example outputs. Needs the original sweep's teacher, bias model and stage 1 (examples/rmc_large_minilm_mnli.sh,
# steps 1-3). The original heads20_ce and mask_poe runs (308 steps already) are copied in when present, so only the
# 18 IMP-family runs train; without them they are run again. Extra arguments go to run_sweep.py.
set -euo pipefail
cd "$(dirname "$0")/.."
export DATA_DIR=${DATA_DIR:-../shared/data}
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
OLD=outputs/rmc_large_minilm_mnli
OUT=outputs/rmc_large_minilm_mnli_equal
RESULTS=results/rmc_large_minilm_mnli_equal
for need in "$OLD/teacher/all_results.json" "$OLD/difficulty/difficulty.jsonl" "$OLD/bias/bias_train.jsonl"; do
  [ -f "$need" ] || { echo "error: $need not found: run examples/rmc_large_minilm_mnli.sh first (its steps 1-3)" >&2; exit 2; }
done
mkdir -p "$OUT"
for method in heads20_ce mask_poe; do  # the 308-step runs of the original sweep, same settings
  [ -d "$OLD/$method" ] && [ ! -d "$OUT/$method" ] && cp -r "$OLD/$method" "$OUT/$method"
done
for seeds in 42 42,43,44; do
  python run_sweep.py examples/rmc_large_minilm_mnli_equal.yaml --seeds "$seeds" --checkpoint_steps 50 "$@"
done
mkdir -p "$RESULTS"
# The teacher joins as the reference of F_bias (Δ_model / Δ_teacher) and as a row of its own.
python -m hf_srnets.commands.report "$RESULTS" --collect_from "$OUT" --baseline imp_vanilla --reference teacher \
    --extra_run "teacher=$OLD/teacher" \
    --metrics eval_mnli_accuracy,eval_hans_accuracy,eval_hans_entailment_accuracy,eval_hans_non-entailment_accuracy \
    --columns "MNLI-m=mnli,HANS=hans,HANS non-ent=hans:non-entailment,F_bias=mnli>hans"
cp "$OUT/runs.csv" "$OUT/summary.md" "$RESULTS/"
