"""The compression losses of RMC and its baselines (Du et al. 2023, Eq. 2-3 and appendix C) against hand-computed
values: distil, smooth, rmc, focal, jtt."""

import math
import re
from dataclasses import fields

import pytest
import torch
import torch.nn.functional as F

from hf_srnets.arguments import parse_args, validate_args
from hf_srnets.errors import InputError
from hf_srnets.losses import LOSSES, focal_weights, get_loss, smoothed_teacher
from hf_srnets.objectives import build_objective, citations_for
from hf_srnets.resources.citations import BIBTEX, format_bibtex
from hf_srnets.training.arguments import SRNetTrainingArguments

# a 3-example, 3-class batch written out, and its reference values computed with `math` below
LOGITS = [[2.0, 0.5, -1.0], [0.0, 1.0, 0.0], [1.0, -1.0, 3.0]]
LABELS = [0, 2, 2]
TEACHER = [[0.7, 0.2, 0.1], [0.1, 0.3, 0.6], [0.25, 0.25, 0.5]]
DIFFICULTY = [0.5, 1.0, 0.8]


def _softmax(row):
    exps = [math.exp(v) for v in row]
    return [e / sum(exps) for e in exps]


def _smooth(row, d):
    powered = [p**d for p in row]
    return [p / sum(powered) for p in powered]


def _eq3(logits, labels, targets, lam):
    """(1/N) Σ_i (1 − λ)·(−log p_S,i,y_i) + λ·Σ_j s_ij log(s_ij / p_S,ij), with math only."""
    total = 0.0
    for row, y, s in zip(logits, labels, targets):
        p = _softmax(row)
        kl = sum(sj * math.log(sj / pj) for sj, pj in zip(s, p))
        total += (1 - lam) * -math.log(p[y]) + lam * kl
    return total / len(labels)


def _ce(logits, labels):
    return sum(-math.log(_softmax(row)[y]) for row, y in zip(logits, labels)) / len(labels)


@pytest.fixture
def batch():
    logits = torch.tensor(LOGITS, requires_grad=True)
    return logits, torch.tensor(LABELS), torch.tensor(TEACHER), torch.tensor(DIFFICULTY)


@pytest.fixture
def random_batch():
    torch.manual_seed(0)
    logits = torch.randn(8, 3, requires_grad=True)
    labels = torch.randint(0, 3, (8,))
    teacher = torch.softmax(torch.randn(8, 3) * 2, -1)
    return logits, labels, teacher, torch.rand(8) * 0.5 + 0.5


def test_the_five_losses_are_registered_with_their_options():
    expected = {
        "distil": ("distil_lambda",),
        "smooth": ("distil_lambda", "smooth_degree"),
        "rmc": ("distil_lambda",),
        "focal": ("focal_gamma",),
        "jtt": ("jtt_upweight",),
    }
    assert {name: tuple(f.name for f in fields(LOSSES[name].options_class)) for name in expected} == expected
    assert LOSSES["distil"].options_class is LOSSES["rmc"].options_class  # one λ, one flag
    assert LOSSES["rmc"].requires == ("teacher_probs", "difficulty")
    assert LOSSES["distil"].requires == LOSSES["smooth"].requires == LOSSES["jtt"].requires == ("teacher_probs",)
    assert LOSSES["focal"].requires == ()


# -- Eq. 2: the smoothing -----------------------------------------------------------------------------------------
def test_eq2_by_hand_on_two_classes():
    # (0.8, 0.2)^0.5 = (√0.8, √0.2) ∝ (2, 1): s = (2/3, 1/3)
    s = smoothed_teacher(torch.tensor([[0.8, 0.2]]), torch.tensor([0.5]))
    assert torch.allclose(s, torch.tensor([[2 / 3, 1 / 3]]), atol=1e-6)


