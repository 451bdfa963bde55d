"""Every default Hub dataset a task names, read in its published schema (datasets >= 4: no loading scripts).

The Hub is unreachable in CI, so `datasets.load_dataset` is replaced by a function that returns two rows built
with each repository's published features: column names and `ClassLabel` names as on the dataset cards
(GLUE: `premise`/`hypothesis`/`label`/`idx`; HANS: `premise`/`hypothesis`, labels entailment/non-entailment,
plus parses and `heuristic`/`subcase`/`template`; PAWS: `id`/`sentence1`/`sentence2`, labels "0"/"1";
AG News: `text`, World/Sports/Business/Sci/Tech; IMDb: `text`, neg/pos). The test checks the call the loader
makes (repository, config, split and, for a repository that is only a loading script, the Parquet-export
revision) and the canonical rows it builds.
"""

from __future__ import annotations

import pytest
from datasets import ClassLabel, Dataset, Features, Value

from hf_srnets.data.loading import load_source
from hf_srnets.data.tasks import TASKS, SplitSource
from hf_srnets.errors import MissingInputError

S = Value("string")
GLUE_MNLI = Features(
    {"premise": S, "hypothesis": S, "label": ClassLabel(names=["entailment", "neutral", "contradiction"])}
    | {"idx": Value("int32")}
)
GLUE_QQP = Features(
    {"question1": S, "question2": S, "label": ClassLabel(names=["not_duplicate", "duplicate"]), "idx": Value("int32")}
)
GLUE_QNLI = Features(
    {"question": S, "sentence": S, "label": ClassLabel(names=["entailment", "not_entailment"]), "idx": Value("int32")}
)
GLUE_SST2 = Features({"sentence": S, "label": ClassLabel(names=["negative", "positive"]), "idx": Value("int32")})
HANS = Features(
    {"premise": S, "hypothesis": S, "label": ClassLabel(names=["entailment", "non-entailment"])}
    | {c: S for c in ("parse_premise", "parse_hypothesis", "binary_parse_premise", "binary_parse_hypothesis")}
    | {"heuristic": S, "subcase": S, "template": S}
)
PAWS = Features({"id": Value("int32"), "sentence1": S, "sentence2": S, "label": ClassLabel(names=["0", "1"])})
AG_NEWS = Features({"text": S, "label": ClassLabel(names=["World", "Sports", "Business", "Sci/Tech"])})
IMDB = Features({"text": S, "label": ClassLabel(names=["neg", "pos"])})


def _rows(features: Features, texts: list[tuple[str, ...]], labels: list[int]) -> Dataset:
    text_columns = [c for c, f in features.items() if isinstance(f, Value) and f.dtype == "string"]
    data: dict[str, list] = {c: [] for c in features}
    for i, (row_texts, label) in enumerate(zip(texts, labels, strict=True)):
        for c in features:
            if c == "label":
                data[c].append(label)
            elif c in ("idx", "id"):
                data[c].append(i)
            else:  # the first text columns get the texts, the others (parses, heuristic, ...) a marker
                k = text_columns.index(c)
                data[c].append(row_texts[k] if k < len(row_texts) else f"{c}-{i}")
    return Dataset.from_dict(data, features=features)


PAIRS = [("A man sleeps .", "A person sleeps ."), ("The cat ran .", "The dog sat .")]
SINGLES = [("a fine film",), ("a dull film",)]

# (task, which split, the published features, the texts, the label ids, the label names the run should read)
CASES = [
    ("mnli", "train", GLUE_MNLI, PAIRS, [0, 2], ["entailment", "contradiction"]),
    ("mnli", "validation", GLUE_MNLI, PAIRS, [1, 0], ["neutral", "entailment"]),
    ("mnli", "ood:hans", HANS, PAIRS, [1, 0], ["non-entailment", "entailment"]),
    ("qqp", "train", GLUE_QQP, PAIRS, [1, 0], ["duplicate", "not_duplicate"]),
    ("qqp", "ood:paws_wiki", PAWS, PAIRS, [0, 1], ["not_duplicate", "duplicate"]),
    ("qnli", "validation", GLUE_QNLI, PAIRS, [1, 0], ["not_entailment", "entailment"]),
    ("sst2", "validation", GLUE_SST2, SINGLES, [1, 0], ["positive", "negative"]),
    ("ag_news", "validation", AG_NEWS, SINGLES, [3, 1], ["Sci/Tech", "Sports"]),
    ("imdb", "train", IMDB, SINGLES, [0, 1], ["negative", "positive"]),
]


def _source(task_name: str, which: str):
    task = TASKS[task_name]
    if which.startswith("ood:"):
        eval_set = next(e for e in task.ood if e.name == which[4:])
        return task, eval_set.source, eval_set.label_names
    return task, getattr(task, which), task.label_names


@pytest.mark.parametrize(("task_name", "which", "features", "texts", "labels", "expected"), CASES)
def test_each_default_hub_set_loads_in_its_published_schema(
    monkeypatch, task_name, which, features, texts, labels, expected
):
    import datasets

    task, source, label_names = _source(task_name, which)
    calls = []

    def hub(path, name=None, *, split=None, cache_dir=None, **kwargs):
        calls.append((path, name, split, kwargs.get("revision")))
        return _rows(features, texts, labels)

    monkeypatch.setattr(datasets, "load_dataset", hub)
    data = load_source(source, label_names, name=which, aliases=task.label_aliases, text_fields=task.text_fields)
    assert calls == [(source.hub_path, source.hub_config, source.hub_split, source.hub_revision)]
    assert [label_names[i] for i in data["label"]] == expected
    assert data["sentence1"] == [t[0] for t in texts]
    if len(texts[0]) == 2:
        assert data["sentence2"] == [t[1] for t in texts]


def test_every_hub_dataset_of_every_task_is_covered():
    def key(source: SplitSource) -> tuple:
        return source.hub_path, source.hub_config, source.hub_revision

    covered = {key(_source(t, w)[1]) for t, w, *_ in CASES}
    for name, task in TASKS.items():
        sources = [task.train, task.validation, task.test, *(e.source for e in task.ood)]
        for source in sources:
            if source is not None and source.hub_path is not None:
                assert key(source) in covered, f"{name}: {key(source)} has no published-schema case here"


def test_hans_is_read_from_the_parquet_export_of_the_official_repository():
    hans = next(e for e in TASKS["mnli"].ood if e.name == "hans").source
    # jhu-cogsci/hans's main branch holds hans.py, which datasets >= 4 refuses to run
    assert (hans.hub_path, hans.hub_revision) == ("jhu-cogsci/hans", "refs/convert/parquet")
    assert hans.dataset_entry("HANS")["revision"] == "refs/convert/parquet"


def test_a_repository_that_is_only_a_loading_script_names_the_local_file(monkeypatch):
    import datasets

    def script_only(*args, **kwargs):  # datasets >= 4's own message
        raise RuntimeError("Dataset scripts are no longer supported, but found hans.py")

    monkeypatch.setattr(datasets, "load_dataset", script_only)
    source = SplitSource("someone/nli", None, "validation", ("nli/dev.tsv",))
    with pytest.raises(MissingInputError, match=r"only a loading script.*--data_dir with \['nli/dev.tsv'\]"):
        load_source(source, ("entailment", "non-entailment"), name="nli dev")
