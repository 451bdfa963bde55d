#!/usr/bin/env python
"""Attack a saved classifier with word-substitution attacks and report Clean% / Aua% / Suc% / #Query.

    python run_attack.py --model_name_or_path out/sst2_ft --task sst2 --data_dir ../shared/data \
        --recipes textfooler textbugger --output_dir out/sst2_ft/attack

The options, outputs and resuming rules are those of `hf_srnets.commands.attack` (`main`).
"""

from __future__ import annotations

from hf_srnets.commands.attack import main, script_main
from hf_srnets.errors import run_script

__all__ = ["main"]

if __name__ == "__main__":
    raise SystemExit(run_script(script_main))
