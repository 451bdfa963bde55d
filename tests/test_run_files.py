"""`hf_srnets.run_files` owns every name of a run folder's files: no string literal elsewhere in `hf_srnets` spells
one again, its transformers names are transformers' own, and its helpers build the names its patterns describe.

The scan reads every module with `ast`. Docstrings and other bare string statements are prose and may name files;
every other string constant is looked at, an f-string as a whole with `*` for each `{...}` (`f"bias_{split}.jsonl"`
reads `bias_*.jsonl`). A name or pattern with an extension (`config.json`, `bias_*.jsonl`) is looked for among
the file-name tokens of each string (`<split>` reads `*`); one without (a folder such as `merged`, a prefix such as
`srnet_*`) only as the whole string where a string names a file: assigned to a name, an element of a tuple, list or
set, or an argument of `os.path.join`. Such words also occur in prose, in other names and as keys
(`{"bias_model": ...}` in a report, `scheme == "runs"`).
"""

from __future__ import annotations

import ast
import fnmatch
import json
import os
import re
import textwrap
from pathlib import Path

import pytest

from hf_srnets import run_files
from hf_srnets.errors import InputError

ROOT = Path(__file__).resolve().parent.parent
OWNER = ROOT / "hf_srnets" / "run_files.py"
_TOKEN = re.compile(r"[\w.*<>-]+")


def owned_names() -> set[str]:
    """Every string run_files.py assigns at module level (in tuples too): the names and patterns it owns."""
    tree = ast.parse(OWNER.read_text(encoding="utf-8"))
    names = set()
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            names |= {c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant) and isinstance(c.value, str)}
    return names


def _tokens(text: str) -> set[str]:
    """The file-name-like pieces of `text` (split at spaces, slashes, quotes, ...), `<...>` as `*`."""
    text = re.sub(r"<[^<>]*>", "*", text)
    return {token.rstrip(".") for token in _TOKEN.findall(text)}


def _is_copy(text: str, names: set[str], names_a_file: bool) -> str | None:
    """The owned name `text` spells again (module doc), or None; `names_a_file`: where the string stands, it names
    a file (an assignment, a tuple, list or set, `os.path.join`)."""
    for name in sorted(names):
        if "." not in name:  # a folder or a prefix pattern: only the whole string where it names a file
            if names_a_file and text == name:
                return name
            continue
        for token in _tokens(text):
            if token == name or ("*" in name and fnmatch.fnmatchcase(token, name)):
                return name
    return None


def _file_name_places(tree: ast.AST) -> set[int]:
    """ids of the nodes that stand where a file is named: assigned values, elements of a tuple, list or set, and
    arguments of a `join` call (`os.path.join`)."""
    places = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            places.add(id(node.value))
        elif isinstance(node, ast.Tuple | ast.List | ast.Set):
            places |= {id(e) for e in node.elts}
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "join":
            places |= {id(a) for a in node.args}
    return places


def _strings(tree: ast.AST) -> list[tuple[int, str, bool]]:
    """(line, text, whether it stands where a file is named) of every string constant of `tree` but bare string
    statements (docstrings); an f-string as one text with `*` for each replacement field, its parts not again."""
    prose = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
    places = _file_name_places(tree)
    parts = set()
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            pieces = [v.value if isinstance(v, ast.Constant) else "*" for v in node.values]
            parts |= {id(v) for v in node.values}
            for v in node.values:  # a format spec is an f-string of its own: not a name
                if isinstance(v, ast.FormattedValue) and v.format_spec is not None:
                    parts |= {id(s) for s in ast.walk(v.format_spec)}
            out.append((node.lineno, "".join(str(p) for p in pieces), id(node) in places))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose | parts:
            out.append((node.lineno, node.value, id(node) in places))
    return out


def copies(source: str, names: set[str], where: str = "<source>") -> list[str]:
    """`where:line: 'text' spells <name>` for every string constant of `source` that spells an owned name."""
    found = []
    for line, text, names_a_file in sorted(_strings(ast.parse(source))):
        name = _is_copy(text, names, names_a_file)
        if name is not None:
            found.append(f"{where}:{line}: {text[:80]!r} spells {name}")
    return found