def test_eq2_per_example_degree_and_identity_at_one(batch):
    _, _, teacher, difficulty = batch
    expected = torch.tensor([_smooth(row, d) for row, d in zip(TEACHER, DIFFICULTY)])
    assert torch.allclose(smoothed_teacher(teacher, difficulty), expected, atol=1e-6)
    assert torch.allclose(smoothed_teacher(teacher, torch.ones(3)), teacher, atol=1e-6)
    assert torch.allclose(smoothed_teacher(teacher, 1.0), teacher, atol=1e-6)
    flat = smoothed_teacher(teacher, 1e-6)  # d → 0 flattens towards uniform
    assert torch.allclose(flat, torch.full((3, 3), 1 / 3), atol=1e-5)


def test_eq2_zero_teacher_probabilities_stay_finite():
    s = smoothed_teacher(torch.tensor([[1.0, 0.0, 0.0]]), torch.tensor([0.5]))
    assert torch.isfinite(s).all() and s[0, 0] > 0.999


# -- Eq. 3: distil, smooth, rmc ----------------------------------------------------------------------------------
def test_eq3_by_hand_on_two_classes():
    # p_S = (1/2, 1/2), y = 0, s = (2/3, 1/3) (d = 0.5 on (0.8, 0.2)), λ = 0.9
    kl = 2 / 3 * math.log((2 / 3) / 0.5) + 1 / 3 * math.log((1 / 3) / 0.5)
    expected = 0.1 * math.log(2) + 0.9 * kl
    loss, parts = get_loss("rmc")(
        torch.zeros(1, 2), torch.tensor([0]), teacher_probs=torch.tensor([[0.8, 0.2]]), difficulty=torch.tensor([0.5])
    )
    assert loss.item() == pytest.approx(expected, abs=1e-6)
    assert parts["ce"].item() == pytest.approx(math.log(2), abs=1e-6)
    assert parts["kl"].item() == pytest.approx(kl, abs=1e-6)


def test_distil_formula(batch):
    logits, labels, teacher, _ = batch
    loss, parts = get_loss("distil")(logits, labels, teacher_probs=teacher)
    assert loss.item() == pytest.approx(_eq3(LOGITS, LABELS, TEACHER, 0.9), abs=1e-6)
    assert set(parts) == {"distil", "ce", "kl"}
    assert parts["ce"].item() == pytest.approx(_ce(LOGITS, LABELS), abs=1e-6)


def test_smooth_formula(batch):
    logits, labels, teacher, _ = batch
    loss, parts = get_loss("smooth", distil_lambda=0.7, smooth_degree=0.6)(logits, labels, teacher_probs=teacher)
    targets = [_smooth(row, 0.6) for row in TEACHER]
    assert loss.item() == pytest.approx(_eq3(LOGITS, LABELS, targets, 0.7), abs=1e-6)
    assert set(parts) == {"smooth", "ce", "kl"}


def test_rmc_formula(batch):
    logits, labels, teacher, difficulty = batch
    loss, parts = get_loss("rmc")(logits, labels, teacher_probs=teacher, difficulty=difficulty)
    targets = [_smooth(row, d) for row, d in zip(TEACHER, DIFFICULTY)]
    assert loss.item() == pytest.approx(_eq3(LOGITS, LABELS, targets, 0.9), abs=1e-6)
    assert set(parts) == {"rmc", "ce", "kl", "difficulty"}
    assert parts["difficulty"].item() == pytest.approx(sum(DIFFICULTY) / 3)
    loss.backward()
    assert torch.isfinite(logits.grad).all() and logits.grad.abs().sum() > 0


@pytest.mark.parametrize("name", ["distil", "smooth", "rmc"])
def test_lambda_zero_is_cross_entropy(random_batch, name):
    logits, labels, teacher, difficulty = random_batch
    loss, _ = get_loss(name, distil_lambda=0.0)(logits, labels, teacher_probs=teacher, difficulty=difficulty)
    assert torch.allclose(loss, F.cross_entropy(logits, labels), atol=1e-6)


def test_lambda_one_is_kl_only(random_batch):
    logits, labels, teacher, _ = random_batch
    loss, parts = get_loss("distil", distil_lambda=1.0)(logits, labels, teacher_probs=teacher)
    expected = (teacher * (teacher.log() - torch.log_softmax(logits, -1))).sum(-1).mean()
    assert torch.allclose(loss, expected, atol=1e-6) and torch.allclose(parts["kl"], expected, atol=1e-6)


