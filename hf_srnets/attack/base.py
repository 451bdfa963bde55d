"""The attack interface: texts, the classifier an attack queries, results and the recipe registry.

Follows TextAttack's decomposition (Morris et al. 2020): an attack is a goal function (here always untargeted
classification: the attack succeeds when the prediction on the perturbed text differs from the gold label), a
transformation (which edits are proposed), constraints (which edits are allowed) and a search method (in which
order they are tried). A recipe (`AttackRecipe`) is a named combination of the four, registered under its name in
`ATTACK_RECIPES` and built with `build_attack(name, **resources)`.

Inputs are `Text` tuples: `(sentence,)` for single-sentence tasks, `(premise, hypothesis)` for pairs. As in
TextAttack, the words of a pair are counted, windowed and perturbed over both texts joined; which texts a recipe
may modify is its own choice (TextFooler keeps the premise, `InputColumnModification`; TextBugger and
BERT-Attack may change either).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

import numpy as np

from ..registry import register

Text = tuple[str, ...]
"""`(sentence,)` or `(premise, hypothesis)`."""

Outcome = Literal["skipped", "successful", "failed"]
OUTCOMES: tuple[str, ...] = ("skipped", "successful", "failed")


@runtime_checkable
class Classifier(Protocol):
    """What an attack queries: a batched victim model returning class probabilities.

    Implementations (`hf_srnets.attack.models`) count queries as TextAttack does: `num_queries` is the number of
    texts submitted for the current example, answered from a cache or not, and `query_budget` stops the search
    once reached (`None`: unlimited, TextAttack's default).
    """

    num_queries: int
    query_budget: int | None

    def __call__(self, texts: list[Text]) -> np.ndarray:
        """Probabilities of shape `[len(texts), num_labels]`."""
        ...


@dataclass
class AttackResult:
    """The outcome of attacking one example.

    `outcome` is "skipped" when the original prediction is already wrong (the example is not attacked),
    "successful" when a perturbation changed the prediction away from `label`, else "failed". `words_changed`
    counts the modified words and `num_words` the words of the input (all its texts, as TextAttack counts them).
    """

    original: Text
    perturbed: Text | None
    label: int
    original_prediction: int
    perturbed_prediction: int | None
    outcome: Outcome
    num_queries: int
    words_changed: int
    num_words: int

    def __post_init__(self) -> None:
        if self.outcome not in OUTCOMES:
            raise ValueError(f"AttackResult: outcome {self.outcome!r} is not one of {OUTCOMES}")
        self.original = tuple(self.original)
        if self.perturbed is not None:
            self.perturbed = tuple(self.perturbed)

    @property
    def perturbed_ratio(self) -> float:
        """Fraction of the attacked text's words that were changed."""
        return self.words_changed / self.num_words if self.num_words else 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form (tuples become lists)."""
        out = asdict(self)
        out["original"] = list(self.original)
        out["perturbed"] = None if self.perturbed is None else list(self.perturbed)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AttackResult:
        """Inverse of `to_dict`."""
        fields = dict(data)
        fields["original"] = tuple(fields["original"])
        if fields.get("perturbed") is not None:
            fields["perturbed"] = tuple(fields["perturbed"])
        return cls(**fields)


class AttackRecipe:
    """Base class of the attack recipes; subclasses set `name`, `citation` and implement `attack`.

    `citation` is a BibTeX key of `hf_srnets.resources.citations`.
    """

    name: ClassVar[str] = ""
    citation: ClassVar[str] = ""

    def attack(self, text: Text, label: int, classifier: Classifier) -> AttackResult:
        """Attack one example (`label` is the gold label) and return its result."""
        raise NotImplementedError


ATTACK_RECIPES: dict[str, type[AttackRecipe]] = {}


def register_attack_recipe(cls: type[AttackRecipe]) -> type[AttackRecipe]:
    """Class decorator: register a recipe under `cls.name` (a taken name is refused)."""
    if not cls.name:
        raise ValueError(f"register_attack_recipe: {cls.__name__} has no `name`; set the class attribute `name`")
    return register(ATTACK_RECIPES, cls.name, cls, "attack recipe")


def build_attack(name: str, **resources: Any) -> AttackRecipe:
    """Build the registered recipe `name`; `resources` (word vectors, sentence encoder, masked LM, ...) override
    the recipe's default offline resources (a `None` value means "load the default").

    The built-in recipes register themselves when `hf_srnets.attack.recipes` is imported, which the package's
    `__init__` does (importing it here would make an import cycle base -> recipes -> base).
    """
    if name not in ATTACK_RECIPES:
        raise ValueError(f"unknown attack recipe {name!r}; choose one of {sorted(ATTACK_RECIPES)}")
    return ATTACK_RECIPES[name](**resources)
