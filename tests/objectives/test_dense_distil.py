"""`--step_objective dense_distil`: (1-α)·L_loss + α·T²·KL(p_t^T ‖ p_s^T), the dense model (masks off) teaching."""

from __future__ import annotations

import copy
import math

import pytest
import torch
from compact.helpers import lively
from objectives.test_loss_objective import _batch
from pruning.test_granularity import bert4
from training.helpers import cpu_args, synthetic_nli, tiny_tokenizer

from hf_srnets.arguments import parse_args, validate_args
from hf_srnets.errors import InputError
from hf_srnets.masking import SRNetModel
from hf_srnets.objectives import OBJECTIVES, DenseDistillation, DenseDistillationOptions, build_objective
from hf_srnets.objectives.dense_distil import hidden_state_distillation, layer_map, soft_distillation
from hf_srnets.pruning import MagnitudeConfig, ThresholdConfig, unmasked
from hf_srnets.training.collator import SRNetDataCollator
from hf_srnets.training.trainer import SRNetTrainer


def _hybrid(model: torch.nn.Module) -> SRNetModel:
    return SRNetModel(model, ThresholdConfig(sparsity=0.5, mask_granularity="hybrid", mask_init="soft"))


def test_soft_term_by_hand():
    # z_s = 0 (p_s uniform), z_t = (ln 3, 0, 0). T = 1: p_t = (3/5, 1/5, 1/5), KL = 0.6·ln(1.8) + 0.4·ln(0.6).
    # T = 2: z_t/2 = (ln √3, 0, 0), p_t = (√3, 1, 1)/(√3 + 2), and the term is 4·Σ p_t·ln(3·p_t).
    student, teacher = torch.zeros(1, 3), torch.tensor([[math.log(3.0), 0.0, 0.0]])
    assert soft_distillation(student, teacher, 1.0).item() == pytest.approx(
        0.6 * math.log(1.8) + 0.4 * math.log(0.6), rel=1e-5
    )
    p = [math.sqrt(3) / (math.sqrt(3) + 2), 1 / (math.sqrt(3) + 2), 1 / (math.sqrt(3) + 2)]
    assert soft_distillation(student, teacher, 2.0).item() == pytest.approx(
        4 * sum(q * math.log(3 * q) for q in p), rel=1e-5
    )
    assert soft_distillation(teacher, teacher, 3.0).item() == pytest.approx(0.0, abs=1e-7)


def test_masks_off_give_the_dense_model_and_come_back():
    dense = lively(bert4())
    srnet = _hybrid(copy.deepcopy(dense))
    batch = {k: v for k, v in _batch().items() if k in ("input_ids", "attention_mask")}
    masked = srnet(**batch).logits
    with unmasked(srnet):
        assert torch.allclose(srnet(**batch).logits, dense(**batch).logits, atol=1e-6)
    assert not torch.allclose(masked, dense(**batch).logits, atol=1e-3)  # the masks matter ...
    assert torch.equal(srnet(**batch).logits, masked)  # ... and are back after the block


@pytest.mark.parametrize("loss", ["ce", "poe", "reweight", "confreg"])
def test_loss_is_the_debiasing_loss_mixed_with_the_dense_teacher(loss):
    dense = lively(bert4())
    srnet = _hybrid(copy.deepcopy(dense)).train()
    batch = _batch()
    objective = build_objective(loss, step="dense_distil", step_options={"distil_alpha": 0.3, "distil_temperature": 2})
    assert isinstance(objective, DenseDistillation)  # it came through the step-objective registry
    torch.manual_seed(0)
    total, outputs, parts = objective.compute_loss(srnet, batch, training=True)
    torch.manual_seed(0)
    inner, _, _ = build_objective(loss).compute_loss(srnet, batch, training=True)  # same dropout draws
    inputs = {k: batch[k] for k in ("input_ids", "attention_mask")}
    with torch.no_grad():
        teacher = dense.eval()(**inputs).logits
    p_t = torch.softmax(teacher / 2, -1)
    kl = (p_t * (torch.log_softmax(teacher / 2, -1) - torch.log_softmax(outputs.logits / 2, -1))).sum(-1).mean()
    assert kl.item() > 1e-3  # the masks moved the student away from its teacher
    assert total.item() == pytest.approx(0.7 * inner.item() + 0.3 * 4 * kl.item(), rel=1e-5)
    assert parts["dense_kl"].item() == pytest.approx(4 * kl.item(), rel=1e-5)
    total.backward()
    assert all(p.grad is not None for p in srnet.masked_layers_scores())  # the student's scores learn from it
    assert srnet.training  # the teacher's eval mode was undone
    evaluation, _, _ = objective.compute_loss(srnet.eval(), batch, training=False)
    plain, _, _ = build_objective(loss).compute_loss(srnet, batch, training=False)
    assert evaluation.item() == pytest.approx(plain.item())  # evaluation reports the debiasing loss alone


