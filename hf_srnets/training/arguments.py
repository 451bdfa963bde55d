"""`SRNetTrainingArguments`: `TrainingArguments` plus the debiasing loss and SRNet search options."""

from __future__ import annotations

import dataclasses
import json
import math
import os
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import torch
from transformers import TrainingArguments

from ..errors import InputError, check_field_types, json_object_option
from ..losses import LOSSES
from ..objectives import OBJECTIVES


@dataclass
class SRNetTrainingArguments(TrainingArguments):
    """Training arguments for SRNet search and debiased fine-tuning.

    Parameters that control the loss:
        loss: Name of a registered loss (`hf_srnets.losses.LOSSES`): `ce`, the debiasing losses `poe`, `reweight`
            and `confreg` (Win-win §3.3, appendix A.2) and the compression losses `distil`, `smooth`, `rmc`, `focal`
            and `jtt` (Du et al. 2023, §5). `poe` and `reweight` need bias predictions; `confreg` bias and teacher
            predictions; `distil`, `smooth` and `jtt` teacher predictions; `rmc` teacher predictions and the
            sample difficulty.

        loss_options: the loss's settings, the fields of its `options_class` (a mapping or its JSON; those not
            given keep their defaults), e.g. `{"distil_lambda": 0.5}` for `distil`, `smooth` and `rmc`
            (`hf_srnets.losses.DistillationOptions`; the compression losses of Du et al. 2023, §5 and appendix C:
            λ of Eq. 3 `distil_lambda`, `smooth`'s global degree `smooth_degree`, `focal`'s γ `focal_gamma`, JTT's
            λ_up `jtt_upweight`). `run_glue_sparse.py` fills it from their own flags (`--distil_lambda 0.5`).
            `loss_settings()` gives all of them, defaults filled.

    Parameters that control the mask search:
        mask_learning_rate: Learning rate of the mask scores m̂. `None` uses `learning_rate` (the paper uses
            the same rate, appendix Table 3); short CPU runs need a larger one (the scores must travel
            about α·φ − φ = 0.01 to flip a hard-initialised mask).
        select_best_after: Only checkpoints after this fraction of the training steps may be selected as
            best (still by `metric_for_best_model`). Appendix B.3.3 uses 0.7 when searching on a fine-tuned
            model. With a cubic sparsity schedule, selection also waits until the target sparsity is reached.

    Parameters that control evaluation:
        eval_sort_by_length: `evaluate` and `predict` batch the examples from the longest `input_ids` to the
            shortest (less padding per batch) and return predictions, label ids and metrics in the dataset's
            order (`SRNetTrainer`); `False` batches in dataset order, as the Trainer does.

    Parameters that control the step objective (what one training step runs around `loss`):
        step_objective: `none`, or a registered step objective (`hf_srnets.objectives.OBJECTIVES`): `freelb`,
            adversarial training on the word embeddings (Robust Tickets §3.2.1, FreeLB: Zhu et al. 2020,
            `hf_srnets.objectives.FreeLB`), or `dense_distil`, distillation from the dense model during a search
            (`hf_srnets.objectives.DenseDistillation`). Composes with every loss. `--adversarial` is its alias (the
            Robust Tickets recipes' name), on the command line and as a config key.
        step_objective_options: the step objective's settings, the fields of its `options_class` (a mapping or its
            JSON; those not given keep their defaults), e.g. FreeLB's `{"adv_steps": 3, "adv_lr": 0.1}`
            (`hf_srnets.objectives.freelb.FreeLBOptions`). `run_glue_sparse.py` fills it from their own flags
            (`--adv_steps 3`). Alias: `--adversarial_options`.

    Defaults that differ from `TrainingArguments`: `learning_rate=5e-5` is the same; `remove_unused_columns`
    keeps the probability columns the losses need (see `SRNetTrainer`).
    """

    loss: str = field(default="ce", metadata={"help": f"Training loss, one of {sorted(LOSSES)}."})
    loss_options: dict[str, Any] | str | None = field(
        default=None,
        metadata={
            "help": "The --loss's settings as JSON, e.g. '{\"distil_lambda\": 0.5}' (defaults for those not given); "
            "the command line sets them with their own flags (--distil_lambda 0.5) instead."
        },
    )
    mask_learning_rate: float | None = field(
        default=None, metadata={"help": "Learning rate of the mask scores; defaults to --learning_rate."}
    )
    mask_weight_decay: float = field(
        default=0.0,
        metadata={"help": "Weight decay of the mask parameters (Robust Tickets Table 6: 1e-6 for l0); default 0."},
    )
    select_best_after: float = field(
        default=0.0,
        metadata={
            "help": "Fraction of training after which checkpoints may be chosen as best (0.7 in the paper "
            "when searching on a fine-tuned model)."
        },
    )
    eval_sort_by_length: bool = field(
        default=True,
        metadata={
            "help": "Batch evaluation/prediction examples by length (longest first) and restore the dataset's "
            "order of predictions and labels afterwards: same results, less padding. --no_eval_sort_by_length "
            "(or false) evaluates in dataset order."
        },
    )

    # -- the step objective around the loss: adversarial training (FreeLB), distillation from the dense model -------
    step_objective: str = field(
        default="none",
        metadata={
            "help": "A step objective around --loss (any loss, any --pruning): none, or a registered one, one of "
            f"{sorted(OBJECTIVES)}. freelb: adversarial training, FreeLB on the word embeddings (Zhu et al. 2020; "
            "Robust Tickets Eq. 6-7); dense_distil: distillation from the dense model, (1-α)·L + α·T²·KL. "
            "Alias: --adversarial.",
            "aliases": ["--adversarial"],
        },
    )
    step_objective_options: dict[str, Any] | str | None = field(
        default=None,
        metadata={
            "help": "The --step_objective's settings as JSON, e.g. '{\"adv_steps\": 3}' (defaults for those not "
            "given); the command line sets them with their own flags (--adv_steps 3) instead. "
            "Alias: --adversarial_options.",
            "aliases": ["--adversarial_options"],
        },
    )

    def step_objective_settings(self) -> tuple[str | None, dict[str, object]]:
        """The registered step objective `--step_objective` names (None for `none`) and all its options."""
        if self.step_objective == "none":
            return None, {}
        options_class = OBJECTIVES[self.step_objective].options_class
        options = dict(self.step_objective_options or {})
        return self.step_objective, asdict(options_class(**options)) if options_class is not None else options

    def loss_settings(self) -> dict[str, object]:
        """All the options of `--loss` (the fields of its `options_class`, defaults filled, checked), for its
        constructor; `{}` for a loss without options."""
        options_class = LOSSES[self.loss].options_class
        options = dict(self.loss_options or {})
        return asdict(options_class(**options)) if options_class is not None else options

    def __post_init__(self) -> None:
        if self.use_cpu or not (torch.cuda.is_available() or torch.backends.mps.is_available()):
            self.dataloader_pin_memory = False  # pinning needs an accelerator; avoid torch's warning on CPU
        check_field_types(self, OWN_FIELDS)  # transformers' own fields are its checks' to make
        self._check_deepspeed()
        super().__post_init__()
        if self.loss not in LOSSES:
            raise InputError(f"--loss {self.loss!r} is unknown; choose one of {sorted(LOSSES)}")
        self._validate_loss_options()
        if not 0.0 <= self.select_best_after < 1.0:
            raise InputError(f"--select_best_after must be in [0, 1), got {self.select_best_after}")
        if self.mask_weight_decay < 0:
            raise InputError(f"--mask_weight_decay must be >= 0, got {self.mask_weight_decay}")
        if self.mask_learning_rate is not None and not (
            math.isfinite(self.mask_learning_rate) and self.mask_learning_rate > 0
        ):
            raise InputError(
                f"--mask_learning_rate must be > 0, got {self.mask_learning_rate}: e.g. --mask_learning_rate 1e-2"
            )
        self._validate_schedule()
        self._validate_step_objective()

    def _validate_schedule(self) -> None:
        """A learning rate that is a number >= 0, batch sizes and accumulation steps of at least 1 (torch's
        tracebacks before), and a training length that trains (a negative or zero `--num_train_epochs` without
        `--max_steps` trained 0 steps and saved the model as "trained")."""
        if not (math.isfinite(self.learning_rate) and self.learning_rate >= 0):
            raise InputError(
                f"--learning_rate must be a number >= 0, got {self.learning_rate}: e.g. --learning_rate 5e-5"
            )
        if not math.isfinite(self.num_train_epochs) or self.num_train_epochs < 0:
            raise InputError(
                f"--num_train_epochs must be a number >= 0, got {self.num_train_epochs}: e.g. --num_train_epochs 3"
            )
        for flag in ("per_device_train_batch_size", "per_device_eval_batch_size", "gradient_accumulation_steps"):
            if getattr(self, flag) < 1:
                raise InputError(f"--{flag} must be at least 1, got {getattr(self, flag)}: e.g. --{flag} 8")
        if self.do_train and self.num_train_epochs == 0 and self.max_steps <= 0:
            raise InputError(
                "--num_train_epochs 0 with --do_train trains no step: give --num_train_epochs > 0 or --max_steps N, "
                "or drop --do_train to only evaluate"
            )
        if self.do_train and self.max_steps == 0:  # transformers then runs one step at learning rate 0
            raise InputError(
                "--max_steps 0 with --do_train trains no step: give --max_steps >= 1, or leave it out to train for "
                "--num_train_epochs, or drop --do_train to only evaluate"
            )

    def _check_deepspeed(self) -> None:
        """Before transformers reads `--deepspeed CONFIG` (issue 70): a config file that is not JSON is named with its
        line, and a machine without a GPU needs `--use_cpu` (DeepSpeed then looks for MPI: "No module named
        'mpi4py'")."""
        config = self.deepspeed
        if not isinstance(config, (str, os.PathLike)):
            return
        if os.path.isfile(config):
            try:
                with open(config, encoding="utf-8") as f:
                    json.load(f)
            except ValueError as err:  # json.JSONDecodeError, UnicodeDecodeError
                raise InputError(
                    f"--deepspeed {config} is not a valid JSON config ({err}): fix or replace the file"
                ) from None
        if not self.use_cpu and not torch.cuda.is_available():
            raise InputError(
                f"--deepspeed {config} on a machine without a GPU: add --use_cpu --ddp_backend gloo and launch several "
                "processes (accelerate launch --num_processes 2 ...), or drop --deepspeed"
            )

    def _validate_loss_options(self) -> None:
        options_class = LOSSES[self.loss].options_class
        example = _options_example(options_class, '{"distil_lambda": 0.5}')
        self.loss_options = json_object_option(self.loss_options, "--loss_options", example)
        if options_class is None:
            if self.loss_options:
                raise InputError(
                    f"--loss {self.loss} has no options, got loss_options {sorted(self.loss_options)}: drop them"
                )
            return
        _check_options(options_class, self.loss_options, f"--loss {self.loss}")

    def _validate_step_objective(self) -> None:
        name = self.step_objective
        options_class = OBJECTIVES[name].options_class if name in OBJECTIVES else None
        example = _options_example(options_class, '{"adv_steps": 3}')
        self.step_objective_options = json_object_option(
            self.step_objective_options, "--step_objective_options", example
        )
        if name != "none" and name not in OBJECTIVES:
            raise InputError(f"--step_objective {name!r} is unknown; choose none or one of {sorted(OBJECTIVES)}")
        if self.step_objective_options and name == "none":
            raise InputError(
                "step_objective_options configure a step objective: set --step_objective too, or drop them"
            )
        if options_class is not None:
            _check_options(options_class, self.step_objective_options, f"--step_objective {name}")


