#!/usr/bin/env bash
# Per-example outputs for every committed MNLI experiment (issue 36): each experiment's own script re-runs it (a sweep
# skips the runs it finds finished, so on a machine that still has outputs/<experiment> nothing trains), then its
# runs' eval_predictions/ are collected into results/<experiment>/per_example/ (gzipped, probabilities to 4 digits,
# about 93 KB per run of 3,000 + 3,000 pairs) and every table, interval and plot is regenerated from them into
# results/<experiment>/report.md (python -m hf_srnets.commands.report: 10,000 seeded paired bootstrap resamples,
# the seed-level paired t-test, Holm over each table's rows). Re-runs reproduce the committed numbers only with the
# same torch threads (OMP_NUM_THREADS=1) and CPU kind (docs/testing.md#reproducibility); compare report.md with the
# committed tables and state what moved. Hours of CPU per experiment (each README's budget line says how many);
# one at a time:
#   bash examples/per_example_reruns.sh sweep_minilm_mnli
# Experiments: sweep_minilm_mnli rmc_minilm_mnli rmc_large_minilm_mnli rmc_large_minilm_mnli_equal
#              winwin_large_minilm_mnli winwin_weak_bias_minilm_mnli structured_minilm_mnli (default: all).
set -euo pipefail
cd "$(dirname "$0")/.."
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
HANS_CELLS=eval_hans_entailment_accuracy,eval_hans_non-entailment_accuracy
COLUMNS="MNLI-m=mnli,HANS=hans,HANS non-ent=hans:non-entailment,F_bias=mnli>hans"  # the per-column paired section
collect() {  # experiment, baseline, reference ("" for none), metrics[, columns[, report flags...]]
  local flags=(--collect_from "outputs/$1" --baseline "$2" --metrics "$4")
  [ -n "$3" ] && flags+=(--reference "$3")
  [ -n "${5:-}" ] && flags+=(--columns "$5")
  flags+=("${@:6}")  # more flags for the report command (the teacher as an extra run)
  mkdir -p "results/$1"
  python -m hf_srnets.commands.report "results/$1" "${flags[@]}"
}
magnitude_no_search() {  # the sweep's mask searches' starting points, evaluated untrained (results/README.md):
  # each matrix's ⌊s·n⌋ smallest |W| pruned, ties by position, the weights kept; the searches' soft init at step 0
  local data=${DATA_DIR:-../shared/data}
  python run_sweep.py --sparsities 0.3,0.5,0.7 --seeds 1,2 --output_dir outputs/sweep_minilm_mnli \
      --method_name magnitude_no_search --reference full_ce -- \
      --model_name_or_path "{output_dir}/full_ce/s0/seed{seed}" --task mnli --data_dir "$data" \
      --train_file "$data/mnli/dev_mismatched.tsv" --max_train_samples 32 --do_train --max_steps 1 \
      --max_eval_samples 3000 --max_ood_samples 3000 --per_device_eval_batch_size 128 \
      --pruning magnitude-oneshot --save_strategy no --report_to none
}
ALL=(sweep_minilm_mnli rmc_minilm_mnli rmc_large_minilm_mnli rmc_large_minilm_mnli_equal winwin_large_minilm_mnli
     winwin_weak_bias_minilm_mnli structured_minilm_mnli)
if [ $# -gt 0 ]; then ALL=("$@"); fi
for name in "${ALL[@]}"; do
    case $name in
      sweep_minilm_mnli) bash examples/sweep_minilm_mnli.sh
        magnitude_no_search
        collect "$name" full_ce full_ce "eval_mnli_accuracy,eval_hans_accuracy,$HANS_CELLS" "$COLUMNS" ;;
      rmc_minilm_mnli) bash examples/rmc_minilm_mnli.sh --seeds 42,43  # as its README says it was made
        collect "$name" imp_vanilla teacher "eval_mnli_accuracy,eval_hans_accuracy,$HANS_CELLS" "$COLUMNS" \
            --extra_run "teacher=outputs/$name/teacher" ;;
      rmc_large_minilm_mnli) SWEEPS=rmc bash examples/rmc_large_minilm_mnli.sh
        collect "$name" imp_vanilla "" eval_mnli_accuracy,eval_hans_accuracy ;;
      rmc_large_minilm_mnli_equal) bash examples/rmc_large_minilm_mnli_equal.sh ;;  # collects itself
      winwin_large_minilm_mnli) SWEEPS=winwin bash examples/rmc_large_minilm_mnli.sh
        collect "$name" full_poe full_ce "eval_mnli_accuracy,eval_hans_accuracy,$HANS_CELLS" "$COLUMNS" ;;
      winwin_weak_bias_minilm_mnli) bash examples/winwin_weak_bias_minilm_mnli.sh
        collect "$name" full_ce full_ce "eval_mnli_accuracy,eval_hans_accuracy,$HANS_CELLS" "$COLUMNS" ;;
      structured_minilm_mnli) bash examples/structured_minilm_mnli.sh
        collect "$name" full_ce full_ce "eval_mnli_accuracy,eval_hans_accuracy,$HANS_CELLS" "$COLUMNS" ;;
      *) echo "error: unknown experiment $name; give one of the names in this script's header" >&2; exit 2 ;;
    esac
done
