"""BibTeX entries of the papers behind the objectives, and the citations a model card lists for one."""

from __future__ import annotations

from collections.abc import Iterable

from ..losses import LOSSES, DebiasingLoss
from .base import Objective

PACKAGE_CITATION = "winwin"  # every card cites the SRNet paper first

BIBTEX: dict[str, str] = {
    "winwin": """@inproceedings{liu2022winwin,
  title     = {A Win-win Deal: Towards Sparse and Robust Pre-trained Language Models},
  author    = {Liu, Yuanxin and Meng, Fandong and Lin, Zheng and Li, Jiangnan and Fu, Peng and Cao, Yanan and
               Wang, Weiping and Zhou, Jie},
  booktitle = {Advances in Neural Information Processing Systems},
  year      = {2022}
}""",
    "clark": """@inproceedings{clark2019dont,
  title     = {Don't Take the Easy Way Out: Ensemble Based Methods for Avoiding Known Dataset Biases},
  author    = {Clark, Christopher and Yatskar, Mark and Zettlemoyer, Luke},
  booktitle = {EMNLP-IJCNLP},
  year      = {2019}
}""",
    "utama": """@inproceedings{utama2020mind,
  title     = {Mind the Trade-off: Debiasing NLU Models without Degrading the In-distribution Performance},
  author    = {Utama, Prasetya Ajie and Moosavi, Nafise Sadat and Gurevych, Iryna},
  booktitle = {ACL},
  year      = {2020}
}""",
}


def citations_for(objective: Objective | DebiasingLoss | str | None) -> list[str]:
    """The BibTeX keys a card cites for a run trained with `objective` (an objective, a loss or a loss name):
    the package's paper, then the objective's own, each once, in order. An unknown loss name (a loss registered
    by another package and not imported here) gets the package's paper only."""
    if isinstance(objective, str):
        objective = LOSSES.get(objective)
    own = getattr(objective, "citations", ()) if objective is not None else ()
    return list(dict.fromkeys([PACKAGE_CITATION, *own]))


def format_bibtex(keys: Iterable[str]) -> str:
    """The BibTeX entries of `keys`, separated by blank lines (the card's Citation section)."""
    keys = list(keys)
    unknown = [key for key in keys if key not in BIBTEX]
    if unknown:
        raise KeyError(f"No BibTeX entry for {unknown}; add it to hf_srnets.objectives.BIBTEX")
    return "\n\n".join(BIBTEX[key] for key in keys)
