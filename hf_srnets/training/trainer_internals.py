"""The private parts of transformers that hf_srnets relies on, in one list.

`SRNetTrainer` overrides private `Trainer` methods (TRL does the same for `_set_signature_columns_if_needed`),
calls one, and reads a few private attributes; the classifier loader and `SRNetModel` use two more private names
of transformers. None of these is a public API: a transformers release may rename one, or change its parameters,
without notice, and an override of a renamed method is then silently never called. `tests/training/
test_trainer_internals.py` checks each entry against the installed transformers (the method exists on `Trainer`
with these parameter names, the attribute is set by `Trainer`), and that every private method `SRNetTrainer`
defines is listed here, as an override or as its own. pyproject.toml bounds transformers below its next major
version for the same reason.
"""

from __future__ import annotations

# Private `Trainer` methods `SRNetTrainer` overrides -> the parameter names (after `self`) it relies on.
OVERRIDDEN_METHODS: dict[str, tuple[str, ...]] = {
    "_set_signature_columns_if_needed": (),  # keeps the loss's columns (bias_probs, ...) through column pruning
    "_get_eval_sampler": ("eval_dataset",),  # the length-sorted evaluation sampler
    "_determine_best_metric": ("metrics", "trial"),  # no best checkpoint before `select_best_after`
    "_save_checkpoint": ("model", "trial"),  # records the run's loss sum in the checkpoint; exact masks
    "_save": ("output_dir", "state_dict"),  # an SRNetModel saves its config and masks only
    "_load_from_checkpoint": ("resume_from_checkpoint", "model"),  # resume: the mask scores and thresholds
    "_load_best_model": (),  # the best checkpoint's masks
}

# Private `Trainer` methods hf_srnets calls -> the parameter names it passes.
CALLED_METHODS: dict[str, tuple[str, ...]] = {
    "_prepare_inputs": ("inputs",),  # objectives/step.py: a step objective's `training_step`, as the Trainer's
}

# Public `Trainer` methods whose arguments `SRNetTrainer` reads by position -> their parameter names, in order.
POSITIONAL_METHODS: dict[str, tuple[str, ...]] = {
    # `evaluation_loop` finds `metric_key_prefix` in `args[3]` when it is passed by position
    "evaluation_loop": ("dataloader", "description", "prediction_loss_only", "ignore_keys", "metric_key_prefix"),
}

# Private attributes of a `Trainer` that `SRNetTrainer` reads or sets -> what for.
TRAINER_ATTRIBUTES: dict[str, str] = {
    "_signature_columns": "the columns the model's forward takes, extended by `_set_signature_columns_if_needed`",
    "_tr_loss": "the training loss accumulated since the last log (the run's loss sum a checkpoint records)",
    "_total_loss_scalar": "the training loss summed up to the last log (the same)",
}

# Private methods `SRNetTrainer` defines for itself: none may exist on `Trainer` (that would be an override).
OWN_METHODS: tuple[str, ...] = ("_add_method_callbacks", "_sorts_eval", "_run_loss_sum", "_run_runtime")

# Private attributes `SRNetTrainer` sets for itself: none may exist on `Trainer`.
OWN_ATTRIBUTES: tuple[str, ...] = ("_loss_metrics", "_saving_checkpoint", "_resumed_loss", "_train_call_start")

# Other private names of transformers: (where in transformers, name) -> where hf_srnets uses it.
OTHER_INTERNALS: dict[tuple[str, str], str] = {
    # a missing file is None, not an error, while `compact.loading` looks for the first weights file present
    ("transformers.utils.hub.cached_files", "_raise_exceptions_for_missing_entries"): "compact/loading.py",
    # the name or path a model was loaded from, recorded as the masks' base model
    ("transformers.PretrainedConfig", "_name_or_path"): "masking/model.py",
}