def package_copies() -> list[str]:
    names = owned_names()
    found = []
    for path in sorted((ROOT / "hf_srnets").rglob("*.py")):
        if path != OWNER:
            found += copies(path.read_text(encoding="utf-8"), names, str(path.relative_to(ROOT)))
    return found


def test_no_module_spells_a_run_file_name_again():
    assert package_copies() == []


def test_the_scan_finds_copies_in_literals_messages_and_f_strings():
    source = textwrap.dedent(
        '''
        """A docstring may name all_results.json and bias_<split>.jsonl."""
        import os
        A = os.path.join(out, "all_results.json")
        B = f"{out}/merged/config.json is missing"
        C = f"bias_{split}.jsonl"
        D = "Where bias_<split>.jsonl is written."
        E = ("merged", "the merged checkpoint", "srnet_pruned_heads", "srnet_*", f"{x:.2f}", "tokenizer_config.json")
        F = "a config.jsonl and my_config.json and x.json"
        G = {"merged": 1, "key": "merged"}, scheme == "merged", os.path.join(out, "merged")
        '''
    )
    names = {"all_results.json", "config.json", "bias_*.jsonl", "merged", "srnet_*"}
    assert copies(source, names) == [
        "<source>:4: 'all_results.json' spells all_results.json",
        "<source>:5: '*/merged/config.json is missing' spells config.json",
        "<source>:6: 'bias_*.jsonl' spells bias_*.jsonl",
        "<source>:7: 'Where bias_<split>.jsonl is written.' spells bias_*.jsonl",
        "<source>:8: 'merged' spells merged",
        "<source>:8: 'srnet_*' spells srnet_*",
        "<source>:10: 'merged' spells merged",
    ]


def test_owned_names_are_read_from_run_files():
    names = owned_names()
    assert {"all_results.json", "bias_*.jsonl", "merged", "trainer_state.json", "vocab.txt"} <= names
    assert "Names of the files" not in " ".join(names)  # the docstring is not a name


@pytest.mark.parametrize(
    "module, name, ours",
    [
        ("transformers.utils", "CONFIG_NAME", "MODEL_CONFIG_NAME"),
        ("transformers.utils", "GENERATION_CONFIG_NAME", "GENERATION_CONFIG_NAME"),
        ("transformers.utils", "SAFE_WEIGHTS_NAME", "SAFE_WEIGHTS_NAME"),
        ("transformers.utils", "SAFE_WEIGHTS_INDEX_NAME", "SAFE_WEIGHTS_INDEX_NAME"),
        ("transformers.utils", "WEIGHTS_NAME", "WEIGHTS_NAME"),
        ("transformers.utils", "WEIGHTS_INDEX_NAME", "WEIGHTS_INDEX_NAME"),
        ("transformers.trainer", "TRAINER_STATE_NAME", "TRAINER_STATE_NAME"),
        ("transformers.trainer", "TRAINING_ARGS_NAME", "TRAINING_ARGS_NAME"),
    ],
)
def test_transformers_names_are_transformers_own(module, name, ours):
    assert getattr(run_files, ours) == getattr(pytest.importorskip(module), name)


def test_the_tokenizer_files_are_those_transformers_writes():
    from transformers import tokenization_utils_base as base

    written = {base.FULL_TOKENIZER_FILE, base.TOKENIZER_CONFIG_FILE, base.SPECIAL_TOKENS_MAP_FILE}
    written |= {base.ADDED_TOKENS_FILE, base.CHAT_TEMPLATE_FILE}
    assert written <= set(run_files.TOKENIZER_FILES) | set(run_files.OTHER_TOKENIZER_FILES)


def test_pattern_helpers():
    assert run_files.bias_predictions_name("hans") == "bias_hans.jsonl"
    assert run_files.attack_rows_name("textfooler") == "attack_textfooler.jsonl"


@pytest.mark.parametrize("text", ["", '{"eval_mnli_accuracy": 0.8', "[0.8]", "\xff\xfe"])
def test_an_empty_cut_or_non_object_results_file_is_not_a_finished_run(tmp_path, text):
    (tmp_path / "all_results.json").write_bytes(text.encode("latin-1"))  # a full disk, a kill mid-write, a stray file
    assert not run_files.is_finished(str(tmp_path))
    (tmp_path / "all_results.json").write_text('{"eval_mnli_accuracy": 0.8}')
    assert run_files.is_finished(str(tmp_path))


