#!/usr/bin/env bash
# Issue 52, testbed 2: MNLI's hard subset with a hypothesis-only bias model (examples/hard_minilm_mnli.yaml), on the
# pip MiniLM, fp32, one thread per process. First the bias model (hypothesis-only, all 9,832 pairs of MNLI
# dev-mismatched, C = 0.001: the C chosen on held-out rows when it was first fitted; hashed word n-grams, no word
# vectors), then seeds 42 and 43 side by side (each sweep's methods in the recipe's order: the dense models first),
# then seed 44; then the table from the per-example files: results/hard_minilm_mnli/report.md (paired against
# dense_poe, F_bias against dense_ce; per column against each dense model and each one-shot pruning of it, at the
# same sparsity: search against one-shot; and against the CE search: PoE against CE SRNets).
# Resumable: a sweep skips its finished runs and resumes an unfinished one from its last checkpoint (every 50
# steps); run the script again after a stop. SEEDS_FIRST / SEEDS_THEN change the seeds; extra arguments go to every
# run_sweep.py call (e.g. --methods dense_ce,dense_poe).
# outputs/ is not committed: where a session ends before the recipe does and the next one starts without outputs/,
# run a seed's dense model with the runs made from it in one call, e.g. `python run_sweep.py
# examples/hard_minilm_mnli.yaml --seeds 43 --checkpoint_steps 50 --methods
# dense_ce,mask_ce,mask_poe,magnitude_ce,wanda_ce,hybrid_poe` (then dense_poe with the runs made from it, which read
# dense_ce's results for F_bias; environment: source examples/sweep_seeds.sh), collect them with this script's report
# command and commit results/ before the session ends.
set -euo pipefail
cd "$(dirname "$0")/.."
source examples/sweep_seeds.sh  # the environment (DATA_DIR, MINILM, one thread) and sweep_seeds
RECIPE=examples/hard_minilm_mnli.yaml
OUT=outputs/hard_minilm_mnli
RESULTS=${RESULTS:-results/hard_minilm_mnli}
mkdir -p outputs "$RESULTS"
[ -f "$OUT/bias/bias_train.jsonl" ] || python run_bias_model.py --task mnli --data_dir "$DATA_DIR" \
    --train_file "$DATA_DIR/mnli/dev_mismatched.tsv" --bias_model hypothesis --C 0.001 \
    --output_dir "$OUT/bias" --overwrite_output_dir true
sweep_seeds "$RECIPE" "$OUT" "$@"
python -m hf_srnets.commands.report "$RESULTS" --collect_from "$OUT" --baseline dense_poe --reference dense_ce \
    --metrics eval_mnli_accuracy,eval_mnli_hard_matched_accuracy,eval_hans_accuracy \
    --columns "ID=mnli,hard=mnli_hard_matched,HANS=hans,HANS non-ent=hans:non-entailment,F_bias=mnli>mnli_hard_matched" \
    --column_baselines dense_poe,dense_ce,wanda_poe,magnitude_poe,wanda_ce,magnitude_ce,mask_ce
