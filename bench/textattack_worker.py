#!/usr/bin/env python
"""TextAttack's own TextFooler and TextBugger on hf_srnets' victim and resources (the worker of
`bench/bench_textattack_side_by_side.py`; run by it inside the throwaway TextAttack venv, not by hand).

    <ta_venv>/bin/python bench/textattack_worker.py SPEC.json OUT.json

SPEC.json (written by the bench): the victim (`model`, `base_model`, `task`), the examples (`index`, `id`, `text`,
`label` in the task's label order), the `recipes`, `victim` ("shared", the default: hf_srnets' classifier as below;
"textattack": TextAttack's own `HuggingFaceModelWrapper`, as a TextAttack user builds it), `device` (where the
victim and the sentence encoder run, "cpu" when absent), `word_vectors` (a vectors file, or null for hf_srnets'
default), `pos_tagger` (a name of hf_srnets' taggers), `pos_rule` ("textattack", or "x_wildcard" to let TextAttack's
POS constraint accept hf_srnets' unsure tag "X" as hf_srnets does: an ablation), `batch_size`, `max_length` and
`seed`. OUT.json: per recipe, one record per example (outcome, TextAttack's reported #Query, the queries it
actually spent, the perturbed text, the seconds its attack took).

The attacks are assembled from TextAttack 0.3.11's components exactly as its recipe builders
(`attack_recipes/textfooler_jin_2019.py`, `textbugger_li_2018.py`) assemble them: the same search
(`GreedyWordSwapWIR(wir_method="delete")`), goal function (`UntargetedClassification`), transformations,
pre-transformation constraints and constraints with the builders' arguments. Only the resources the builders
would download are replaced by the ones hf_srnets uses (`shared_resources`), each behind TextAttack's own
interface, so that TextAttack's code around them (word splitting, neighbour order, windows, POS context, caches,
query counting) is what runs:

- victim: hf_srnets' `HFClassifier` with its cache off (TextAttack's goal-function cache decides what is re-run),
  returning probabilities in the task's label order (float64, so TextAttack does not softmax them again);
- word vectors: `textattack.shared.WordEmbedding` over hf_srnets' unit-normalised matrix and vocabulary, with a
  lazily computed `nn_matrix` by TextAttack's definition (Euclidean nearest neighbours, the word itself first);
- sentence encoder: a `SentenceEncoder` subclass whose `encode` is hf_srnets' encoder (thresholds, metric,
  windows and the short-text skip stay TextAttack's);
- POS tagger: a `PartOfSpeech` subclass whose `_get_pos` tags the context with hf_srnets' tagger and keeps
  TextAttack's look-up (`word_list.index(word)`) and its compatibility rule (equal tags or NOUN/VERB).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import OrderedDict
from typing import Any

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
    sys.path.insert(0, REPO)


def shared_resources(word_vectors: str | None = None, pos_tagger: str = "coarse") -> dict[str, Any]:
    """The resources of hf_srnets' recipes (word vectors from `word_vectors` or the default, the default sentence
    encoder, the POS tagger named `pos_tagger`), loaded as `hf_srnets.attack.recipes` loads them for `run_attack.py`."""
    from hf_srnets.attack import recipes

    if hasattr(recipes, "pos_tagger"):
        tagger = recipes.pos_tagger(pos_tagger)
    else:  # hf_srnets before --pos_tagger: NLTK if its data is installed, else the coarse fallback
        from hf_srnets.attack.pos import load_pos_tagger

        tagger = load_pos_tagger()
    vectors, encoder = recipes.word_embedding(word_vectors), recipes.sentence_encoder(None)
    return {"word_vectors": vectors, "sentence_encoder": encoder, "pos": tagger}


def describe_resources(resources: dict[str, Any]) -> dict[str, str]:
    """Names of the shared resources, for the bench's report."""
    emb, enc, pos = resources["word_vectors"], resources["sentence_encoder"], resources["pos"]
    return {
        "word_vectors": f"{getattr(emb, 'source', type(emb).__name__)} ({len(emb)} words)",
        "sentence_encoder": str(getattr(enc, "path", type(enc).__name__)),
        "pos_tagger": getattr(pos, "__name__", type(pos).__name__),
    }


