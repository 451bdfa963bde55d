"""The attack runner: resumable JSONL (interrupt, re-run, no duplicates; other settings refused), deterministic
samples, and `HFClassifier` (every submitted text is a query, cached or not, as TextAttack counts; the cache is
per example; batches and label order do not change predictions)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from conftest import tiny_model
from datasets import Dataset
from training.helpers import WORDS, tiny_tokenizer

from hf_srnets.attack import (
    AttackRecipe,
    AttackResult,
    Example,
    HFClassifier,
    attack_examples,
    dataset_examples,
    read_results,
    select_indices,
    summarize_records,
)


class KeywordClassifier:
    """A fake victim: class 1 when the last text holds 'good', else 0; counts every text like HFClassifier."""

    def __init__(self) -> None:
        self.num_queries, self.query_budget = 0, None

    def __call__(self, texts):
        self.num_queries += len(texts)
        return np.array([[0.1, 0.9] if "good" in t[-1].split() else [0.9, 0.1] for t in texts])


class DropWord(AttackRecipe):
    """Toy recipe: delete one word at a time, left to right; succeeds at the first deletion that flips the label.
    `fail_at`: raise on the k-th attack (an interruption)."""

    name = "toy-drop"
    citation = ""

    def __init__(self, fail_at: int | None = None) -> None:
        self.fail_at, self.calls = fail_at, 0

    def attack(self, text, label, classifier):
        self.calls += 1
        if self.calls == self.fail_at:
            raise KeyboardInterrupt("interrupted")
        words = text[-1].split()
        common = dict(original=text, label=label, num_words=len(words))
        pred = int(classifier([text])[0].argmax())
        if pred != label:
            return AttackResult(
                perturbed=None,
                original_prediction=pred,
                perturbed_prediction=None,
                outcome="skipped",
                num_queries=classifier.num_queries,
                words_changed=0,
                **common,
            )
        for i in range(len(words)):
            cand = (*text[:-1], " ".join(words[:i] + words[i + 1 :]))
            new = int(classifier([cand])[0].argmax())
            if new != label:
                return AttackResult(
                    perturbed=cand,
                    original_prediction=pred,
                    perturbed_prediction=new,
                    outcome="successful",
                    num_queries=classifier.num_queries,
                    words_changed=1,
                    **common,
                )
        return AttackResult(
            perturbed=text,
            original_prediction=pred,
            perturbed_prediction=pred,
            outcome="failed",
            num_queries=classifier.num_queries,
            words_changed=0,
            **common,
        )


SENTENCES = ["a good film", "bad plot", "good good acting", "dull", "good", "so good and fun", "meh", "a good one"]
LABELS = [1, 0, 1, 1, 1, 1, 0, 0]  # "dull" labelled 1 and "a good one" labelled 0: originally wrong (skipped)


def examples() -> list[Example]:
    return [Example(i, f"ex{i}", (s,), y) for i, (s, y) in enumerate(zip(SENTENCES, LABELS))]


SETTINGS = {"recipe": "toy-drop", "model": "keyword", "data": "toy", "sample": "first"}


def test_outcomes_and_summary(tmp_path):
    records = attack_examples(DropWord(), KeywordClassifier(), examples(), str(tmp_path / "a.jsonl"), SETTINGS)
    outcomes = [r.result.outcome for r in records]
    # "good good acting": dropping one "good" leaves the other -> failed; every other "good" sentence flips
    assert outcomes == ["successful", "failed", "failed", "skipped", "successful", "successful", "failed", "skipped"]
    s = summarize_records(records)
    assert s["clean_accuracy"] == 6 / 8 and s["accuracy_under_attack"] == 3 / 8 and s["attack_success_rate"] == 3 / 6
    assert records[0].result.num_queries == 1 + 2  # the original, then "good film", then "a film" flips


def test_resume_after_an_interruption_gives_every_example_once(tmp_path):
    path = str(tmp_path / "attack_toy.jsonl")
    with pytest.raises(KeyboardInterrupt):
        attack_examples(DropWord(fail_at=4), KeywordClassifier(), examples(), path, SETTINGS)
    assert [r.index for r in read_results(path)] == [0, 1, 2]  # flushed line by line
    with open(path, "a") as f:
        f.write('{"type": "result", "index": 3, "id": "ex3", "reci')  # a line cut short by the interruption
    recipe = DropWord()
    records = attack_examples(recipe, KeywordClassifier(), examples(), path, SETTINGS)
    assert recipe.calls == 5  # only the examples not yet in the file
    assert [r.index for r in records] == list(range(8))
    lines = [json.loads(line) for line in open(path)]
    assert lines[0]["type"] == "header" and [x["index"] for x in lines[1:]] == list(range(8))
    fresh = attack_examples(DropWord(), KeywordClassifier(), examples(), str(tmp_path / "b.jsonl"), SETTINGS)
    assert [r.result for r in records] == [r.result for r in fresh]
    # a complete file: nothing attacked again
    again = DropWord()
    attack_examples(again, KeywordClassifier(), examples(), path, SETTINGS)
    assert again.calls == 0 and len(read_results(path)) == 8


@pytest.mark.parametrize("change", [{"recipe": "other"}, {"model": "another/model"}, {"data": "other.tsv"}])
def test_other_settings_refuse_to_mix(tmp_path, change):
    path = str(tmp_path / "a.jsonl")
    attack_examples(DropWord(), KeywordClassifier(), examples()[:3], path, SETTINGS)
    with pytest.raises(ValueError, match="overwrite_output_dir") as err:
        attack_examples(DropWord(), KeywordClassifier(), examples()[:3], path, SETTINGS | change)
    assert next(iter(change)) in str(err.value)
    records = attack_examples(DropWord(), KeywordClassifier(), examples()[:2], path, SETTINGS | change, overwrite=True)
    assert len(read_results(path)) == 2 and len(records) == 2


def test_changed_data_under_the_same_settings_is_refused(tmp_path):
    path = str(tmp_path / "a.jsonl")
    attack_examples(DropWord(), KeywordClassifier(), examples()[:3], path, SETTINGS)
    changed = [Example(0, "ex0", ("another text",), 1), *examples()[1:3]]
    with pytest.raises(ValueError, match="does not match"):
        attack_examples(DropWord(), KeywordClassifier(), changed, path, SETTINGS)


def test_sample_selection_is_deterministic():
    assert select_indices(10, None) == list(range(10))
    assert select_indices(10, 3) == [0, 1, 2]
    assert select_indices(10, 30) == list(range(10))
    sample = select_indices(100, 5, seed=1)
    assert sample == select_indices(100, 5, seed=1) == sorted(sample) and sample != [0, 1, 2, 3, 4]
    assert sample != select_indices(100, 5, seed=2)
    with pytest.raises(ValueError, match="num_examples"):
        select_indices(10, 0)


def test_dataset_examples_pairs_and_ids():
    ds = Dataset.from_dict(
        {"id": ["p", "q"], "sentence1": ["s a", "s b"], "sentence2": ["h a", "h b"], "label": [2, 0]}
    )
    assert dataset_examples(ds, [1]) == [Example(1, "q", ("s b", "h b"), 0)]
    unlabelled = Dataset.from_dict({"sentence1": ["x"], "label": [-1]})
    with pytest.raises(ValueError, match="no gold label"):
        dataset_examples(unlabelled, [0])


@pytest.fixture
def hf_victim(tmp_path):
    return tiny_model("bert", num_labels=2), tiny_tokenizer(tmp_path)


TEXTS = [(" ".join(WORDS[i : i + n]),) for i, n in [(5, 3), (10, 7), (20, 1), (30, 12), (40, 5)]]


def test_every_submitted_text_is_a_query_cached_or_not(hf_victim):
    """TextAttack's GoalFunction.get_results: `num_queries += len(texts)` before the cache is looked up."""
    model, tok = hf_victim
    clf = HFClassifier(model, tok, batch_size=2)
    first = clf(TEXTS[:3])
    assert clf.num_queries == 3
    again = clf([TEXTS[1], TEXTS[1], TEXTS[0], TEXTS[3]])  # 4 texts submitted; only TEXTS[3] is new to the model
    assert clf.num_queries == 3 + 4 and clf.model_queries == 4 and clf.cache_hits == 3
    np.testing.assert_array_equal(again[0], first[1])
    clf.reset()  # a new example: count and cache start again (TextAttack clears its cache after each example)
    assert clf.num_queries == 0
    clf(TEXTS[:1])
    assert clf.num_queries == 1 and clf.model_queries == 5  # TEXTS[0] ran again: the cache was emptied
    no_cache = HFClassifier(model, tok, cache_size=0)
    no_cache(TEXTS[:2])
    no_cache(TEXTS[:2])
    assert no_cache.num_queries == 4 == no_cache.model_queries
    small = HFClassifier(model, tok, cache_size=2)
    small(TEXTS[:3])  # LRU: TEXTS[0] evicted
    small(TEXTS[2:3])
    assert small.model_queries == 3
    small(TEXTS[:1])
    assert small.model_queries == 4 and small.num_queries == 5