def test_rmc_with_equal_degrees_is_smooth_and_degree_one_is_distil(random_batch):
    logits, labels, teacher, _ = random_batch
    rmc, _ = get_loss("rmc")(logits, labels, teacher_probs=teacher, difficulty=torch.full((8,), 0.6))
    smooth, _ = get_loss("smooth", smooth_degree=0.6)(logits, labels, teacher_probs=teacher)
    assert torch.allclose(rmc, smooth, atol=1e-6)
    distil, _ = get_loss("distil")(logits, labels, teacher_probs=teacher)
    smooth_one, _ = get_loss("smooth", smooth_degree=1.0)(logits, labels, teacher_probs=teacher)
    rmc_one, _ = get_loss("rmc")(logits, labels, teacher_probs=teacher, difficulty=torch.ones(8))
    assert torch.allclose(distil, smooth_one, atol=1e-6) and torch.allclose(distil, rmc_one, atol=1e-6)
    assert not torch.allclose(distil, smooth, atol=1e-4)  # the smoothing does something


def test_rmc_only_smooths_the_easy_examples(random_batch):
    logits, labels, teacher, _ = random_batch
    difficulty = torch.ones(8)
    difficulty[0] = 0.5
    per_example = get_loss("rmc", distil_lambda=1.0)
    loss_all, _ = per_example(logits, labels, teacher_probs=teacher, difficulty=difficulty)
    rest, _ = per_example(logits[1:], labels[1:], teacher_probs=teacher[1:], difficulty=difficulty[1:])
    first, _ = get_loss("smooth", distil_lambda=1.0, smooth_degree=0.5)(
        logits[:1], labels[:1], teacher_probs=teacher[:1]
    )
    assert torch.allclose(loss_all, (first + 7 * rest) / 8, atol=1e-6)


def test_distil_clips_zero_teacher_probabilities(random_batch):
    logits, labels, _, _ = random_batch
    one_hot = F.one_hot((labels + 1) % 3, 3).float()
    loss, _ = get_loss("distil")(logits, labels, teacher_probs=one_hot)
    loss.backward()
    assert torch.isfinite(loss) and torch.isfinite(logits.grad).all()


# -- focal -------------------------------------------------------------------------------------------------------
def test_focal_by_hand_on_two_examples():
    # p = (1/2, 3/4): (1 − p)² = (1/4, 1/16), mean 5/32, weights (8/5, 2/5)
    logits = torch.tensor([[0.0, 0.0], [math.log(3), 0.0]])
    labels = torch.tensor([0, 0])
    weights = focal_weights(logits, labels, 2.0)
    assert torch.allclose(weights, torch.tensor([1.6, 0.4]), atol=1e-6)
    loss, parts = get_loss("focal")(logits, labels)
    assert loss.item() == pytest.approx((1.6 * math.log(2) + 0.4 * math.log(4 / 3)) / 2, abs=1e-6)
    assert parts["max_weight"].item() == pytest.approx(1.6, abs=1e-6)


def test_focal_formula_and_gradient_through_the_weights(batch):
    logits, labels, _, _ = batch
    gamma = 2.0
    p = [_softmax(row)[y] for row, y in zip(LOGITS, LABELS)]
    raw = [(1 - pi) ** gamma for pi in p]
    expected = sum(r / (sum(raw) / 3) * -math.log(pi) for r, pi in zip(raw, p)) / 3
    loss, parts = get_loss("focal", focal_gamma=gamma)(logits, labels)
    assert loss.item() == pytest.approx(expected, abs=1e-6)
    assert set(parts) == {"focal", "ce", "max_weight"}
    loss.backward()
    # the formula as written, differentiated by autograd: the weights and their normalisation carry gradient
    reference = logits.detach().clone().requires_grad_(True)
    p_gold = torch.softmax(reference, -1)[torch.arange(3), labels]
    w = (1 - p_gold) ** gamma / ((1 - p_gold) ** gamma).mean()
    (w * -p_gold.log()).mean().backward()
    assert torch.allclose(logits.grad, reference.grad, atol=1e-6)
    detached = logits.detach().clone().requires_grad_(True)
    p_gold = torch.softmax(detached, -1)[torch.arange(3), labels]
    (w.detach() * -p_gold.log()).mean().backward()
    assert not torch.allclose(logits.grad, detached.grad, atol=1e-4)


