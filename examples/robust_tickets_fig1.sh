#!/usr/bin/env bash
# Robust Lottery Tickets, Fig. 1 at CPU scale: a hard-concrete l0 + FreeLB mask search long enough for the gates to
# polarise (the paper: > 90% of the deterministic gates at exactly 0 or 1 after 20 epochs of SST-2). The search
# starts from examples/robust_tickets_sst2.sh's Fine-tune model ($FINETUNED), trains on all 60,614 sentences of
# ALPS's SST-2 train part at --max_seq_length 64 for $STEPS steps with Table 6's SST-2 values (mask lr 0.1, λ 0.5,
# wd 1e-6, η 0.03, ε0 0.05; K = $ADV_STEPS, the paper's s = 5), and logs the fraction of gates at 0 and at 1 every
# $LOG_STEPS steps (l0_gates_zero / l0_gates_one in trainer_state.json's log_history: the Fig. 1 curve).
# Resumable: killed at any point, the next invocation continues from the last checkpoint (every $SAVE_STEPS steps)
# and a finished search is skipped. BF16=true (default) trains in bf16 autocast, 2-3x faster on a CPU with bf16
# instructions (bench/bench_bf16_cpu.py); on a CPU without them set BF16=false and start a new $OUT (one precision
# per search). Then: tickets at 10/30/50/70% from the one search (run_extract_ticket.py). Extra arguments go to the
# search (e.g. the authors' λ timing: --l0_lambda_start_fraction 0.0333 --l0_lambda_warmup_fraction 0.1); use a new
# $OUT and $RESULTS for each variant, and the same arguments when resuming it.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA_DIR=${DATA_DIR:-../shared/data}
FINETUNED=${FINETUNED:-outputs/robust_tickets_sst2/finetune}
OUT=${OUT:-outputs/robust_tickets_fig1}
STEPS=${STEPS:-4000}
ADV_STEPS=${ADV_STEPS:-2}
LOG_STEPS=${LOG_STEPS:-50}
SAVE_STEPS=${SAVE_STEPS:-250}
BF16=${BF16:-true}
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
SEARCH_DIR="$OUT/search"
if [ -f "$SEARCH_DIR/all_results.json" ]; then
    echo "== search: done ($SEARCH_DIR)"
else
    RESUME=()
    LAST=$(ls -d "$SEARCH_DIR"/checkpoint-* 2>/dev/null | sort -t- -k2 -n | tail -1 || true)
    if [ -n "$LAST" ]; then
        echo "== search: resuming from $LAST"
        RESUME=(--resume_from_checkpoint "$LAST")
    elif [ -d "$SEARCH_DIR" ]; then
        RESUME=(--overwrite_output_dir true)  # stopped before its first checkpoint: start again
    fi
    python run_glue_sparse.py --model_name_or_path "$FINETUNED" --task sst2 --data_dir "$DATA_DIR" \
        --max_seq_length 64 --per_device_train_batch_size 32 --per_device_eval_batch_size 128 \
        --max_steps "$STEPS" --logging_steps "$LOG_STEPS" --save_strategy steps --save_steps "$SAVE_STEPS" \
        --save_total_limit 2 --report_to none --seed 42 --bf16 "$BF16" \
        --pruning l0 --sparsity 0.3 --l0_lambda 0.5 --mask_learning_rate 0.1 --mask_weight_decay 1e-6 \
        --step_objective freelb --adv_steps "$ADV_STEPS" --adv_lr 0.03 --adv_init_mag 0.05 \
        --output_dir "$SEARCH_DIR" "${RESUME[@]}" "$@"
fi
[ -d "$OUT/tickets/sparsity_0.70" ] || python run_extract_ticket.py "$SEARCH_DIR" --sparsity 0.1 0.3 0.5 0.7 \
    --output_dir "$OUT/tickets"
# the Fig. 1 curve and the 30% ticket's pruned share per layer (Fig. 3)
python examples/l0_gates_plot.py "$SEARCH_DIR" --output "${RESULTS:-results/robust_tickets_fig1}" \
    --ticket "$OUT/tickets/sparsity_0.30"
