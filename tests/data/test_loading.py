"""Loading files into the canonical schema (id, sentence1, sentence2, label) and the task registry."""

import csv

import pytest

from hf_srnets.data import canonicalize, get_task, load_file, load_source
from hf_srnets.data.file_readers import MAX_FIELD_CHARS
from hf_srnets.errors import InputError, MissingInputError

NLI = ("entailment", "neutral", "contradiction")


def test_tsv_with_aliases_and_string_labels(tmp_path):
    path = tmp_path / "train.tsv"
    path.write_text(
        'idx\tpremise\thypothesis\tlabel\n7\tA "quoted" man .\tA man .\tentailment\n9\tx\ty\tcontradiction\n'
    )
    ds = load_file(str(path), NLI)
    assert ds.column_names[:4] == ["id", "sentence1", "sentence2", "label"]
    assert ds["id"] == ["7", "9"] and ds["label"] == [0, 2]
    assert ds[0]["sentence1"] == 'A "quoted" man .'  # tsv is read without quoting


def test_jsonl_without_id_gets_content_ids(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text(
        '{"sentence1": "a", "sentence2": "b", "label": 1}\n{"sentence1": "c", "sentence2": "d", "label": 0}\n'
    )
    ds = load_file(str(path), NLI)
    reordered = tmp_path / "r.jsonl"
    reordered.write_text(
        '{"sentence1": "c", "sentence2": "d", "label": 0}\n{"sentence1": "a", "sentence2": "b", "label": 1}\n'
    )
    assert sorted(ds["id"]) == sorted(load_file(str(reordered), NLI)["id"])  # ids do not depend on row order


@pytest.mark.parametrize(
    "rows, message",
    [
        ([{"id": 1, "sentence1": "a", "label": "maybe"}], "unknown label 'maybe'"),
        ([{"id": 1, "sentence1": "a", "label": 5}], "out of range"),
        ([{"id": 1, "foo": "a", "label": 0}], "no text column"),
        ([{"id": 1, "sentence1": "a"}], "no label column"),
        ([{"id": 1, "sentence1": "a", "label": 0}, {"id": 1, "sentence1": "b", "label": 0}], "duplicate example id"),
        ([], "has no rows"),
    ],
)
def test_bad_rows(rows, message):
    with pytest.raises(ValueError, match=message):
        canonicalize(rows, NLI, name="fixture")


def test_unknown_task_and_missing_local_file(tmp_path):
    with pytest.raises(ValueError, match="Unknown task"):
        get_task("sst9")
    task = get_task("qqp")
    with pytest.raises(FileNotFoundError, match="paws_qqp"):
        load_source(task.ood[0].source, task.label_names, name="paws_qqp", data_dir=str(tmp_path))


def test_shared_data_layout_works_as_is(data_dir):
    task = get_task("mnli")
    dev = load_source(task.validation, task.label_names, name="dev", data_dir=str(data_dir), aliases=task.label_aliases)
    assert len(dev) == 9815 and len(set(dev["id"])) == 9815
    assert sorted(set(dev["label"])) == [0, 1, 2]
    hans = load_source(task.ood[0].source, task.ood[0].label_names, name="hans", data_dir=str(data_dir))
    assert len(hans) == 30000 and sum(hans["label"]) == 15000
    assert set(hans["heuristic"]) == {"lexical_overlap", "subsequence", "constituent"}
    qqp = get_task("qqp")
    paws = load_source(
        qqp.ood[0].source, qqp.label_names, name="paws", data_dir=str(data_dir), aliases=qqp.label_aliases
    )
    assert len(paws) == 677 and sum(paws["label"]) == 191


def _real_rows(data_dir, n: int) -> list[str]:
    """The header and first `n` rows of the real MNLI dev-mismatched file."""
    return (data_dir / "mnli" / "dev_mismatched.tsv").read_text(encoding="utf-8").splitlines()[: n + 1]


def test_a_non_utf8_tsv_names_the_file_line_and_byte(tmp_path, data_dir):
    lines = _real_rows(data_dir, 6)
    lines[4] = lines[4].replace(" ", " café ", 1)  # line 5 of the file; é is 0xe9 in Latin-1
    path = tmp_path / "latin1.tsv"
    path.write_bytes(("\n".join(lines) + "\n").encode("latin-1"))
    column = lines[4].encode("latin-1").index(b"\xe9") + 1
    with pytest.raises(
        InputError, match=rf"latin1\.tsv is not UTF-8 \(line 5, byte {column} is 0xe9\).*iconv -f latin1"
    ):
        load_file(str(path), NLI)


def test_tsv_fields_up_to_the_documented_limit_load_and_longer_ones_name_file_and_line(tmp_path, data_dir):
    lines = _real_rows(data_dir, 4)
    header = lines[0].split("\t")
    premise = header.index("premise")

    def with_sentence1(text: str) -> str:
        fields = lines[2].split("\t")
        fields[premise] = text
        return "\n".join([*lines[:2], "\t".join(fields), *lines[3:]]) + "\n"

    long_ok = tmp_path / "long_ok.tsv"
    long_ok.write_text(with_sentence1("word " * 40_000), encoding="utf-8")  # 200,000 characters > csv's 131,072
    assert len(load_file(str(long_ok), NLI)[1]["sentence1"]) == 200_000
    too_long = tmp_path / "too_long.tsv"
    too_long.write_text(with_sentence1("x" * (MAX_FIELD_CHARS + 1)), encoding="utf-8")
    with pytest.raises(InputError, match=r"too_long\.tsv line 3: a field is longer than 1,048,576 characters"):
        load_file(str(too_long), NLI)
    assert csv.field_size_limit() == 131_072  # the process-wide limit is restored


def test_a_missing_data_file_is_a_missing_input_error(tmp_path):
    with pytest.raises(MissingInputError, match="Data file not found"):
        load_file(str(tmp_path / "nothere.tsv"), NLI)


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-8"])
@pytest.mark.parametrize("newline", ["\r\n", "\n"])
def test_a_byte_order_mark_and_crlf_read_as_the_plain_file(tmp_path, data_dir, encoding, newline):
    """issue 50: saved with a byte-order mark (Excel, Notepad), the MNLI header's first name was '\\ufeffidx', so
    the ids silently came from pairID instead of idx, and an SST-2 file had no 'sentence' column. Real rows."""
    lines = _real_rows(data_dir, 5)
    path = tmp_path / "mnli.tsv"
    path.write_bytes(newline.join(lines).encode(encoding) + newline.encode())
    plain = tmp_path / "plain.tsv"
    plain.write_text("\n".join(lines) + "\n", encoding="utf-8")
    read, expected = load_file(str(path), NLI), load_file(str(plain), NLI)
    assert read["id"] == expected["id"] == [str(i) for i in range(5)]  # idx, the first column
    assert read.to_list() == expected.to_list()
    sst2 = tmp_path / "sst2.tsv"
    sst2.write_bytes("sentence\tlabel\r\na fine film .\t1\r\n".encode("utf-8-sig"))
    assert load_file(str(sst2), ("negative", "positive"))["sentence1"] == ["a fine film ."]


def test_a_folder_given_as_a_data_file_is_named_as_a_folder(tmp_path):
    # issue 50: "Data file not found: DIR" for a folder that is there
    with pytest.raises(InputError, match=r"Data file .* is a folder, not a file: give the path of the file in it"):
        load_file(str(tmp_path), NLI)
