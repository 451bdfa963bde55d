#!/usr/bin/env bash
# Issue 52, testbed 1: the controlled cue of examples/cue_minilm_mnli.yaml (MNLI with a cue word per label in front
# of each hypothesis, rho = 0.9), on the pip MiniLM, fp32, one thread per process. Seeds 42 and 43 run side by side
# (each sweep's methods in the recipe's order: the dense models first), then seed 44; then the table from the
# per-example files: results/cue_minilm_mnli/report.md (paired against dense_poe, F_bias against dense_ce; per column
# against each dense model and each one-shot pruning of it, at the same sparsity: search against one-shot;
# and against the CE search: PoE against CE SRNets).
# Resumable: a sweep skips its finished runs and resumes an unfinished one from its last checkpoint (every 50
# steps); run the script again after a stop. SEEDS_FIRST / SEEDS_THEN change the seeds; extra arguments go to every
# run_sweep.py call (e.g. --methods dense_ce,dense_poe).
# outputs/ is not committed: where a session ends before the recipe does and the next one starts without outputs/,
# run a seed's dense model with the runs made from it in one call, e.g. `python run_sweep.py
# examples/cue_minilm_mnli.yaml --seeds 43 --checkpoint_steps 50 --methods
# dense_ce,mask_ce,mask_poe,magnitude_ce,wanda_ce,hybrid_poe` (then dense_poe with the runs made from it, which read
# dense_ce's results for F_bias; environment: source examples/sweep_seeds.sh), collect them with this script's report
# command and commit results/ before the session ends.
set -euo pipefail
cd "$(dirname "$0")/.."
source examples/sweep_seeds.sh  # the environment (DATA_DIR, MINILM, one thread) and sweep_seeds
RECIPE=examples/cue_minilm_mnli.yaml
OUT=outputs/cue_minilm_mnli
RESULTS=${RESULTS:-results/cue_minilm_mnli}
mkdir -p outputs "$RESULTS"
sweep_seeds "$RECIPE" "$OUT" "$@"
python -m hf_srnets.commands.report "$RESULTS" --collect_from "$OUT" --baseline dense_poe --reference dense_ce \
    --metrics eval_mnli_accuracy,eval_cue_agree_accuracy,eval_cue_disagree_accuracy,eval_cue_absent_accuracy,eval_hans_accuracy \
    --columns "ID=mnli,agree=cue_agree,disagree=cue_disagree,absent=cue_absent,HANS=hans,F_bias=mnli>cue_disagree" \
    --column_baselines dense_poe,dense_ce,wanda_poe,magnitude_poe,wanda_ce,magnitude_ce,mask_ce