def test_focal_weights_average_to_one_and_gamma_zero_is_cross_entropy(random_batch):
    logits, labels, _, _ = random_batch
    for gamma in (0.5, 2.0, 5.0):
        assert focal_weights(logits, labels, gamma).mean().item() == pytest.approx(1.0, abs=1e-6)
    assert torch.equal(focal_weights(logits, labels, 0.0), torch.ones(8))
    loss, _ = get_loss("focal", focal_gamma=0.0)(logits, labels)
    assert torch.allclose(loss, F.cross_entropy(logits, labels), atol=1e-6)


def test_focal_down_weights_confident_examples_and_stays_finite_when_p_is_one():
    logits = torch.tensor([[40.0, 0.0], [0.0, 0.0], [0.0, 40.0]], requires_grad=True)
    labels = torch.tensor([0, 0, 0])  # confident right, unsure, confident wrong
    weights = focal_weights(logits, labels, 2.0)
    assert weights[0] < weights[1] < weights[2]
    loss, _ = get_loss("focal", focal_gamma=0.5)(logits, labels)  # (1 − p)^0.5 has an infinite slope at p = 1
    loss.backward()
    assert torch.isfinite(loss) and torch.isfinite(logits.grad).all()


# -- jtt ---------------------------------------------------------------------------------------------------------
def test_jtt_by_hand(batch):
    logits, labels, teacher, _ = batch
    # the ERM model (argmax of TEACHER: 0, 2, 2) is right on all three: flip the third to a wrong answer
    erm = teacher.clone()
    erm[2] = torch.tensor([0.6, 0.3, 0.1])
    ce = [-math.log(_softmax(row)[y]) for row, y in zip(LOGITS, LABELS)]
    # u = (1, 1, 2), mean 4/3: w = (3/4, 3/4, 3/2)
    expected = (0.75 * ce[0] + 0.75 * ce[1] + 1.5 * ce[2]) / 3
    loss, parts = get_loss("jtt")(logits, labels, teacher_probs=erm)
    assert loss.item() == pytest.approx(expected, abs=1e-6)
    assert parts["error_fraction"].item() == pytest.approx(1 / 3)
    assert set(parts) == {"jtt", "ce", "error_fraction"}
    loss, _ = get_loss("jtt", jtt_upweight=5.0)(logits, labels, teacher_probs=erm)
    # u = (1, 1, 5), mean 7/3
    assert loss.item() == pytest.approx((3 / 7 * ce[0] + 3 / 7 * ce[1] + 15 / 7 * ce[2]) / 3, abs=1e-6)


def test_jtt_without_errors_or_without_upweight_is_cross_entropy(random_batch):
    logits, labels, teacher, _ = random_batch
    ce = F.cross_entropy(logits, labels)
    right = F.one_hot(labels, 3).float() * 0.8 + 0.2 / 3
    loss, parts = get_loss("jtt")(logits, labels, teacher_probs=right)
    assert torch.allclose(loss, ce, atol=1e-6) and parts["error_fraction"].item() == 0.0
    wrong = F.one_hot((labels + 1) % 3, 3).float()  # every example an error: weights all λ_up, normalised to 1
    assert torch.allclose(get_loss("jtt")(logits, labels, teacher_probs=wrong)[0], ce, atol=1e-6)
    assert torch.allclose(get_loss("jtt", jtt_upweight=1.0)(logits, labels, teacher_probs=teacher)[0], ce, atol=1e-6)


