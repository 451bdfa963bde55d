"""The tasks of the Win-win paper: their ID train/dev sets, OOD evaluation sets and metrics (§4.1, appendix B.1)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class SplitSource:
    """Where a split lives: on the Hub (`hub_path`, `hub_config`, `hub_split`) and/or under a data dir.

    `local_paths` are tried in order, relative to `--data_dir`.
    """

    hub_path: str | None = None
    hub_config: str | None = None
    hub_split: str | None = None
    local_paths: tuple[str, ...] = ()


@dataclass(frozen=True)
class EvalSet:
    """An evaluation set: its source, label names and how the model's predictions are scored.

    `kind` is `"same"` (the task's labels and metric) or `"hans"` (3-way NLI collapsed to 2-way,
    scored per heuristic × label).
    """

    name: str
    source: SplitSource
    label_names: tuple[str, ...]
    kind: str = "same"


@dataclass(frozen=True)
class TaskSpec:
    name: str
    label_names: tuple[str, ...]
    metric: str  # "accuracy" or "f1" (weighted), appendix B.1
    train: SplitSource
    validation: SplitSource
    ood: tuple[EvalSet, ...] = ()
    bias_model: str = "overlap"  # the bias features of appendix B.3.1: "overlap" (pairs) or "claim"
    label_aliases: dict[str, str] = field(default_factory=dict)

    @property
    def num_labels(self) -> int:
        return len(self.label_names)


NLI_LABELS = ("entailment", "neutral", "contradiction")
HANS_LABELS = ("entailment", "non-entailment")
PARAPHRASE_LABELS = ("not_duplicate", "duplicate")
FEVER_LABELS = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")

TASKS: dict[str, TaskSpec] = {
    "mnli": TaskSpec(
        name="mnli",
        label_names=NLI_LABELS,
        metric="accuracy",
        train=SplitSource("nyu-mll/glue", "mnli", "train", ("mnli/train.tsv", "mnli/train.jsonl")),
        validation=SplitSource("nyu-mll/glue", "mnli", "validation_matched", ("mnli/dev_matched.tsv",)),
        ood=(
            EvalSet(
                "hans",
                SplitSource("jhu-cogsci/hans", None, "validation", ("hans/heuristics_evaluation_set.tsv",)),
                HANS_LABELS,
                kind="hans",
            ),
        ),
        label_aliases={"non_entailment": "non-entailment"},
    ),
    "qqp": TaskSpec(
        name="qqp",
        label_names=PARAPHRASE_LABELS,
        metric="f1",
        train=SplitSource("nyu-mll/glue", "qqp", "train", ("qqp/train.tsv",)),
        validation=SplitSource("nyu-mll/glue", "qqp", "validation", ("qqp/dev.tsv",)),
        ood=(
            # PAWS-QQP is not on the Hub (it must be generated from the QQP corpus): local files only.
            EvalSet("paws_qqp", SplitSource(local_paths=("paws/paws_qqp_dev_and_test.tsv",)), PARAPHRASE_LABELS),
            EvalSet(
                "paws_wiki",
                SplitSource("google-research-datasets/paws", "labeled_final", "test", ("paws/paws_wiki_test.tsv",)),
                PARAPHRASE_LABELS,
            ),
        ),
        label_aliases={"0": "not_duplicate", "1": "duplicate"},
    ),
    "fever": TaskSpec(
        name="fever",
        label_names=FEVER_LABELS,
        metric="accuracy",
        # FEVER as processed by Schuster et al. 2019 (github.com/TalSchuster/FeverSymmetric): local files.
        train=SplitSource(local_paths=("fever/fever.train.jsonl", "fever/train.jsonl")),
        validation=SplitSource(local_paths=("fever/fever.dev.jsonl", "fever/dev.jsonl")),
        ood=(
            EvalSet(
                "fever_symmetric_v1", SplitSource(local_paths=("fever/fever_symmetric_generated.jsonl",)), FEVER_LABELS
            ),
            EvalSet("fever_symmetric_v2", SplitSource(local_paths=("fever/fever_symmetric_test.jsonl",)), FEVER_LABELS),
        ),
        bias_model="claim",
        label_aliases={"supported": "SUPPORTS", "refuted": "REFUTES", "nei": "NOT ENOUGH INFO"},
    ),
}


def get_task(name: str) -> TaskSpec:
    if name not in TASKS:
        raise ValueError(
            f"Unknown task {name!r}; known tasks: {sorted(TASKS)}. Use --train_file/--validation_file "
            "with --task custom --task_labels for other data."
        )
    return TASKS[name]


def custom_task(label_names: list[str], metric: str = "accuracy") -> TaskSpec:
    """A task defined only by its label names, for user files (`--train_file` etc.)."""
    if len(label_names) < 2:
        raise ValueError(f"A classification task needs at least 2 label names, got {label_names}")
    return TaskSpec(
        name="custom", label_names=tuple(label_names), metric=metric, train=SplitSource(), validation=SplitSource()
    )


def id_set_name(task: TaskSpec) -> str:
    """The ID dev set's name in metric keys (`eval_<name>_<metric>`): the task's, or `validation` for custom."""
    return task.name if task.name != "custom" else "validation"


def ood_file_set(spec: str, task: TaskSpec) -> EvalSet:
    """The evaluation set of an `--ood_file NAME=PATH`: a NAME starting with `hans` is scored like HANS (2-way
    labels, 3-way predictions collapsed); any other is scored with the task's labels and metric."""
    name, path = spec.split("=", 1)
    if name.startswith("hans"):
        return EvalSet(name, SplitSource(local_paths=(path,)), HANS_LABELS, kind="hans")
    return EvalSet(name, SplitSource(local_paths=(path,)), task.label_names)