def test_registry_and_command_line_give_the_options(tmp_path):
    assert OBJECTIVES["dense_distil"] is DenseDistillation
    base = ["--model_name_or_path", "m", "--output_dir", str(tmp_path), "--pruning", "mask", "--loss", "poe"]
    run = parse_args([*base, "--step_objective", "dense_distil", "--distil_alpha", "0.25", "--distil_temperature", "3"])
    validate_args(run)
    assert run.training.step_objective_settings() == (
        "dense_distil",
        {"distil_alpha": 0.25, "distil_temperature": 3.0, "distil_hidden_weight": 0.0, "teacher_model": None},
    )
    with pytest.raises(ValueError, match=r"--distil_alpha must be in \[0, 1\], got 1.5"):
        DenseDistillationOptions(distil_alpha=1.5)
    with pytest.raises(ValueError, match="--distil_temperature must be > 0"):
        DenseDistillationOptions(distil_temperature=0.0)
    with pytest.raises(ValueError, match=r"--distil_hidden_weight must be >= 0, got -1\.0"):
        DenseDistillationOptions(distil_hidden_weight=-1.0)
    run = parse_args([*base, "--step_objective", "dense_distil", "--distil_hidden_weight", "2"])
    assert run.training.step_objective_settings()[1]["distil_hidden_weight"] == 2.0


def test_hidden_state_term_by_hand():
    # one example, two tokens (the second is padding), d = 2, two layers after the embeddings.
    # layer 1: the real token differs by (1, 0): ‖·‖² / d = 1/2; the padding token's (3, 3) is not counted.
    # layer 2: the real token differs by (2, 2): 8/2 = 4. The mean over layers: (0.5 + 4) / 2 = 2.25.
    embeddings = torch.full((1, 2, 2), 7.0)  # left out: the masks never touch the embeddings
    teacher = (torch.zeros(1, 2, 2), torch.zeros(1, 2, 2), torch.zeros(1, 2, 2))
    student = (embeddings, torch.tensor([[[1.0, 0.0], [3.0, 3.0]]]), torch.tensor([[[2.0, 2.0], [5.0, 5.0]]]))
    mask = torch.tensor([[1, 0]])
    assert hidden_state_distillation(student, teacher, mask).item() == pytest.approx(2.25)
    assert hidden_state_distillation(student, teacher, None).item() == pytest.approx(((1 + 18) / 4 + (8 + 50) / 4) / 2)
    with pytest.raises(ValueError, match="the student has 2 layers, the teacher 1; use a teacher at least as deep"):
        hidden_state_distillation(student, teacher[:2], mask)
    with pytest.raises(ValueError, match="the student's are 2, the teacher's 3"):
        hidden_state_distillation(student, tuple(torch.zeros(1, 2, 3) for _ in teacher), mask)


def test_a_shallower_student_faces_the_teachers_layers_by_the_uniform_map():
    """g(m) = ⌊m·L_t/L_s⌋ (TinyBERT): 3 of 6 -> 2, 4, 6; 4 of 12 -> 3, 6, 9, 12; equal depths -> the identity. A
    2-layer student against a 4-layer teacher whose layer outputs are 0, 1, 2, 3 (constant tensors): the student's
    layers (all 1) face outputs 2 and 4 (1 and 3), MSE (1 − 1)² and (1 − 3)²: mean 2."""
    assert layer_map(3, 6) == [2, 4, 6] and layer_map(4, 12) == [3, 6, 9, 12] and layer_map(5, 5) == [1, 2, 3, 4, 5]
    teacher = tuple(torch.full((1, 2, 2), float(v)) for v in (9, 0, 1, 2, 3))  # embeddings (left out), 4 layers
    student = (torch.zeros(1, 2, 2), torch.ones(1, 2, 2), torch.ones(1, 2, 2))
    assert hidden_state_distillation(student, teacher, None).item() == pytest.approx(2.0)