# -- errors, options, citations ----------------------------------------------------------------------------------
def test_missing_columns_name_the_flag(random_batch):
    logits, labels, teacher, _ = random_batch
    with pytest.raises(ValueError, match="needs the 'difficulty' column; pass --sample_difficulty FILE"):
        get_loss("rmc")(logits, labels, teacher_probs=teacher)
    for name in ("distil", "smooth", "rmc", "jtt"):
        with pytest.raises(ValueError, match="needs the 'teacher_probs' column; pass --teacher_predictions FILE"):
            get_loss(name)(logits, labels, difficulty=torch.ones(8))
    with pytest.raises(ValueError, match=re.escape("difficulty has shape (7,)")):
        get_loss("rmc")(logits, labels, teacher_probs=teacher, difficulty=torch.ones(7))
    with pytest.raises(ValueError, match=re.escape("difficulty d_i must be in (0, 1]")):
        get_loss("rmc")(logits, labels, teacher_probs=teacher, difficulty=torch.zeros(8))


@pytest.mark.parametrize(
    ("name", "options", "error"),
    [
        ("distil", {"distil_lambda": 1.5}, "--distil_lambda must be in [0, 1]"),
        ("rmc", {"distil_lambda": -0.1}, "--distil_lambda must be in [0, 1]"),
        ("smooth", {"smooth_degree": 0.0}, "--smooth_degree must be in (0, 1]"),
        ("focal", {"focal_gamma": -1.0}, "--focal_gamma must be >= 0"),
        ("jtt", {"jtt_upweight": 0.0}, "--jtt_upweight must be > 0"),
    ],
)
def test_bad_options_name_the_flag(name, options, error):
    with pytest.raises(ValueError, match=re.escape(error)):
        get_loss(name, **options)


@pytest.mark.parametrize(
    ("name", "given", "stored"),
    [
        ("distil", {"distil_lambda": 0.3}, {"distil_lambda": 0.3}),
        ("smooth", {"distil_lambda": 0.4, "smooth_degree": 0.7}, {"distil_lambda": 0.4, "smooth_degree": 0.7}),
        ("rmc", {"distil_lambda": 0.2}, {"distil_lambda": 0.2}),
        ("focal", {"focal_gamma": 3.0}, {"focal_gamma": 3.0}),
        ("jtt", {"jtt_upweight": 6.0}, {"jtt_upweight": 6.0}),
    ],
)
def test_training_arguments_options_reach_the_constructor(tmp_path, name, given, stored):
    args = SRNetTrainingArguments(
        output_dir=str(tmp_path), report_to="none", use_cpu=True, loss=name, loss_options=given
    )
    assert args.loss_settings() == stored
    loss = build_objective(args.loss, **args.loss_settings()).loss
    assert {option: getattr(loss, option) for option in stored} == stored
    assert loss.options() == LOSSES[name].options_class(**stored)
    assert loss.get_config_dict() == {"loss": name, "requires": list(loss.requires), **stored}
    assert type(loss)(loss.options()).get_config_dict() == loss.get_config_dict()  # or an options instance


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"distil_lambda": 1.5}, "--distil_lambda must be in [0, 1]"),
        ({"smooth_degree": 0.5}, "--loss distil has no option smooth_degree"),
        ('{"distil_lambda": 0.2', "--loss_options must be a JSON object"),
    ],
)
def test_training_arguments_refuse_bad_loss_options(tmp_path, options, error):
    with pytest.raises(InputError, match=re.escape(error)):
        SRNetTrainingArguments(output_dir=str(tmp_path), report_to="none", loss="distil", loss_options=options)


def test_training_arguments_loss_options_as_json_and_defaults(tmp_path):
    common = {"output_dir": str(tmp_path), "report_to": "none"}
    args = SRNetTrainingArguments(**common, loss="smooth", loss_options='{"smooth_degree": 0.5}')
    assert args.loss_options == {"smooth_degree": 0.5}
    assert args.loss_settings() == {"distil_lambda": 0.9, "smooth_degree": 0.5}
    assert SRNetTrainingArguments(**common, loss="poe").loss_settings() == {}
    with pytest.raises(InputError, match="--loss ce has no options"):
        SRNetTrainingArguments(**common, loss="ce", loss_options={"focal_gamma": 1.0})


