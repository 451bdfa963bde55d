"""`SRNetTrainingArguments`: `TrainingArguments` plus the debiasing loss and SRNet search options."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
from transformers import TrainingArguments

from ..errors import InputError
from ..losses import LOSSES
from ..objectives import OBJECTIVES
from ..objectives.freelb import NORM_TYPES, check_adversarial_options


@dataclass
class SRNetTrainingArguments(TrainingArguments):
    """Training arguments for SRNet search and debiased fine-tuning.

    Parameters that control the loss:
        loss: Name of a registered loss: `ce`, `poe`, `reweight` or `confreg` (Win-win §3.3, appendix A.2).
            `poe` and `reweight` need bias predictions; `confreg` needs bias and teacher predictions.

    Parameters of the compression losses (Du et al. 2023, "Robustness Challenges", §5 and appendix C); each loss
    takes the ones it names in its `options`:
        distil_lambda: λ of Eq. 3, the weight of the distillation term against cross-entropy (`distil`, `smooth`,
            `rmc`; 0.9 in all the paper's experiments).
        smooth_degree: the one global smoothing exponent of `smooth` (s_j ∝ p_t^d; §6.2: d = 0.9, "the same
            level of regularization as in RMC").
        focal_gamma: γ of the focal loss (2.0 in the paper).
        jtt_upweight: λ_up of JTT, the weight of the examples the ERM model got wrong before normalising
            (2.0 in the paper).

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

    Parameters that control adversarial training (Robust Tickets §3.2.1, FreeLB: Zhu et al. 2020):
        adversarial: `none`, or a registered step objective (`hf_srnets.objectives.OBJECTIVES`) run around `loss`:
            `freelb` (`hf_srnets.objectives.FreeLB`). Composes with every loss and pruning method.
        adv_steps, adv_lr, adv_init_mag, adv_max_norm, adv_norm_type: FreeLB's K (≥ 1), η (≥ 0), ε₀ (≥ 0), the
            bound on ||δ|| (0 = unbounded, the paper) and the norm (`l2` or `linf`); Table 6 uses K = 2-5,
            η = 0.03-0.2, ε₀ = 0.05.

    Defaults that differ from `TrainingArguments`: `learning_rate=5e-5` is the same; `remove_unused_columns`
    keeps the probability columns the losses need (see `SRNetTrainer`).
    """

    loss: str = field(default="ce", metadata={"help": f"Training loss, one of {sorted(LOSSES)}."})
    distil_lambda: float = field(
        default=0.9,
        metadata={"help": "λ of RMC Eq. 3: (1-λ)·CE + λ·KL(target ‖ p_student), for distil/smooth/rmc (paper: 0.9)."},
    )
    smooth_degree: float = field(
        default=0.9,
        metadata={"help": "smooth: the global exponent d of s_j ∝ p_t,j^d, in (0, 1] (§6.2: 0.9, as RMC's d_i)."},
    )
    focal_gamma: float = field(default=2.0, metadata={"help": "focal: γ of (1 - p_c)^γ (paper: 2.0)."})
    jtt_upweight: float = field(
        default=2.0, metadata={"help": "jtt: λ_up, the weight of the examples the ERM model got wrong (paper: 2.0)."}
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

    # -- adversarial training on the input word embeddings (Robust Tickets §3.2.1, FreeLB, Zhu et al. 2020) ------
    adversarial: str = field(
        default="none",
        metadata={
            "help": "Adversarial training around --loss (any loss, any --pruning): none, or a registered step "
            f"objective, one of {sorted(OBJECTIVES)}. freelb: FreeLB on the word embeddings (Zhu et al. 2020; "
            "Robust Tickets Eq. 6-7)."
        },
    )
    adv_steps: int = field(
        default=2,
        metadata={"help": "FreeLB passes K per batch (K-1 ascent steps on the perturbation; Table 6: 2-5); >= 1."},
    )
    adv_lr: float = field(
        default=0.03,
        metadata={"help": "FreeLB ascent step size η of the normalised gradient step (Eq. 7; Table 6: 0.03-0.2)."},
    )
    adv_init_mag: float = field(
        default=0.05,
        metadata={"help": "FreeLB initial perturbation magnitude ε₀ (Table 6: 0.05); 0 starts at δ = 0."},
    )
    adv_max_norm: float = field(
        default=0.0,
        metadata={"help": "FreeLB bound on the perturbation's norm per example; 0 = unbounded, as in the paper."},
    )
    adv_norm_type: str = field(
        default="l2",
        metadata={
            "help": f"FreeLB norm of the ascent step, the initial perturbation and the bound: {list(NORM_TYPES)}."
        },
    )

    def step_objective(self) -> tuple[str | None, dict[str, object]]:
        """The registered step objective `--adversarial` names (None for `none`) and its options."""
        if self.adversarial == "none":
            return None, {}
        options = {
            "adv_steps": self.adv_steps,
            "adv_lr": self.adv_lr,
            "adv_init_mag": self.adv_init_mag,
            "adv_max_norm": self.adv_max_norm,
            "adv_norm_type": self.adv_norm_type,
        }
        return self.adversarial, options

    def loss_options(self) -> dict[str, object]:
        """The options of `--loss` (the fields its class names in `options`), for its constructor."""
        return {option: getattr(self, option) for option in LOSSES[self.loss].options}

    def __post_init__(self) -> None:
        if self.use_cpu or not (torch.cuda.is_available() or torch.backends.mps.is_available()):
            self.dataloader_pin_memory = False  # pinning needs an accelerator; avoid torch's warning on CPU
        super().__post_init__()
        if self.loss not in LOSSES:
            raise InputError(f"--loss {self.loss!r} is unknown; choose one of {sorted(LOSSES)}")
        if not 0.0 <= self.distil_lambda <= 1.0:
            raise InputError(f"--distil_lambda must be in [0, 1], got {self.distil_lambda}")
        if not 0.0 < self.smooth_degree <= 1.0:
            raise InputError(f"--smooth_degree must be in (0, 1], got {self.smooth_degree}")
        if self.focal_gamma < 0 or self.jtt_upweight <= 0:
            raise InputError(
                f"--focal_gamma must be >= 0 and --jtt_upweight > 0, got {self.focal_gamma}, {self.jtt_upweight}"
            )
        if not 0.0 <= self.select_best_after < 1.0:
            raise InputError(f"--select_best_after must be in [0, 1), got {self.select_best_after}")
        if self.mask_weight_decay < 0:
            raise InputError(f"--mask_weight_decay must be >= 0, got {self.mask_weight_decay}")
        if self.mask_learning_rate is not None and self.mask_learning_rate <= 0:
            raise InputError(f"--mask_learning_rate must be > 0, got {self.mask_learning_rate}")
        self._validate_adversarial()

    def _validate_adversarial(self) -> None:
        if self.adversarial != "none" and self.adversarial not in OBJECTIVES:
            raise InputError(
                f"--adversarial {self.adversarial!r} is unknown; choose none or one of {sorted(OBJECTIVES)}"
            )
        check_adversarial_options(self.adv_steps, self.adv_lr, self.adv_init_mag, self.adv_max_norm, self.adv_norm_type)


def training_precision(args: Any) -> str:
    """`bf16`, `fp16` or `fp32`: the compute precision of the Trainer's forward passes (`--bf16` / `--fp16`)."""
    return "bf16" if args.bf16 else "fp16" if args.fp16 else "fp32"