def _options_example(options_class: type | None, fallback: str) -> str:
    """A valid JSON value of an options flag for the error messages: `options_class`'s first field with its
    default (`{"focal_gamma": 2.0}`), else `fallback`."""
    for f in fields(options_class) if options_class is not None else ():
        if isinstance(f.default, (int, float, str, bool)):
            return json.dumps({f.name: f.default})
    return fallback


# the fields SRNetTrainingArguments adds to transformers' (their types checked in `__post_init__`)
OWN_FIELDS = frozenset(f.name for f in fields(SRNetTrainingArguments)) - {f.name for f in fields(TrainingArguments)}


def _check_options(options_class: type, given: dict[str, Any] | None, owner: str) -> None:
    """`InputError` for a name `options_class` has no field for, or a value its `__post_init__` refuses."""
    known = [f.name for f in fields(options_class)]
    unknown = sorted(set(given or {}) - set(known))
    if unknown:
        raise InputError(f"{owner} has no option {', '.join(unknown)}; its options: {known}")
    unchecked = object.__new__(options_class)  # the values as given, their types checked before __post_init__
    for f in fields(options_class):  # compares them (a JSON "2" for a float was a raw "'>=' not supported")
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        object.__setattr__(unchecked, f.name, (given or {}).get(f.name, default))
    try:
        check_field_types(unchecked, (given or {}).keys())
        options_class(**(given or {}))
    except (TypeError, ValueError) as err:
        raise InputError(f"{owner}: {err}" if str(err).startswith(options_class.__name__) else str(err)) from None


def training_precision(args: Any) -> str:
    """`bf16`, `fp16` or `fp32`: the compute precision of the Trainer's forward passes: `--bf16` / `--fp16`, else the
    mixed precision `accelerate launch` gives (`--mixed_precision bf16`, a config's `mixed_precision: fp16`), which
    the Trainer reads from `ACCELERATE_MIXED_PRECISION` into `args.mixed_precision` without setting either flag."""
    if args.bf16 or args.fp16:
        return "bf16" if args.bf16 else "fp16"
    mixed = getattr(args, "mixed_precision", None)
    return mixed if mixed not in (None, "no") else "fp32"
