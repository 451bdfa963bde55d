"""A controlled bias (`--data_transform cue`): a cue word in every training pair that agrees with the gold label in a
fraction ρ of them, and evaluation sets where it agrees, disagrees or is absent.

The cue of label y is a word w_y (`--cue_tokens`, one per label in the task's label order; default `DEFAULT_TOKENS`,
words that BERT's uncased vocabulary holds whole) put in front of the second text of a pair (the hypothesis), or of
the only text. For each example, from draws fixed by `--cue_seed` and the example's id (the same data for every
run seed, so runs pair up): with probability ρ its cue is its gold label's, otherwise a label drawn uniformly from
all K (so the cue agrees with probability ρ + (1 − ρ)/K). Then

    P(cue = c | y) = ρ·[c = y] + (1 − ρ)/K,

and the exact bias-only model is p_b(y | c) = π_y·P(c | y) / Σ_y' π_y'·P(c | y'), π the label distribution; the
`cue` bias model (`hf_srnets.bias.cue`) counts it on the training set. The ID dev set gets cues drawn the same way
(the training distribution). Three evaluation sets are made from the ID dev set: `cue_agree` (every cue is the
gold label's), `cue_disagree` (every cue is another label's, drawn uniformly from the K − 1) and `cue_absent` (no
cue). A model that learned the cue scores high on the first and low on the second; a robust one closes the gap.
The task's own OOD sets (HANS, ...) are kept without a cue. Each example's cue is recorded in the `cue` column
(the label index, −1 where there is none).

Controlled cues of this kind study debiasing in He et al. (2019, "Unlearn Dataset Bias in Natural Language
Inference by Fitting the Residual") and Utama et al. (2020, "Towards Debiasing NLU Models from Unknown Biases");
this design is the package's own.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, ClassVar

from datasets import Dataset

from ..errors import InputError
from .tasks import EvalSet, SplitSource, TaskSpec
from .transforms import DataTransform, EvalSets, register_data_transform

CUE_COLUMN = "cue"
NO_CUE = -1
DEFAULT_TOKENS = ("zebra", "quartz", "falcon", "cobalt", "lantern", "prism", "orbit", "violet")
CUE_SETS = ("agree", "disagree", "absent")


@dataclass
class CueOptions:
    """The controlled cue: how often it agrees with the gold label, its word per label and the seed of the draws."""

    cue_rho: float = field(
        default=0.8,
        metadata={
            "help": "ρ: the fraction of training (and ID dev) examples whose cue is their gold label's; the others "
            "get a label's cue drawn uniformly from all labels (--data_transform cue)."
        },
    )
    cue_tokens: list[str] | None = field(
        default=None,
        metadata={
            "help": "The cue word of each label, in the task's label order (default: "
            f"{' '.join(DEFAULT_TOKENS)}, as many as there are labels)."
        },
    )
    cue_seed: int = field(
        default=0, metadata={"help": "Seed of the cue draws, fixed per example id (the same data for every seed)."}
    )

    def __post_init__(self) -> None:
        if not 0.0 <= self.cue_rho <= 1.0:
            raise InputError(f"--cue_rho must be in [0, 1], got {self.cue_rho}: e.g. --cue_rho 0.8")
        tokens = self.cue_tokens or []
        bad = [t for t in tokens if not t or t.split() != [t]]
        if bad:
            raise InputError(f"--cue_tokens must be single words without spaces, got {bad}")
        if len(set(tokens)) != len(tokens):
            raise InputError(f"--cue_tokens repeats a word ({tokens}): each label needs its own cue")


def uniform_draw(seed: int, stream: str, example_id: str) -> float:
    """A number in [0, 1) fixed by (seed, stream, id): the first 8 bytes of their BLAKE2b digest over 2^64."""
    digest = hashlib.blake2b(f"{seed}/{stream}/{example_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def cue_labels(ids: list[str], labels: list[int], num_labels: int, rho: float, seed: int, stream: str) -> list[int]:
    """Each example's cue: its gold label with probability ρ, else a label drawn uniformly from all K."""
    cues = []
    for example_id, label in zip(ids, labels, strict=True):
        if uniform_draw(seed, f"{stream}/agree", example_id) < rho:
            cues.append(label)
        else:
            cues.append(min(int(uniform_draw(seed, f"{stream}/label", example_id) * num_labels), num_labels - 1))
    return cues


def other_labels(ids: list[str], labels: list[int], num_labels: int, seed: int) -> list[int]:
    """For each example, a label other than its gold one, drawn uniformly from the K − 1 others."""
    out = []
    for example_id, label in zip(ids, labels, strict=True):
        step = min(int(uniform_draw(seed, "disagree", example_id) * (num_labels - 1)), num_labels - 2)
        out.append((label + 1 + step) % num_labels)
    return out