@pytest.mark.parametrize(
    ("flags", "error"),
    [
        (["--loss", "ce", "--focal_gamma", "3"], "--focal_gamma configures --loss focal and would do nothing with"),
        (["--loss", "focal", "--distil_lambda", "0.5"], "--distil_lambda configures --loss distil / rmc / smooth"),
        (["--loss", "rmc", "--smooth_degree", "0.5"], "--smooth_degree configures --loss smooth"),
        (["--loss", "distil", "--distil_lambda", "0.5", "--loss_options", '{"distil_lambda": 0.4}'], "one way"),
    ],
)
def test_cli_refuses_an_option_of_another_loss_by_name(flags, error):
    base = ["--model_name_or_path", "m", "--output_dir", "o", "--teacher_predictions", "t.jsonl"]
    with pytest.raises(InputError, match=re.escape(error)):
        validate_args(parse_args([*base, "--sample_difficulty", "d.jsonl", *flags]))


@pytest.mark.parametrize(
    ("flags", "stored"),
    [
        (["--loss", "distil", "--distil_lambda", "0.25"], {"distil_lambda": 0.25}),
        (["--loss", "rmc", "--distil_lambda", "0.25"], {"distil_lambda": 0.25}),
        (["--loss", "smooth", "--smooth_degree", "0.5"], {"distil_lambda": 0.9, "smooth_degree": 0.5}),
        (["--loss", "focal"], {"focal_gamma": 2.0}),
        (["--loss", "jtt", "--loss_options", '{"jtt_upweight": 3}'], {"jtt_upweight": 3.0}),
    ],
)
def test_cli_loss_flags_reach_the_training_arguments(flags, stored):
    run = parse_args(["--model_name_or_path", "m", "--output_dir", "o", *flags])
    assert run.training.loss_settings() == stored
    assert run.loss_options == LOSSES[run.training.loss].options_class(**stored)


def test_paper_defaults():
    assert get_loss("distil").distil_lambda == get_loss("rmc").distil_lambda == 0.9
    assert (get_loss("smooth").distil_lambda, get_loss("smooth").smooth_degree) == (0.9, 0.9)  # §6.2: d_i = 0.9
    assert get_loss("focal").focal_gamma == 2.0 and get_loss("jtt").jtt_upweight == 2.0


def test_cli_refuses_rmc_without_sample_difficulty():
    base = ["--model_name_or_path", "m", "--output_dir", "o", "--loss", "rmc"]
    with pytest.raises(ValueError, match="--loss rmc needs --teacher_predictions FILE"):
        validate_args(parse_args(base))
    with pytest.raises(ValueError, match="--loss rmc needs --sample_difficulty FILE"):
        validate_args(parse_args([*base, "--teacher_predictions", "t.jsonl"]))
    validate_args(parse_args([*base, "--teacher_predictions", "t.jsonl", "--sample_difficulty", "d.jsonl"]))
    with pytest.raises(ValueError, match="--loss jtt needs --teacher_predictions FILE"):
        validate_args(parse_args(["--model_name_or_path", "m", "--output_dir", "o", "--loss", "jtt"]))


@pytest.mark.parametrize(
    ("name", "cited"),
    [
        ("distil", ["winwin", "rmc", "hinton"]),
        ("smooth", ["winwin", "rmc", "hinton", "muller"]),
        ("rmc", ["winwin", "rmc", "hinton"]),
        ("focal", ["winwin", "rmc", "focal"]),
        ("jtt", ["winwin", "rmc", "jtt"]),
    ],
)
def test_citations(name, cited):
    assert citations_for(name) == cited
    text = format_bibtex(cited)
    assert "du2023robustness" in text and "Robustness Challenges in Model Distillation and Pruning" in text


def test_bibtex_entries_of_the_compression_papers():
    assert "Mukherjee, Subhabrata" in BIBTEX["rmc"] and "EACL" in BIBTEX["rmc"]
    assert "Distilling the Knowledge in a Neural Network" in BIBTEX["hinton"]
    assert "Focal Loss for Dense Object Detection" in BIBTEX["focal"]
    assert "Just Train Twice" in BIBTEX["jtt"] and "ICML" in BIBTEX["jtt"]
    assert "When Does Label Smoothing Help?" in BIBTEX["muller"]
    for key in ("rmc", "hinton", "focal", "jtt", "muller"):
        assert BIBTEX[key].startswith("@") and BIBTEX[key].count("{") == BIBTEX[key].count("}"), key
