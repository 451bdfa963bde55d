"""The mask that is evaluated, selected as best and saved is one and the same, at the exact scheduled sparsity."""

import math

import pytest
import torch
from conftest import tiny_model
from transformers import TrainerCallback

from hf_srnets.masking import SRNetModel
from hf_srnets.pruning import ThresholdConfig, sparsity_at
from hf_srnets.training.collator import SRNetDataCollator
from hf_srnets.training.trainer import SRNetTrainer

from .helpers import cpu_args, synthetic_nli, tiny_tokenizer


class RecordEvaluatedMasks(TrainerCallback):
    """Keep the binary masks each evaluation saw (nothing changes them between evaluation and `on_evaluate`)."""

    def __init__(self, srnet):
        self.srnet = srnet
        self.masks = []  # (global_step, masks)

    def on_evaluate(self, args, state, control, **kwargs):
        self.masks.append((state.global_step, self.srnet.binary_masks()))


def _scores_by_evaluation(values):
    """compute_metrics returning a fixed score per evaluation, so the best checkpoint is known in advance."""
    calls = []

    def compute_metrics(eval_pred):
        calls.append(1)
        return {"score": values[len(calls) - 1] if len(calls) <= len(values) else 0.0}

    return compute_metrics


@pytest.mark.parametrize(
    "strategy, schedule",
    [
        # evaluations at steps 3, 6, 9, 12 with φ due every 4 steps: the best (step 6) falls mid-interval
        (dict(eval_strategy="steps", eval_steps=3, save_steps=3, max_steps=12), dict(threshold_update_interval=4)),
        # --eval_strategy epoch (8 steps per epoch) with a Δt_φ that never lines up with an epoch end
        (dict(eval_strategy="epoch", num_train_epochs=3, max_steps=-1), dict(threshold_update_interval=5)),
        # a cubic ramp 0.3 -> 0.6 ending at step 6: evaluations on the ramp are at s_t, the best is after it
        (
            dict(eval_strategy="steps", eval_steps=3, save_steps=3, max_steps=12),
            dict(threshold_update_interval=4, initial_sparsity=0.3, sparsity_schedule="cubic", schedule_end=0.5),
        ),
    ],
)
def test_saved_mask_is_the_evaluated_best_mask(tmp_path, strategy, schedule):
    config = ThresholdConfig(sparsity=0.6, **schedule)
    srnet = SRNetModel(tiny_model("bert"), config)
    recorder = RecordEvaluatedMasks(srnet)
    tokenizer = tiny_tokenizer(tmp_path)
    data = synthetic_nli(tokenizer, n=64)
    args = cpu_args(
        tmp_path / "out",
        per_device_eval_batch_size=32,
        mask_learning_rate=0.05,  # scores cross φ between updates: the drift the callback must not let through
        logging_steps=100,
        save_strategy=strategy["eval_strategy"],
        load_best_model_at_end=True,
        metric_for_best_model="score",
        greater_is_better=True,
        **strategy,
    )
    trainer = SRNetTrainer(
        model=srnet,
        args=args,
        train_dataset=data,
        eval_dataset=data,
        data_collator=SRNetDataCollator(tokenizer),
        processing_class=tokenizer,
        compute_metrics=_scores_by_evaluation([0.1, 0.9, 0.2, 0.3]),
        callbacks=[recorder],
    )
    trainer.train()
    max_steps = trainer.state.max_steps
    assert len(recorder.masks) >= 3
    for step, masks in recorder.masks:
        target = sparsity_at(step, max_steps, config)
        for name, mask in masks.items():
            assert int((~mask).sum()) == math.floor(target * mask.numel()), (step, name)
    best_step = int(trainer.state.best_model_checkpoint.rsplit("-", 1)[1])
    assert best_step == recorder.masks[1][0] and best_step % config.threshold_update_interval != 0
    best_masks = recorder.masks[1][1]

    for name, mask in srnet.binary_masks().items():  # what the model holds after training
        assert torch.equal(mask, best_masks[name]), name
    trainer.save_model()
    saved = SRNetModel.from_pretrained(tiny_model("bert"), args.output_dir)
    checkpoint = SRNetModel.from_pretrained(tiny_model("bert"), trainer.state.best_model_checkpoint)
    for name, mask in best_masks.items():
        assert torch.equal(saved.binary_masks()[name], mask), name
        assert torch.equal(checkpoint.binary_masks()[name], mask), name
    trainer.evaluate()  # an evaluation after training sees the saved mask too
    for name, mask in recorder.masks[-1][1].items():
        assert torch.equal(mask, best_masks[name]), name
