"""Run methods over sparsities and seeds with run_glue_sparse.py; aggregate mean ± std and plot (Win-win Fig. 2).

    python run_sweep.py examples/sweep_minilm_mnli.yaml                      # a recipe
    python run_sweep.py recipe.yaml --sparsities 0.3,0.5,0.7 --seeds 1,2     # override its grid
    python run_sweep.py recipe.yaml --methods full_ce,mask_poe               # only these methods of the recipe
    python run_sweep.py recipe.yaml --aggregate_only                         # just collect, CSV and plot
    python run_sweep.py --sparsities 0.2,0.3,0.5,0.7,0.9 --seeds 1,2,3,4 --output_dir sweeps/mnli \
        -- --model_name_or_path outputs/full_ce --task mnli --pruning mask --loss poe \
        --bias_predictions bias/bias_train.jsonl --do_train               # one method, no recipe

Recipe (YAML): `output_dir`, `sparsities`, `seeds`, `metrics` (keys of all_results.json, the ID one first), `common`
(arguments of run_glue_sparse.py shared by every run), `methods` (name -> its own arguments, where `sparsities` may
narrow the grid for that method) and optionally `reference` (a full-model method: every other method's ID metric is
also given as a percentage of it, and every metric as a difference from it; and each run's F_bias = Δ_run /
Δ_reference (Du et al. 2023, §3.4) against the reference run of its seed, else that of the lowest seed, goes to
runs.csv, summary.csv, summary.md and an F_bias panel of the plot). With `baseline` (a method of the recipe; default:
the `reference`) and runs that hold per-example predictions (`eval_predictions/`, which every run of
run_glue_sparse.py writes), each other method's accuracy/F1 metrics get the mean difference from the baseline over the
seeds both ran (a baseline of one run, of another seed, with each), on the same examples, with a paired bootstrap 95%
interval over the examples, the seed-level t-test and the seeds' signs, `*` decided when the interval excludes 0 and
the seeds agree, `°` not decided when they do not (summary.csv: `<metric>_paired_diff`, `_paired_low`,
`_paired_high`, `_paired_seeds`, `_paired_outside_noise`, `_seed_p`, `_seed_signs`, `_decided`; summary.md: a table of
them; docs/sweeps.md). The baseline's runs at the
method's sparsity are paired, else those of the baseline's only sparsity. Methods with `pruning: none` are full
models, run once per seed at sparsity 0. A recipe is checked before any run (`hf_srnets.experiments.sweep_recipe`): an
unknown key (with the nearest valid name), a repeated key or a value of the wrong type is refused naming the key.
Writes `<output_dir>/summary.csv` (mean ± std), `summary.md` (the same as a Markdown table, the paired differences and
a budget line: runs, hours of training and evaluation), `runs.csv` (one row per run), `summary.png` (each metric
against sparsity) and, with a baseline, `paired.png` (a method per line with its paired interval).

Without a recipe, the arguments after `--` (a run_glue_sparse.py config file and/or flags, without `--sparsity`,
`--seed` or `--output_dir`, which the sweep sets) are one method, named `<pruning>_<loss>` unless `--method_name`
says otherwise; `--seeds` defaults to 42 and `--metrics` to the task's ID metric and its OOD sets' metrics.

Interrupted at any point, the same command continues the sweep (`hf_srnets.experiments.sweep_runs`): it first
says how many runs are done, to resume and to start; a finished run is skipped when its recorded settings (a
fingerprint of its arguments, in its `sweep_run.json`) are the recipe's, and an unfinished one resumes from its last
checkpoint when it has one, else starts again in its cleared dir. Runs save a checkpoint only with
`--checkpoint_steps N` (or the recipe's `checkpoint_steps`): every N steps, the last one kept, removed when the run
finishes unless `--keep_checkpoints`. A run dir made with other settings than the recipe's now is refused unless
`--rerun_changed`.

String values may hold `{seed}` and `{output_dir}` (the sweep's), `{sparsity}` and environment variables (`$MINILM`;
`$$` is a literal `$`),
so a pruning method can start from the full model of its own seed, e.g.
`model_name_or_path: "{output_dir}/full_ce/s0/seed{seed}"` after a `full_ce` method (methods run in order), and a
method without pruning can train each sparse model of an earlier method (a recovery stage:
`model_name_or_path: "{output_dir}/hybrid/s{sparsity}/seed{seed}/merged"`; it runs at every sparsity, without
`--sparsity`).

`main` parses the options (`hf_srnets.arguments.sweep_arguments`) and runs the sweep (`hf_srnets.experiments.sweep`).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import Any

from ..arguments.sweep_arguments import parse_args
from ..errors import run_script
from ..experiments.sweep import logger as progress
from ..experiments.sweep import run_one, run_sweep


def main(argv: list[str] | None = None, runner: Callable[[list[str]], None] = run_one) -> list[dict[str, Any]]:
    """Parse the options, run the sweep and print its summary rows; return them."""
    args, run_argv = parse_args(argv, description=__doc__)
    rows = run_sweep(args, run_argv, runner)
    for row in rows:
        print(row)
    return rows


def script_main() -> None:
    """`main()` as `run_sweep.py` and `python -m hf_srnets.commands.sweep` run it: the sweep's progress (what is done,
    each run as it starts) on standard output."""
    progress.addHandler(logging.StreamHandler(sys.stdout))
    progress.setLevel(logging.INFO)
    main()


if __name__ == "__main__":
    raise SystemExit(run_script(script_main))