class LazyNeighbours:
    """`nn_matrix[i]` of TextAttack's `WordEmbedding`, computed on first use by its own definition
    (`WordEmbedding.nearest_neighbours` without a matrix: Euclidean distance, `topk(k + 1, largest=False)`);
    TextAttack's on-the-fly branch cannot be used as shipped (it slices the `topk` result tuple)."""

    def __init__(self, matrix: Any, k: int = 50) -> None:
        import torch

        self.matrix = torch.as_tensor(matrix)
        self.k = k
        self.rows: dict[int, Any] = {}

    def __getitem__(self, index: int) -> Any:
        import torch

        if index not in self.rows:
            dist = torch.norm(self.matrix - self.matrix[index], dim=1)
            self.rows[index] = dist.topk(self.k + 1, largest=False).indices.numpy()
        return self.rows[index]


def textattack_embedding(embedding: Any) -> Any:
    """hf_srnets' `WordEmbedding` behind TextAttack's `WordEmbedding` interface."""
    from textattack.shared import WordEmbedding

    words = list(embedding.words)
    return WordEmbedding(
        embedding.matrix, {w: i for i, w in enumerate(words)}, dict(enumerate(words)), LazyNeighbours(embedding.matrix)
    )


def shared_components(resources: dict[str, Any], x_wildcard: bool = False) -> dict[str, Any]:
    """TextAttack classes around the shared resources: an encoder constraint class and a POS constraint class
    (`x_wildcard`: the tag "X" is compatible with every tag, as in hf_srnets' `compatible_pos`, for ablation)."""
    import numpy as np
    import torch
    from textattack.constraints.grammaticality import PartOfSpeech
    from textattack.constraints.semantics.sentence_encoders import SentenceEncoder

    encoder, tagger = resources["sentence_encoder"], resources["pos"]

    class SharedSentenceEncoder(SentenceEncoder):
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.model = self

        def encode(self, sentences: list[str]) -> Any:
            return np.asarray(encoder.encode(list(sentences)), dtype=np.float32)

        def _score_list(self, starting_text: Any, transformed_texts: list[Any]) -> Any:
            # TextAttack encodes, then sets the score of every text shorter than the window to 1: when that is all
            # of them, the encoding is skipped (same scores, minutes less per 100 examples).
            if self.skip_text_shorter_than_window and all(len(t.words) < self.window_size for t in transformed_texts):
                return torch.ones(len(transformed_texts))
            return super()._score_list(starting_text, transformed_texts)

    class SharedPartOfSpeech(PartOfSpeech):
        def _can_replace_pos(self, pos_a: str, pos_b: str) -> bool:
            if x_wildcard and "X" in (pos_a, pos_b):  # hf_srnets' rule for its coarse tagger's "unsure" tag
                return True
            return super()._can_replace_pos(pos_a, pos_b)

        def _get_pos(self, before_ctx: list[str], word: str, after_ctx: list[str]) -> str:
            context = before_ctx + [word] + after_ctx
            key = " ".join(context)
            if key not in self._pos_tag_cache:
                self._pos_tag_cache[key] = (tuple(context), tuple(tagger(context)))
            word_list, pos_list = self._pos_tag_cache[key]
            return pos_list[word_list.index(word)]

    return {"encoder": SharedSentenceEncoder, "pos": SharedPartOfSpeech, "embedding": textattack_embedding}


def textfooler_stopwords() -> set[str]:
    """The stopword set TextAttack's TextFooler builder passes to `StopwordModification`, read from its source."""
    import ast
    import inspect

    from textattack.attack_recipes import textfooler_jin_2019

    tree = ast.parse(inspect.getsource(textfooler_jin_2019))
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "stopwords":
            return set(ast.literal_eval(node.value.args[0]))
    raise RuntimeError("TextAttack's textfooler_jin_2019.py has no `stopwords = set([...])`: another version?")


