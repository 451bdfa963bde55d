"""The tasks of the papers: their ID train/dev sets, OOD evaluation sets and metrics.

MNLI, QQP and FEVER with their OOD sets are the Win-win paper's (§4.1, appendix B.1); SST-2, AG News and IMDB
(single-text classification, attacked with TextFooler/TextBugger/BERT-Attack) are the Robust Lottery Tickets paper's
(Zheng et al. 2022, §4.1), with QNLI, QQP and MNLI in its Table 6.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import InputError


@dataclass(frozen=True)
class FileFormat:
    """How a task's published files are written, when it is not "a header line, then tab-separated fields".

    `columns`: the field names of a file without a header line (a file of the same format that starts with this
    header is read with it). `quoting`: `"none"` (`"` is a literal character) or `"csv"` (fields wrapped in `"`,
    inner quotes doubled). `rename`: (published column, canonical column) pairs, e.g. IMDB-CAD's `Sentiment`.
    `parallel_files`: a folder of plain-text files instead of one file, line k of each holding one field of
    example k, as (file name in the folder, column) pairs, e.g. robust-nli's `s1.test` (premise), `s2.test`
    (hypothesis) and `labels.test` (label): `ROBUST_NLI_FORMAT`.
    """

    columns: tuple[str, ...] = ()
    quoting: str = "none"
    rename: tuple[tuple[str, str], ...] = ()
    parallel_files: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if self.parallel_files and (self.columns or self.rename):
            raise InputError(
                "FileFormat: parallel_files names the column of each file of a folder; columns and rename describe "
                "one file with fields: give one or the other"
            )


@dataclass(frozen=True)
class SplitSource:
    """Where a split lives: on the Hub (`hub_path`, `hub_config`, `hub_split`) and/or under a data dir.

    `local_paths` are tried in order, relative to `--data_dir`. `hub_revision` names the branch to read where the
    repository's main branch holds only a loading script, which `datasets` >= 4 no longer runs: the Hub's own
    Parquet export (`refs/convert/parquet`) of the official repository.
    """

    hub_path: str | None = None
    hub_config: str | None = None
    hub_split: str | None = None
    local_paths: tuple[str, ...] = ()
    # Rows of the official Hub split: a run's split counts as "full" (a model-index result on its card) only
    # with all of them. None: not an official Hub split, or its size is not recorded.
    official_rows: int | None = None
    # How the files of `local_paths` are written (None: header line, tab-separated, no quoting).
    file_format: FileFormat | None = None
    hub_revision: str | None = None

    def dataset_entry(self, name: str) -> dict[str, Any]:
        """The model-index `dataset` entry of a set called `name`: the Hub id when it is on the Hub, else `name`."""
        entry: dict[str, Any] = {"name": name, "type": self.hub_path or name}
        if self.hub_config:
            entry["config"] = self.hub_config
        if self.hub_split:
            entry["split"] = self.hub_split
        if self.hub_revision:
            entry["revision"] = self.hub_revision
        return entry


@dataclass(frozen=True)
class EvalSet:
    """An evaluation set: its source, label names and how the model's predictions are scored.

    `kind` names the evaluator that scores it (`hf_srnets.evaluation.EVALUATORS`): `"same"` (the task's labels
    and metric), `"hans"` (3-way NLI collapsed to 2-way, scored per heuristic × label), `"paws"` (weighted F1)
    or `"fever_symmetric"` (accuracy). `display_name` is the set's name as the papers write it (plots, tables).
    """

    name: str
    source: SplitSource
    label_names: tuple[str, ...]
    kind: str = "same"
    display_name: str = ""

    @property
    def evaluator(self) -> str:
        """The name of the evaluator that scores this set (its `kind`)."""
        return self.kind


@dataclass(frozen=True)
class HardSubset:
    """A published easy/hard split of a task's ID dev set (Robustness Challenges §4, appendix F): a file under
    `--data_dir` with an id column (`id_column`, joined to the dev set's example ids) and a `hard`/`hardness` flag.
    `description` says whose split it is (cards)."""

    local_path: str
    id_column: str = "id"
    description: str = ""


@dataclass(frozen=True)
class TaskSpec:
    """A task: its labels, its metric, its ID train/dev sets and OOD sets, and the names papers give them.

    `ood` are the OOD sets every run evaluates (unless `--no_default_ood`); `optional_ood` are sets registered for
    the task that a run evaluates only when asked for by name (`--ood_file NAME`, read under `--data_dir`, or
    `--ood_file NAME=PATH`). `evaluator` names the evaluator of the ID dev set (`hf_srnets.evaluation.EVALUATORS`;
    each OOD set names its own, `EvalSet.kind`); `display_name` is the task's name as the papers write it.
    """

    name: str
    label_names: tuple[str, ...]
    metric: str  # "accuracy" or "f1" (weighted), appendix B.1
    train: SplitSource
    validation: SplitSource
    ood: tuple[EvalSet, ...] = ()
    bias_model: str = "overlap"  # the bias features of appendix B.3.1: "overlap" (pairs) or "claim"
    label_aliases: dict[str, str] = field(default_factory=dict)
    # The task's published labels when `label_names` is a restriction/reordering (`resolve_task`): integer label
    # ids in files index these, and a row labelled with one that `label_names` lacks is an error. Empty: unrestricted.
    published_label_names: tuple[str, ...] = ()
    # The task's text inputs by meaning, in model input order: (role, source field names tried in order). The
    # first becomes `sentence1` (the claim for FEVER: the claim-only bias model reads it), the second `sentence2`.
    # Empty (custom tasks): the generic column names of `loading.canonicalize`.
    text_fields: tuple[tuple[str, tuple[str, ...]], ...] = ()
    evaluator: str = "same"
    display_name: str = ""
    # How the task's published files are written (user files given with --train_file etc. are read this way too).
    file_format: FileFormat | None = None
    # The labelled test split that attacks use (`run_attack.py`), when it is not the validation split.
    test: SplitSource | None = None
    # The default easy/hard split of the ID dev set (`hf_srnets.evaluation.easy_hard`), when one is published.
    hard_subset: HardSubset | None = None
    # Evaluation sets a run asks for by name (`--ood_file NAME`): local files that not every user has, or sets too
    # large to evaluate on every run.
    optional_ood: tuple[EvalSet, ...] = ()

    @property
    def registered_sets(self) -> tuple[EvalSet, ...]:
        """Every evaluation set registered for the task: its default OOD sets, then its optional ones."""
        return self.ood + self.optional_ood

    @property
    def attack_split(self) -> SplitSource:
        """The split attacked by default: the test split, else the validation split (SST-2: the GLUE dev set)."""
        return self.test or self.validation

    @property
    def hub_datasets(self) -> list[str]:
        """The Hub datasets of the task's splits (train, dev, OOD), each once, in that order."""
        paths = [s.hub_path for s in (self.train, self.validation, *(e.source for e in self.ood))]
        return list(dict.fromkeys(p for p in paths if p))

    @property
    def num_labels(self) -> int:
        return len(self.label_names)

    @property
    def file_label_names(self) -> tuple[str, ...]:
        """The label names that integer label ids in the task's files refer to (the published order)."""
        return self.published_label_names or self.label_names

    @property
    def excluded_label_names(self) -> tuple[str, ...]:
        """The task's published labels left out by `--task_labels`."""
        return tuple(n for n in self.published_label_names if n not in self.label_names)


NLI_LABELS = ("entailment", "neutral", "contradiction")
HANS_LABELS = ("entailment", "non-entailment")
PARAPHRASE_LABELS = ("not_duplicate", "duplicate")
FEVER_LABELS = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")
SENTIMENT_LABELS = ("negative", "positive")  # GLUE SST-2 and IMDb: 0 = negative, 1 = positive
AG_NEWS_LABELS = ("World", "Sports", "Business", "Sci/Tech")  # fancyzhx/ag_news class ids 0..3

# The branch where the Hub keeps its Parquet export of a dataset repository.
PARQUET_EXPORT = "refs/convert/parquet"
AG_NEWS_FORMAT = FileFormat(columns=("text", "label"), quoting="csv")
IMDB_CAD_FORMAT = FileFormat(quoting="csv", rename=(("Sentiment", "label"), ("Text", "text")))
# The folders of robust-nli (Karimi Mahabadi et al. 2020, github.com/rabeehk/robust-nli): one example per line of
# s1.test (premise), s2.test (hypothesis) and labels.test (the label word), no ids.
ROBUST_NLI_FORMAT = FileFormat(
    parallel_files=(("s1.test", "premise"), ("s2.test", "hypothesis"), ("labels.test", "label"))
)


def mnli_hard_set(name: str, folder: str, display: str) -> EvalSet:
    """An MNLI hard subset as robust-nli publishes it: the dev pairs a hypothesis-only classifier gets wrong
    (Gururangan et al. 2018), evaluated with MNLI's labels and accuracy; local files only (not on the Hub)."""
    source = SplitSource(local_paths=(f"mnli_hard/{folder}",), file_format=ROBUST_NLI_FORMAT)
    return EvalSet(name, source, NLI_LABELS, display_name=display)


TASKS: dict[str, TaskSpec] = {
    "mnli": TaskSpec(
        name="mnli",
        display_name="MNLI",
        label_names=NLI_LABELS,
        metric="accuracy",
        train=SplitSource("nyu-mll/glue", "mnli", "train", ("mnli/train.tsv", "mnli/train.jsonl"), 392_702),
        validation=SplitSource("nyu-mll/glue", "mnli", "validation_matched", ("mnli/dev_matched.tsv",), 9_815),
        ood=(
            EvalSet(
                "hans",
                # jhu-cogsci/hans's main branch is a loading script (hans.py): read the Hub's Parquet export of it.
                SplitSource(
                    "jhu-cogsci/hans",
                    None,
                    "validation",
                    ("hans/heuristics_evaluation_set.tsv",),
                    30_000,
                    hub_revision=PARQUET_EXPORT,
                ),
                HANS_LABELS,
                kind="hans",
                display_name="HANS",
            ),
        ),
        # The hard subsets of dev-matched and dev-mismatched in robust-nli's folders (Karimi Mahabadi et al. 2020,
        # Table 1: "MNLI hard"): 4,573 and 4,530 pairs, asked for with --ood_file mnli_hard_matched etc.
        optional_ood=(
            mnli_hard_set("mnli_hard_matched", "MNLIMatchedHardWithHardTest", "MNLI-m hard"),
            mnli_hard_set("mnli_hard_mismatched", "MNLIMismatchedHardWithHardTest", "MNLI-mm hard"),
        ),
        label_aliases={"non_entailment": "non-entailment"},
        # Gururangan et al. 2018: dev-matched examples a hypothesis-only model gets wrong are hard (appendix F)
        hard_subset=HardSubset(
            "mnli_hard/mnli_validation_matched_hardness.csv",
            "idx",
            "the hypothesis-only split of Gururangan et al. (2018)",
        ),
        # GLUE/MultiNLI/HANS write sentence1 = premise; TaxiNLI writes prem/hyp.
        text_fields=(
            ("premise", ("premise", "sentence1", "prem", "text_a")),
            ("hypothesis", ("hypothesis", "sentence2", "hyp", "text_b")),
        ),
    ),
    "qqp": TaskSpec(
        name="qqp",
        display_name="QQP",
        label_names=PARAPHRASE_LABELS,
        metric="f1",
        train=SplitSource("nyu-mll/glue", "qqp", "train", ("qqp/train.tsv",), 363_846),
        validation=SplitSource("nyu-mll/glue", "qqp", "validation", ("qqp/dev.tsv",), 40_430),
        ood=(
            # PAWS-QQP is not on the Hub (it must be generated from the QQP corpus): local files only.
            EvalSet(
                "paws_qqp",
                SplitSource(local_paths=("paws/paws_qqp_dev_and_test.tsv",)),
                PARAPHRASE_LABELS,
                kind="paws",
                display_name="PAWS-QQP",
            ),
            EvalSet(
                "paws_wiki",
                SplitSource(
                    "google-research-datasets/paws", "labeled_final", "test", ("paws/paws_wiki_test.tsv",), 8_000
                ),
                PARAPHRASE_LABELS,
                kind="paws",
                display_name="PAWS-Wiki",
            ),
        ),
        label_aliases={"0": "not_duplicate", "1": "duplicate"},
        # GLUE QQP: question1/question2; PAWS: sentence1/sentence2.
        text_fields=(
            ("question1", ("question1", "sentence1", "text_a")),
            ("question2", ("question2", "sentence2", "text_b")),
        ),
    ),
    "fever": TaskSpec(
        name="fever",
        display_name="FEVER",
        label_names=FEVER_LABELS,
        metric="accuracy",
        # FEVER as processed by Schuster et al. 2019 (github.com/TalSchuster/FeverSymmetric): local files.
        train=SplitSource(local_paths=("fever/fever.train.jsonl", "fever/train.jsonl")),
        validation=SplitSource(local_paths=("fever/fever.dev.jsonl", "fever/dev.jsonl")),
        ood=(
            EvalSet(
                "fever_symmetric_v1",
                SplitSource(local_paths=("fever/fever_symmetric_generated.jsonl",)),
                FEVER_LABELS,
                kind="fever_symmetric",
                display_name="FEVER-Symmetric v1",
            ),
            EvalSet(
                "fever_symmetric_v2",
                SplitSource(local_paths=("fever/fever_symmetric_test.jsonl",)),
                FEVER_LABELS,
                kind="fever_symmetric",
                display_name="FEVER-Symmetric v2",
            ),
        ),
        bias_model="claim",
        label_aliases={"supported": "SUPPORTS", "refuted": "REFUTES", "nei": "NOT ENOUGH INFO"},
        # By name only: FEVER files disagree on what sentence1/sentence2 mean (FEVER-Symmetric v0.2 has
        # sentence1 = evidence, sentence2 = claim), so a file must say which text is the claim.
        text_fields=(("claim", ("claim",)), ("evidence", ("evidence", "evidence_sentence"))),
    ),
    # GLUE QNLI (Robust Lottery Tickets, Table 6): on the Hub only here (no local copy in the shared data).
    "qnli": TaskSpec(
        name="qnli",
        display_name="QNLI",
        label_names=("entailment", "not_entailment"),
        metric="accuracy",
        train=SplitSource("nyu-mll/glue", "qnli", "train", ("qnli/train.tsv",), 104_743),
        validation=SplitSource("nyu-mll/glue", "qnli", "validation", ("qnli/dev.tsv",), 5_463),
        label_aliases={"not-entailment": "not_entailment"},
        text_fields=(
            ("question", ("question", "question1", "sentence1", "text_a")),
            ("sentence", ("sentence", "sentence2", "text_b")),
        ),
    ),
    # Single-text tasks of the Robust Lottery Tickets paper (Zheng et al. 2022, §4.1 and appendix B.2).
    "sst2": TaskSpec(
        name="sst2",
        display_name="SST-2",
        label_names=SENTIMENT_LABELS,
        metric="accuracy",
        # Local: ALPS's re-split of the GLUE train set (part 1, 60,614 of its 67,349 rows).
        train=SplitSource(
            "nyu-mll/glue", "sst2", "train", ("sst2/sst2_train_part1_alps_train.tsv", "sst2/train.tsv"), 67_349
        ),
        # The GLUE dev set: the paper's attack set (all 872 sentences; the GLUE test labels are hidden).
        validation=SplitSource("nyu-mll/glue", "sst2", "validation", ("sst2/sst2_dev_glue.tsv", "sst2/dev.tsv"), 872),
        # Only the claim-only (here: sentence-only) bias features fit one text.
        bias_model="claim",
        label_aliases={"neg": "negative", "pos": "positive"},
        text_fields=(("sentence", ("sentence", "text", "sentence1")),),
    ),
    "ag_news": TaskSpec(
        name="ag_news",
        display_name="AG News",
        label_names=AG_NEWS_LABELS,
        metric="accuracy",
        # Local: ALPS's files (the description only, no title): `text<TAB>label` with class names, no header,
        # fields with quotes csv-quoted (every `"` of the files is inside a wrapped field with inner quotes doubled).
        train=SplitSource(
            "fancyzhx/ag_news",
            None,
            "train",
            ("agnews/agnews_train_subset_alps_dev.tsv", "agnews/train.tsv"),
            120_000,
            file_format=AG_NEWS_FORMAT,
        ),
        # AG News has no dev split: the official test set (7,600 rows) is the dev and the attack set.
        validation=SplitSource(
            "fancyzhx/ag_news",
            None,
            "test",
            ("agnews/agnews_test.tsv", "agnews/test.tsv"),
            7_600,
            file_format=AG_NEWS_FORMAT,
        ),
        bias_model="claim",
        text_fields=(("text", ("text", "sentence", "description")),),
        file_format=AG_NEWS_FORMAT,
    ),
    "imdb": TaskSpec(
        name="imdb",
        display_name="IMDB",
        label_names=SENTIMENT_LABELS,
        metric="accuracy",
        # Local: the original reviews of the counterfactually-augmented data (Kaushik et al. 2020), `Sentiment`
        # (Positive/Negative) and `Text`, csv-quoted; the Hub's is the full IMDb (Maas et al. 2011).
        train=SplitSource(
            "stanfordnlp/imdb", None, "train", ("imdb_cad/orig/train.tsv",), 25_000, file_format=IMDB_CAD_FORMAT
        ),
        # The Hub IMDb has no dev split (its test set is the dev set there); locally, the CAD dev split.
        validation=SplitSource(
            "stanfordnlp/imdb", None, "test", ("imdb_cad/orig/dev.tsv",), 25_000, file_format=IMDB_CAD_FORMAT
        ),
        test=SplitSource(
            "stanfordnlp/imdb", None, "test", ("imdb_cad/orig/test.tsv",), 25_000, file_format=IMDB_CAD_FORMAT
        ),
        bias_model="claim",
        label_aliases={"neg": "negative", "pos": "positive"},
        text_fields=(("text", ("text", "review", "sentence")),),
        file_format=IMDB_CAD_FORMAT,
    ),
}


def get_task(name: str) -> TaskSpec:
    if name not in TASKS:
        raise InputError(
            f"Unknown task {name!r}; known tasks: {sorted(TASKS)}. Use --train_file/--validation_file "
            "with --task custom --task_labels for other data."
        )
    return TASKS[name]


def custom_task(label_names: list[str], metric: str = "accuracy") -> TaskSpec:
    """A task defined only by its label names, for user files (`--train_file` etc.)."""
    if len(label_names) < 2:
        raise InputError(f"A classification task needs at least 2 label names, got {label_names}")
    return TaskSpec(
        name="custom", label_names=tuple(label_names), metric=metric, train=SplitSource(), validation=SplitSource()
    )


def _split_labels(task_labels: str | Sequence[str]) -> list[str]:
    names = task_labels.split(",") if isinstance(task_labels, str) else list(task_labels)
    return [str(n).strip() for n in names]


def resolve_task(name: str, task_labels: str | Sequence[str] | None = None) -> TaskSpec:
    """The task `name`, with its labels restricted and/or reordered to `task_labels` if given.

    `task_labels` (comma-separated or a sequence) names labels of the task, resolved through its aliases and
    case-insensitively: `resolve_task("fever", "SUPPORTS,REFUTES")` is two-way FEVER. The task's OOD sets that
    use its labels get the same labels; other OOD sets (HANS) keep theirs. `--task custom` needs `task_labels`.
    Integer label ids in files still index the task's published labels (`TaskSpec.file_label_names`).
    """
    if name == "custom":
        if not task_labels:
            raise InputError("--task custom needs --task_labels, e.g. --task_labels negative,positive")
        return custom_task(_split_labels(task_labels))
    task = get_task(name)
    if task_labels is None or (isinstance(task_labels, str) and not task_labels.strip()):
        return task
    by_key = {n.lower(): n for n in task.label_names}
    by_key.update({k.lower(): v for k, v in task.label_aliases.items() if v in task.label_names})
    chosen: list[str] = []
    for raw in _split_labels(task_labels):
        label = by_key.get(raw.lower())
        if label is None:
            raise InputError(
                f"--task_labels: {raw!r} is not a label of task {name!r}; its labels are {list(task.label_names)}"
                + (f" (aliases: {task.label_aliases})" if task.label_aliases else "")
            )
        if label in chosen:
            raise InputError(f"--task_labels: {label!r} is named twice in {task_labels!r}")
        chosen.append(label)
    if len(chosen) < 2:
        raise InputError(f"--task_labels needs at least 2 labels of task {name!r}, got {chosen}")
    labels = tuple(chosen)
    if labels == task.label_names:
        return task
    return relabelled(task, labels, published_label_names=task.label_names)


def relabelled(task: TaskSpec, labels: tuple[str, ...], **changes: Any) -> TaskSpec:
    """`task` with `labels` (and `changes`), and with them every default and optional OOD set that uses the task's
    labels (a HANS-style set keeps its own)."""
    ood, optional = (
        tuple(replace(s, label_names=labels) if tuple(s.label_names) == tuple(task.label_names) else s for s in sets)
        for sets in (task.ood, task.optional_ood)
    )
    return replace(task, label_names=labels, ood=ood, optional_ood=optional, **changes)


def id_set_name(task: TaskSpec) -> str:
    """The ID dev set's name in metric keys (`eval_<name>_<metric>`): the task's, or `validation` for custom."""
    return task.name if task.name != "custom" else "validation"


def registered_set(task: TaskSpec, name: str) -> EvalSet:
    """The evaluation set `name` registered for `task` (`TaskSpec.registered_sets`: a default or an optional
    OOD set); an unknown name is an `InputError` listing the known ones."""
    for eval_set in task.registered_sets:
        if eval_set.name == name:
            return eval_set
    known = [s.name for s in task.registered_sets]
    raise InputError(
        f"--ood_file {name}: task {task.name!r} has no evaluation set {name!r}"
        + (f"; its registered sets are {known}" if known else " and registers none")
        + ". Give a file of another set as --ood_file NAME=PATH."
    )


def ood_file_set(spec: str, task: TaskSpec) -> EvalSet:
    """The evaluation set of an `--ood_file NAME=PATH` or `--ood_file NAME`.

    `NAME` alone is a set registered for the task (`registered_set`), read from its own source (under
    `--data_dir`). With `=PATH`: a NAME of one of the task's optional sets is that set read from PATH (in its
    format, e.g. a robust-nli folder); any other NAME starting with `hans` is scored like HANS (2-way labels,
    3-way predictions collapsed), and any other with the task's labels and metric.
    """
    name, sep, path = spec.partition("=")
    if not sep:
        return registered_set(task, name)
    optional = next((s for s in task.optional_ood if s.name == name), None)
    if optional is not None:
        return replace(optional, source=SplitSource(local_paths=(path,), file_format=optional.source.file_format))
    if name.startswith("hans"):
        return EvalSet(name, SplitSource(local_paths=(path,)), HANS_LABELS, kind="hans")
    return EvalSet(name, SplitSource(local_paths=(path,)), task.label_names)


# Evaluation sets a data transform makes (`hf_srnets.data.transforms`): name -> display name, filled when the
# transform is registered, so results keys and tables name them as the registered sets are named
DERIVED_SET_NAMES: dict[str, str] = {}


def display_name(name: str) -> str:
    """A task's or evaluation set's name as the papers write it (`hans` -> `HANS`, `paws_qqp` -> `PAWS-QQP`).

    Names of no known task or set (e.g. `--ood_file` sets) are upper-cased up to their first `-`:
    `anli-r1` -> `ANLI-r1`.
    """
    for task in TASKS.values():
        if name == task.name and task.display_name:
            return task.display_name
        for eval_set in task.registered_sets:
            if name == eval_set.name and eval_set.display_name:
                return eval_set.display_name
    if name in DERIVED_SET_NAMES:
        return DERIVED_SET_NAMES[name]
    head, dash, tail = name.partition("-")
    return f"{head.upper()}{dash}{tail}"


def known_set_names() -> list[str]:
    """The names of every known task and registered evaluation set, longest first (to find a set's name in a results
    key: `mnli_hard_matched` before `mnli`)."""
    names = {t.name for t in TASKS.values()} | {s.name for t in TASKS.values() for s in t.registered_sets}
    names |= set(DERIVED_SET_NAMES)
    return sorted(names, key=lambda n: (-len(n), n))