@register_data_transform
class ControlledCue(DataTransform):
    """The controlled cue of the module docstring."""

    name = "cue"
    options_class = CueOptions
    set_names: ClassVar[dict[str, str]] = {f"cue_{kind}": f"cue {kind}" for kind in CUE_SETS}

    def tokens(self, task: TaskSpec) -> tuple[str, ...]:
        """The cue word of each of the task's labels."""
        given = self.options.cue_tokens
        if given and len(given) != task.num_labels:
            raise InputError(
                f"--cue_tokens gives {len(given)} words for the {task.num_labels} labels of {task.name} "
                f"({', '.join(task.label_names)}): give one per label, in that order"
            )
        if not given and task.num_labels > len(DEFAULT_TOKENS):
            raise InputError(f"{task.name} has {task.num_labels} labels: give --cue_tokens, one word per label")
        return tuple(given or DEFAULT_TOKENS[: task.num_labels])

    def eval_sets(self, task: TaskSpec) -> tuple[EvalSet, ...]:
        # made from the ID dev set, on no hub or file of their own: a card claims no published split for them
        return tuple(
            EvalSet(name, SplitSource(), task.label_names, display_name=shown) for name, shown in self.set_names.items()
        )

    def apply(
        self, task: TaskSpec, train: Dataset, validation: Dataset, ood: EvalSets
    ) -> tuple[Dataset, Dataset, EvalSets]:
        tokens, rho, seed, k = self.tokens(task), self.options.cue_rho, self.options.cue_seed, task.num_labels
        for name, dataset in (("training", train), ("ID dev", validation)):
            if "label" not in dataset.column_names or min(dataset["label"], default=0) < 0:
                raise InputError(
                    f"--data_transform cue draws cues from gold labels: the {name} set has unlabelled rows"
                )
        ids, gold = [str(i) for i in validation["id"]], list(validation["label"])
        by_kind = {
            "agree": gold,
            "disagree": other_labels(ids, gold, k, seed),
            "absent": [NO_CUE] * len(ids),
        }
        made = [(s, with_cues(validation, by_kind[s.name.removeprefix("cue_")], tokens)) for s in self.eval_sets(task)]
        train_cues = cue_labels([str(i) for i in train["id"]], list(train["label"]), k, rho, seed, "train")
        dev_cues = cue_labels(ids, gold, k, rho, seed, "validation")
        others = [(s, with_cues(d, [NO_CUE] * len(d), tokens)) for s, d in ood]
        return with_cues(train, train_cues, tokens), with_cues(validation, dev_cues, tokens), others + made

    def check_tokenizer(self, task: TaskSpec, tokenizer: Any) -> None:
        """Each label's cue must reach the model as its own token ids: an uncased tokenizer reads `zebra` and `ZEBRA`
        as one word (and a word-level vocabulary two unknown words as one [UNK]), and two labels would then share a
        cue while the card says one word per label (issue 70)."""
        tokens = self.tokens(task)
        read = [tuple(tokenizer(word, add_special_tokens=False)["input_ids"]) for word in tokens]
        same = [(tokens[i], tokens[j]) for i in range(len(read)) for j in range(i + 1, len(read)) if read[i] == read[j]]
        if same:
            first, second = same[0]
            pieces = tokenizer.convert_ids_to_tokens(list(read[tokens.index(first)]))
            raise InputError(
                f"--cue_tokens {first} and {second} are read by the model's tokenizer as the same tokens {pieces}: two "
                "labels would share a cue; give words it reads differently (not differing in case alone for an "
                "uncased tokenizer, nor both unknown to its vocabulary)"
            )

    def description(self, task: TaskSpec) -> str:
        tokens = ", ".join(f"{w!r} ({y})" for w, y in zip(self.tokens(task), task.label_names, strict=True))
        return (
            f"a controlled cue (--data_transform cue): a word per label, {tokens}, in front of each training and ID "
            f"dev example's last text, the gold label's with probability ρ = {self.options.cue_rho}, else a label's "
            f"drawn uniformly (seed {self.options.cue_seed}); evaluated with the cue agreeing, disagreeing and absent"
        )


def with_cues(dataset: Dataset, cues: list[int], tokens: tuple[str, ...]) -> Dataset:
    """`dataset` with the word of each example's cue in front of its last text (none for `NO_CUE`) and the `cue`
    column."""
    column = "sentence2" if "sentence2" in dataset.column_names else "sentence1"
    texts = [t if c == NO_CUE else f"{tokens[c]} {t or ''}" for t, c in zip(dataset[column], cues, strict=True)]
    if CUE_COLUMN in dataset.column_names:
        dataset = dataset.remove_columns(CUE_COLUMN)
    return dataset.remove_columns(column).add_column(column, texts).add_column(CUE_COLUMN, cues)