def test_an_example_costs_the_same_queries_whatever_was_attacked_before(hf_victim, tmp_path):
    """#Query of an example is the number of texts its attack submits (hand count: the original, one text per
    modifiable word, then each candidate batch), the same when the example or another recipe came before."""
    from attack.test_search_helpers import toy_embedding

    from hf_srnets.attack.resources import TEXTFOOLER_STOPWORDS as STOPWORDS
    from hf_srnets.attack.search import GreedyWordSwapWIR
    from hf_srnets.attack.transformations import WordSwapEmbedding

    model, tok = hf_victim
    submitted: list[int] = []

    class Counting(HFClassifier):
        def __call__(self, texts):
            submitted.append(len(texts))
            return super().__call__(texts)

    clf = Counting(model, tok)
    label = int(clf([("good movie plot",)])[0].argmax())
    search = GreedyWordSwapWIR(WordSwapEmbedding(toy_embedding(), 5), [], STOPWORDS)

    class Toy(AttackRecipe):
        name = "toy-greedy"

        def attack(self, text, label, classifier):
            from hf_srnets.attack.search import run_attack

            return run_attack(search, text, label, classifier)

    twice = [Example(0, "a", ("good movie plot",), label), Example(1, "b", ("good movie plot",), label)]
    submitted.clear()
    records = attack_examples(Toy(), clf, twice, str(tmp_path / "a.jsonl"), SETTINGS)
    per_example = sum(submitted) // 2
    assert submitted[0] == 1 and submitted[1] == 3  # the original; one leave-one-out text per word (3 words)
    assert [r.result.num_queries for r in records] == [per_example, per_example]
    assert per_example >= 1 + 3 + 5  # at least the first-ranked word's 5 neighbours were tried