def build_textfooler(wrapper: Any, parts: dict[str, Any], embedding: Any) -> Any:
    """TextFoolerJin2019.build with the shared resources."""
    from textattack import Attack
    from textattack.constraints.pre_transformation import (
        InputColumnModification,
        RepeatModification,
        StopwordModification,
    )
    from textattack.constraints.semantics import WordEmbeddingDistance
    from textattack.goal_functions import UntargetedClassification
    from textattack.search_methods import GreedyWordSwapWIR
    from textattack.transformations import WordSwapEmbedding

    constraints = [RepeatModification(), StopwordModification(stopwords=textfooler_stopwords())]
    constraints.append(InputColumnModification(["premise", "hypothesis"], {"premise"}))
    constraints.append(WordEmbeddingDistance(embedding=embedding, min_cos_sim=0.5))
    constraints.append(parts["pos"](allow_verb_noun_swap=True))
    constraints.append(
        parts["encoder"](
            threshold=0.840845057,
            metric="angular",
            compare_against_original=False,
            window_size=15,
            skip_text_shorter_than_window=True,
        )
    )
    transformation = WordSwapEmbedding(max_candidates=50, embedding=embedding)
    return Attack(
        UntargetedClassification(wrapper), constraints, transformation, GreedyWordSwapWIR(wir_method="delete")
    )


def build_textbugger(wrapper: Any, parts: dict[str, Any], embedding: Any) -> Any:
    """TextBuggerLi2018.build with the shared resources (NLTK's English stopwords, as its builder)."""
    from textattack import Attack
    from textattack.constraints.pre_transformation import RepeatModification, StopwordModification
    from textattack.goal_functions import UntargetedClassification
    from textattack.search_methods import GreedyWordSwapWIR
    from textattack.transformations import (
        CompositeTransformation,
        WordSwapEmbedding,
        WordSwapHomoglyphSwap,
        WordSwapNeighboringCharacterSwap,
        WordSwapRandomCharacterDeletion,
        WordSwapRandomCharacterInsertion,
    )

    edge = {"random_one": True, "skip_first_char": True, "skip_last_char": True}
    transformation = CompositeTransformation(
        [
            WordSwapRandomCharacterInsertion(letters_to_insert=" ", **edge),
            WordSwapRandomCharacterDeletion(**edge),
            WordSwapNeighboringCharacterSwap(**edge),
            WordSwapHomoglyphSwap(),
            WordSwapEmbedding(max_candidates=5, embedding=embedding),
        ]
    )
    constraints = [RepeatModification(), StopwordModification(), parts["encoder"](threshold=0.8)]
    return Attack(
        UntargetedClassification(wrapper), constraints, transformation, GreedyWordSwapWIR(wir_method="delete")
    )


BUILDERS = {"textfooler": build_textfooler, "textbugger": build_textbugger}


def textattack_model_wrapper(spec: dict[str, Any]) -> Any:
    """The victim as a TextAttack user runs it: the checkpoint through transformers' Auto classes inside TextAttack's
    own `HuggingFaceModelWrapper`, which pads every batch to the tokenizer's `model_max_length` (512 for BERT-family
    checkpoints). Its logits are in the model's label order, so that must be the task's (checked by name)."""
    import transformers
    from textattack.models.wrappers import HuggingFaceModelWrapper

    from hf_srnets.data.tasks import resolve_task
    from hf_srnets.resources.auto_loading import auto_from_pretrained
    from hf_srnets.run_files import SRNET_CONFIG_NAME

    if os.path.isfile(os.path.join(spec["model"], SRNET_CONFIG_NAME)):
        raise ValueError("victim 'textattack' loads a plain checkpoint; a mask dir needs the shared victim")
    task = resolve_task(spec["task"])
    model = auto_from_pretrained(transformers.AutoModelForSequenceClassification, spec["model"])
    names = tuple(str(model.config.id2label[i]).lower() for i in range(model.config.num_labels))
    if names != tuple(name.lower() for name in task.label_names):
        raise ValueError(
            f"victim 'textattack': the checkpoint's labels {names} are not the task's {task.label_names} in order; "
            "TextAttack's wrapper would score the wrong classes: use the shared victim"
        )
    model.to(spec.get("device", "cpu")).eval()
    return HuggingFaceModelWrapper(model, auto_from_pretrained(transformers.AutoTokenizer, spec["model"]))