def test_hidden_state_distillation_adds_beta_times_the_layers_mse_on_real_tokens():
    dense = lively(bert4())
    srnet = _hybrid(copy.deepcopy(dense)).train()
    batch = _batch()
    batch["attention_mask"][:4, 8:] = 0  # padded examples: their last 4 positions must not count
    options = {"distil_alpha": 0.3, "distil_temperature": 2, "distil_hidden_weight": 1.5}
    objective = build_objective("poe", step="dense_distil", step_options=options)
    torch.manual_seed(0)
    total, outputs, parts = objective.compute_loss(srnet, batch, training=True)
    torch.manual_seed(0)
    logits_only = build_objective("poe", step="dense_distil", step_options={**options, "distil_hidden_weight": 0})
    without, _, _ = logits_only.compute_loss(srnet, batch, training=True)  # same dropout draws
    inputs = {k: batch[k] for k in ("input_ids", "attention_mask")}
    with torch.no_grad():
        teacher = dense.eval()(**inputs, output_hidden_states=True).hidden_states
    per_layer = []  # token by token: Σ over real tokens of ‖h_s − h_t‖², over d·(number of real tokens)
    for h_s, h_t in zip([h.detach() for h in outputs.hidden_states[1:]], teacher[1:]):
        real = [(i, j) for i in range(8) for j in range(12) if batch["attention_mask"][i, j] == 1]
        squared = sum(float(((h_s[i, j] - h_t[i, j]) ** 2).sum()) for i, j in real)
        per_layer.append(squared / (len(real) * h_s.shape[-1]))
    expected = sum(per_layer) / len(per_layer)
    assert expected > 1e-4  # the masks moved the student's hidden states
    assert parts["dense_hidden_mse"].item() == pytest.approx(expected, rel=1e-4)
    assert total.item() == pytest.approx(without.item() + 1.5 * expected, rel=1e-4)
    total.backward()
    assert all(p.grad is not None for p in srnet.masked_layers_scores())
    assert "dense_hidden_mse" not in objective.compute_loss(srnet, batch, training=False)[2]  # evaluation: inner only


def _trainer(tmp_path, model, **options) -> SRNetTrainer:
    tokenizer = tiny_tokenizer(tmp_path)
    return SRNetTrainer(
        model=model,
        args=cpu_args(
            tmp_path / "out",
            max_steps=3,
            logging_steps=1,
            loss="poe",
            step_objective="dense_distil",
            step_objective_options=options,
        ),
        train_dataset=synthetic_nli(tokenizer, n=24),
        data_collator=SRNetDataCollator(tokenizer),
        processing_class=tokenizer,
    )


def test_training_weights_needs_a_teacher_dir_and_runs_with_one(tmp_path):
    srnet = SRNetModel(
        bert4(), MagnitudeConfig(sparsity=0.5, imp_prune_ratio=0.5, imp_interval=0.5, mask_granularity="hybrid")
    )
    refused = _trainer(tmp_path, srnet)
    with pytest.raises(InputError, match=r"this run trains weights .* pass --teacher_model DIR"):
        refused.train()
    assert refused.state.global_step == 0  # refused before the first step, not at its teacher forward
    bert4().save_pretrained(tmp_path / "dense")
    srnet = SRNetModel(
        bert4(), MagnitudeConfig(sparsity=0.5, imp_prune_ratio=0.5, imp_interval=0.5, mask_granularity="hybrid")
    )
    trainer = _trainer(tmp_path, srnet, teacher_model=str(tmp_path / "dense"))
    trainer.train()
    assert trainer.state.global_step >= 1  # IMP ends once its rounds reach the target
    assert any("loss_dense_kl" in entry for entry in trainer.state.log_history)


