"""Attack a saved classifier with word-substitution attacks and report Clean% / Aua% / Suc% / #Query (the robust
lottery tickets paper's Table 1, with TextAttack's definitions; `hf_srnets.attack.metrics`).

    # a full or merged checkpoint, on all 872 sentences of the GLUE SST-2 dev set
    python run_attack.py --model_name_or_path out/sst2_ft --task sst2 --data_dir ../shared/data \
        --recipes textfooler textbugger --output_dir out/sst2_ft/attack
    # an hf_srnets mask dir (masks applied to srnet_config.json's base model, or --base_model), on the
    # TextFooler paper's 1,000-example AG News sample, first 200 rows
    python run_attack.py --model_name_or_path out/agnews_l0 --task ag_news \
        --attack_file ../shared/data/textfooler_subsets/ag --num_examples 200 --output_dir out/agnews_l0
    python run_attack.py config.yaml --num_examples 50      # a JSON/YAML config; flags after it win

Per recipe, `<output_dir>/attack_<recipe>.jsonl` holds one line per attacked example (original and perturbed
text, gold label, predictions, outcome, queries, words changed); a re-run with the same settings (recipe, data,
sample, the resources each recipe used, the model's weights sha256) resumes after the examples already there, and
other settings are refused. Recipes with a POS constraint use `--pos_tagger` (nltk, TextAttack's; or coarse, an
explicit offline fallback). The run holds the output dir's lock (the one training runs take).
`<output_dir>/attack_results.json` holds each recipe's summary and the settings; the
`attack_<recipe>_*` metrics are merged into `<output_dir>/all_results.json`, and into the model card
(`README.md`) there if there is one.

`main` parses the options (`hf_srnets.arguments.attack_arguments`) and runs the attack (`hf_srnets.jobs.attack`).
"""

from __future__ import annotations

import logging
from typing import Any

from ..arguments.attack_arguments import parse_args
from ..errors import run_script
from ..jobs.attack import run_attack


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Parse the options and attack; return the attack_* metrics merged into all_results.json."""
    return run_attack(*parse_args(argv, description=__doc__))


def script_main() -> None:
    """`main()` as `run_attack.py` and `python -m hf_srnets.commands.attack` run it, logging at INFO."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    main()


if __name__ == "__main__":
    raise SystemExit(run_script(script_main))