def test_write_json_replaces_the_record_whole_and_an_interrupted_write_keeps_the_previous_one(tmp_path, monkeypatch):
    path = tmp_path / "all_results.json"
    run_files.write_json(str(path), {"a": 1}, indent=2)
    assert path.read_text() == '{\n  "a": 1\n}\n'

    def full_disk(data, f, **options):
        f.write('{"a": ')
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(json, "dump", full_disk)
    with pytest.raises(OSError, match="No space left"):
        run_files.write_json(str(path), {"a": 2})
    assert path.read_text() == '{\n  "a": 1\n}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["all_results.json"]  # no temporary file left


def _write_predictions(path):
    from hf_srnets.data.columns import write_predictions

    write_predictions(path, ["a"], [[0.25, 0.75]], ["d"])


def _write_set(path):
    from hf_srnets.experiments.per_example import write_set

    write_set([{"id": "a"}], path)


@pytest.mark.parametrize(
    "write",
    [_write_predictions, _write_set, lambda path: run_files.write_json(path, {"a": 1})],
    ids=["write_predictions", "write_set", "write_json"],
)
def test_a_hard_link_at_the_target_is_replaced_not_written_through(tmp_path, write):
    # issue 50: a hard link of the training file placed at the --write_train_predictions target held the predictions
    original = tmp_path / "train.tsv"
    original.write_text("id\tsentence1\tlabel\n1\tA cat.\t0\n")
    target = tmp_path / "out" / "train_predictions.jsonl"
    target.parent.mkdir()
    os.link(original, target)
    write(str(target))
    assert original.read_text() == "id\tsentence1\tlabel\n1\tA cat.\t0\n"
    assert target.read_bytes() != original.read_bytes() and not os.path.samefile(original, target)
    assert sorted(p.name for p in target.parent.iterdir()) == ["train_predictions.jsonl"]


def test_a_full_disk_while_replacing_a_file_names_it_and_leaves_no_temporary_file(tmp_path, monkeypatch):
    from hf_srnets.bias.prediction_files import save_bias_predictions

    def full_disk(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(OSError, match="No space left") as raised:
        save_bias_predictions(str(tmp_path), {"hans": {"1": [0.5, 0.5]}}, {})
    assert raised.value.filename == str(tmp_path / "bias_hans.jsonl")
    assert list(tmp_path.iterdir()) == []


UNSAFE_NAMES = ["../../notes", "my/set", "sub/../../escape", "..", ".hidden", "a b", "x:y", "", "a\\b"]


@pytest.mark.parametrize("name", UNSAFE_NAMES)
def test_a_name_that_becomes_a_file_name_must_be_safe(name):
    with pytest.raises(InputError, match=r"--ood_file .*: the NAME becomes a file name.* e\.g\. --ood_file \w+=PATH$"):
        run_files.check_file_name("--ood_file", name, "--ood_file {name}=PATH")


def test_every_known_set_name_is_a_safe_file_name():
    from hf_srnets.data.tasks import known_set_names

    for name in [*known_set_names(), "anli-r1", "mnli.mm", "paws_qqp", "hans+", "évaluation"]:
        assert run_files.check_file_name("--ood_file", name, "") == name


def test_detach_links_unlinks_linked_run_files_only(tmp_path):
    """A hard or symbolic link at a name a run writes is unlinked (its file kept whole); a user's own linked file,
    a plain run file and a real folder stay."""
    out = tmp_path / "out"
    (out / "eval_predictions").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    kept = tmp_path / "kept.txt"
    kept.write_text("kept")
    os.link(kept, out / "config.json")
    os.symlink(kept, out / "model.safetensors")
    os.symlink(elsewhere, out / "merged")
    os.link(kept, out / "notes.txt")
    (out / "all_results.json").write_text("{}")
    assert run_files.detach_links(out) == ["config.json", "merged", "model.safetensors"]
    assert sorted(p.name for p in out.iterdir()) == ["all_results.json", "eval_predictions", "notes.txt"]
    assert kept.read_text() == "kept" and elsewhere.is_dir()
    assert run_files.detach_links(tmp_path / "missing") == []