def test_a_classifier_head_new_to_the_checkpoint_needs_a_teacher_dir(tmp_path):
    srnet = _hybrid(bert4())
    srnet.base_model.classifier.weight.requires_grad_(True)  # a head the checkpoint lacked: the runner trains it
    with pytest.raises(InputError, match=r"a classifier head the checkpoint lacks\): pass --teacher_model DIR"):
        _trainer(tmp_path, srnet).train()


def test_mask_training_with_dense_distillation_moves_the_scores(tmp_path):
    srnet = _hybrid(bert4())
    before = [p.detach().clone() for p in srnet.masked_layers_scores()]
    _trainer(tmp_path, srnet, distil_alpha=0.5).train()
    assert all(not torch.equal(a, b) for a, b in zip(before, srnet.masked_layers_scores()))


def test_the_card_says_distillation_not_adversarial_training():
    from hf_srnets.publish.card import _step_words

    assert _step_words("dense_distil") == "**distillation from the dense model** (dense_distil)"
    assert _step_words("freelb") == "**freelb** adversarial training"
    assert _step_words("someone_elses") == "**someone_elses**"  # a step objective of another package


def _named(model: torch.nn.Module, names: list[str]) -> torch.nn.Module:
    model.config.id2label = dict(enumerate(names))
    model.config.label2id = {name: i for i, name in enumerate(names)}
    return model


def test_a_teacher_with_the_labels_in_another_order_teaches_each_label_by_its_name(tmp_path):
    """Issue 70 (silent): --teacher_model logits were read by position, so a teacher with the same labels in another
    order taught permuted labels. Its logits are reordered by name: a teacher saved with its head rows and label
    names permuted gives the student exactly the original teacher's logits."""
    names = ["entailment", "neutral", "contradiction"]
    teacher = _named(lively(bert4()), names)
    permuted = copy.deepcopy(teacher)
    order = [2, 0, 1]  # permuted label k is the original's label order[k]
    with torch.no_grad():
        permuted.classifier.weight.copy_(teacher.classifier.weight[order])
        permuted.classifier.bias.copy_(teacher.classifier.bias[order])
    _named(permuted, [names[i] for i in order]).save_pretrained(tmp_path / "permuted")
    student = _named(bert4(), names)
    objective = build_objective("ce", step="dense_distil", step_options={"teacher_model": str(tmp_path / "permuted")})
    objective.check_model(student)
    inputs = {k: v for k, v in _batch().items() if k in ("input_ids", "attention_mask")}
    with torch.no_grad():
        taught = objective.teacher_outputs(student, inputs)["logits"]
        torch.testing.assert_close(taught, teacher.eval()(**inputs).logits, rtol=0, atol=1e-6)


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"names": ["entailment", "non-entailment"]}, r"has 2 labels \['entailment', 'non-entailment'\], the run 3"),
        ({"names": ["positive", "neutral", "negative"]}, r"has the labels \['positive', 'neutral', 'negative'\]"),
        ({"vocab_size": 77}, r"reads a vocabulary of 77 tokens and the student one of \d+"),
    ],
)
def test_a_teacher_of_other_labels_or_another_vocabulary_is_refused_before_training(tmp_path, change, error):
    """Issue 70: a 2-label teacher for a 3-label run, or one with another vocabulary, ended in a raw traceback at the
    first step; labels of other names taught nonsense. Each is one line before the first step."""
    from transformers import BertConfig, BertForSequenceClassification

    names = change.get("names", ["entailment", "neutral", "contradiction"])
    config = BertConfig(
        **{**bert4().config.to_dict(), "vocab_size": change.get("vocab_size", bert4().config.vocab_size)}
    )
    config.num_labels = len(names)
    _named(BertForSequenceClassification(config), names).save_pretrained(tmp_path / "teacher")
    student = _named(bert4(), ["entailment", "neutral", "contradiction"])
    objective = build_objective("ce", step="dense_distil", step_options={"teacher_model": str(tmp_path / "teacher")})
    with pytest.raises(InputError, match=error):
        objective.check_model(student)