def model_wrapper(spec: dict[str, Any]) -> Any:
    """The victim behind TextAttack's `ModelWrapper`: hf_srnets' `HFClassifier`, no cache, float64 probabilities
    (spec `victim` "shared", the default), or TextAttack's own wrapper (`textattack_model_wrapper`)."""
    if spec.get("victim", "shared") == "textattack":
        return textattack_model_wrapper(spec)
    import numpy as np
    from textattack.models.wrappers import ModelWrapper

    from hf_srnets.attack import build_classifier, load_victim
    from hf_srnets.data.tasks import resolve_task

    task = resolve_task(spec["task"])
    victim = load_victim(spec["model"], task, base_model=spec.get("base_model"))
    victim.model.to(spec.get("device", "cpu"))
    classifier = build_classifier(
        victim, task, batch_size=spec["batch_size"], max_length=spec["max_length"], cache_size=0
    )

    class SharedVictim(ModelWrapper):
        def __init__(self) -> None:
            self.model = victim.model
            self.classifier = classifier

        def __call__(self, text_input_list: list[Any]) -> Any:
            texts = [(t,) if isinstance(t, str) else tuple(t) for t in text_input_list]
            probs = np.asarray(classifier(texts), dtype=np.float64)
            return probs / probs.sum(axis=1, keepdims=True)

    return SharedVictim()


def attack_input(text: list[str]) -> Any:
    """A sentence as a string, a pair as TextAttack's ("premise", "hypothesis") columns."""
    if len(text) == 1:
        return text[0]
    if len(text) == 2:
        return OrderedDict([("premise", text[0]), ("hypothesis", text[1])])
    raise ValueError(f"an example has {len(text)} texts; the worker handles sentences and pairs")


def result_record(result: Any, spent: int, seconds: float) -> dict[str, Any]:
    """One example's outcome as the bench compares it."""
    from textattack.attack_results import FailedAttackResult, SkippedAttackResult, SuccessfulAttackResult

    outcome = {SkippedAttackResult: "skipped", SuccessfulAttackResult: "successful", FailedAttackResult: "failed"}
    perturbed = result.perturbed_result.attacked_text
    return {
        "outcome": outcome[type(result)],
        "num_queries": int(result.perturbed_result.num_queries),
        "queries_spent": int(spent),
        "perturbed": list(perturbed._text_input.values()),
        "words_changed": len(perturbed.attack_attrs.get("modified_indices", ())),
        "num_words": result.original_result.attacked_text.num_words,
        "seconds": round(seconds, 3),
    }


def run(spec: dict[str, Any], out_path: str) -> dict[str, Any]:
    """Attack every example with every recipe (`out_path` rewritten after each example); np.random is seeded per
    example (TextBugger's character bugs)."""
    import numpy as np

    resources = shared_resources(spec.get("word_vectors"), spec.get("pos_tagger", "coarse"))
    if hasattr(resources["sentence_encoder"], "to"):  # the same device as hf_srnets' side (hf_srnets >= issue 37)
        resources["sentence_encoder"].to(spec.get("device", "cpu"))
    parts = shared_components(resources, x_wildcard=spec.get("pos_rule") == "x_wildcard")
    embedding = parts["embedding"](resources["word_vectors"])
    wrapper = model_wrapper(spec)
    out: dict[str, Any] = {"resources": describe_resources(resources), "results": {}}
    attacks = {name: BUILDERS[name](wrapper, parts, embedding) for name in spec["recipes"]}
    for name, attack in attacks.items():
        records = []
        for example in spec["examples"]:
            np.random.seed(spec["seed"] + example["index"])
            start = time.perf_counter()
            result = attack.attack(attack_input(example["text"]), example["label"])
            spent = attack.goal_function.num_queries
            records.append({"index": example["index"], **result_record(result, spent, time.perf_counter() - start)})
            print(f"textattack {name} {len(records)}/{len(spec['examples'])}: {records[-1]['outcome']}", flush=True)
            out["results"][name] = records
            with open(out_path, "w", encoding="utf-8") as f:  # after every example: a cut run keeps its results
                json.dump(out, f, ensure_ascii=False)
    return out


def main(argv: list[str]) -> None:
    if len(argv) != 2 or argv[0] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0 if argv[:1] in (["-h"], ["--help"]) else 2)
    with open(argv[0], encoding="utf-8") as f:
        spec = json.load(f)
    run(spec, argv[1])


if __name__ == "__main__":
    main(sys.argv[1:])