def test_batching_and_padding_do_not_change_probabilities(hf_victim):
    model, tok = hf_victim
    batched = HFClassifier(model, tok, batch_size=2, cache_size=0)(TEXTS)
    single = np.concatenate([HFClassifier(model, tok, batch_size=1, cache_size=0)([t]) for t in TEXTS])
    np.testing.assert_allclose(batched, single, atol=1e-5)
    with torch.no_grad():
        enc = tok([t[0] for t in TEXTS[:1]], return_tensors="pt")
        direct = torch.softmax(model(**enc).logits, -1).numpy()
    np.testing.assert_allclose(single[:1], direct, atol=1e-6)
    assert np.allclose(batched.sum(1), 1.0)


def test_probabilities_come_in_the_task_label_order(hf_victim):
    model, tok = hf_victim
    task_order = HFClassifier(model, tok)(TEXTS)
    swapped = HFClassifier(model, tok, label_order=("positive", "negative"), task_labels=("negative", "positive"))
    np.testing.assert_allclose(swapped(TEXTS), task_order[:, ::-1])
    with pytest.raises(ValueError, match="batch_size"):
        HFClassifier(model, tok, batch_size=0)


def test_bf16_victim_gives_the_probabilities_of_a_bf16_autocast_forward(hf_victim):
    """precision="bf16": softmax of the fp32 logits of a forward under torch.autocast(bfloat16), computed here."""
    model, tok = hf_victim
    with torch.no_grad():
        model.classifier.weight.mul_(50.0)  # large logits, so bf16 rounding shows in the probabilities
    texts = TEXTS[:2]
    enc = tok([t[0] for t in texts], padding=True, return_tensors="pt")
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        expected = torch.softmax(model(**enc).logits.float(), dim=-1).numpy()
    with torch.no_grad():
        fp32 = torch.softmax(model(**enc).logits, dim=-1).numpy()
    got = HFClassifier(model, tok, precision="bf16")(texts)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6)
    assert np.abs(got - fp32).max() > 1e-4  # not an fp32 forward
    np.testing.assert_allclose(HFClassifier(model, tok)(texts), fp32, rtol=0, atol=1e-6)
    with pytest.raises(ValueError, match="precision"):
        HFClassifier(model, tok, precision="fp16")
