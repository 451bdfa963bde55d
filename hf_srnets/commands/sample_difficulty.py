r"""RMC stage 1: the difficulty d_i of every training example from the loss variance of IMP models at several
sparsities (Robustness Challenges in Model Distillation and Pruning for NLU, §4.1, §5.1, Eq. 1).

    python run_sample_difficulty.py --output_dir difficulty_mnli -- \
        --model_name_or_path $MINILM --task mnli --data_dir ../shared/data \
        --train_file ../shared/data/mnli/dev_mismatched.tsv --max_train_samples 2000 --num_train_epochs 2
    python run_sample_difficulty.py --output_dir D --sparsities 0.2 0.4 0.6 0.7 0.85 --alpha 0.5 -- <run args>
    python run_sample_difficulty.py --output_dir D --model_dirs imp20 imp40 imp60 -- <run args>  # no training
    python run_glue_sparse.py ... --loss rmc --sample_difficulty difficulty_mnli/difficulty.jsonl

The arguments after `--` are those of a normal run_glue_sparse.py run (a config file and/or flags, without
`--pruning`, `--sparsity` or `--output_dir`). For every sparsity s the script trains `--pruning imp --sparsity s` in
`<output_dir>/imp_s<s>/`, with k = ⌈s/0.1⌉ rounds of s/k every 1/k of the run unless `--imp_prune_ratio` /
`--imp_interval` are given; a finished run (all_results.json) is kept, so a re-run continues. `--model_dirs` scores
saved models instead. Every model is scored on the run's training set and ID dev set, read as the run reads them.

Writes `difficulty.jsonl` (train: id, difficulty, variance, losses), `difficulty_validation.jsonl` (dev: the same
and `hard`, the highest `--hard_fraction` of variances) and `difficulty_report.json` (settings, each model's
sparsity, loss and accuracy, V_min/V_max, and the agreement of the split with the dev set's own `hard` column when
it has one, as MNLI's dev_matched.tsv). A reused `--output_dir` of other settings is refused unless
`--overwrite_output_dir true`.
"""

from __future__ import annotations

import logging
from typing import Any

from ..arguments.sample_difficulty_arguments import parse_args
from ..errors import run_script
from ..experiments.sample_difficulty import compute_difficulty, run_one


def main(argv: list[str] | None = None, runner: Any = run_one) -> dict[str, Any]:
    args, run_argv = parse_args(argv, description=__doc__)
    report = compute_difficulty(args, run_argv, runner)
    for model in report["models"]:
        print(f"{model['dir']}: sparsity {model['sparsity']:.3f}, train acc {model['train']['accuracy']:.3f}, "
              f"dev acc {model['validation']['accuracy']:.3f}")  # fmt: skip
    dev = report["validation"]
    agreement = ""
    if "agreement_with_gold" in dev:
        agreement = f", agreement with the dev set's hard column {dev['agreement_with_gold']:.3f}"
    print(f"alpha {report['alpha']}, {report['train']['examples']} training examples, {dev['hard_examples']} of "
          f"{dev['examples']} dev examples hard{agreement}")  # fmt: skip
    return report


def script_main() -> None:
    """`main()` as `run_sample_difficulty.py` and `python -m hf_srnets.commands.sample_difficulty` run it, logging at
    INFO."""
    logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s", level=logging.INFO)
    main()


if __name__ == "__main__":
    raise SystemExit(run_script(script_main))
