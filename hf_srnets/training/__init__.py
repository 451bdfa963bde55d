"""Training: `SRNetTrainer` (a `Trainer` whose `compute_loss` runs the run's objective and the pruning method's
penalty), its `SRNetTrainingArguments`, the collator of the per-example columns, length-sorted evaluation and the
whole-run loss across a resume."""

from .arguments import SRNetTrainingArguments
from .collator import SRNetDataCollator
from .trainer import SRNetTrainer

__all__ = ["SRNetDataCollator", "SRNetTrainer", "SRNetTrainingArguments"]
