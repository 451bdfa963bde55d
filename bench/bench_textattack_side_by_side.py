#!/usr/bin/env python
"""Side-by-side check against TextAttack itself: hf_srnets' textfooler / textbugger (through `run_attack.py`)
and TextAttack 0.3.11's own TextFooler / TextBugger, on the same victim, examples, word vectors, sentence encoder
and POS tagger. Not run in CI (it installs TextAttack into a throwaway venv and attacks for minutes).

    python bench/bench_textattack_side_by_side.py --model out/sst2_ft --task sst2 --num_examples 100
    python bench/bench_textattack_side_by_side.py --model out/mnli_ft --task mnli --num_examples 100 \
        --output_dir /tmp/ta_side/mnli --results_json results/textattack_side_by_side/mnli.json

Steps: (1) the TextAttack venv (`--venv`, default /tmp/ta_venv; each step skipped when already done, and what was
installed is printed): `python -m venv`, `pip install --no-deps textattack==0.3.11` and the small pure-Python
packages its import needs (`TEXTATTACK_PACKAGES`), a `.pth` that appends this interpreter's site-packages (torch,
transformers, hf_srnets) after the venv's own, a placeholder `flair` package in the venv only (TextAttack imports
flair at the top of three modules; no flair code path is used: the POS tagger is hf_srnets'), and NLTK's English
stopword list (179 words; TextBugger's `StopwordModification` reads it at import) under `--nltk_data`, and an
empty `textattack/shared/intentional_homoglyphs.txt` (missing from the 0.3.11 wheel, opened by
`WordSwapHomoglyphSwap.__init__`, read only by the differential-evolution attack).
(2) The first `--num_examples` examples of `--split` of the task, read by `run_attack.py`'s own loader.
(3) hf_srnets: `run_attack.py` on them, per-example results from its JSONL files. Its default sentence encoder and
POS tagger; word vectors: `--word_vectors`, by default hf_srnets' default GloVe without its non-word tokens
(`words_only_vectors`: TextAttack cannot take a punctuation neighbour, and its own vectors hold none).
(4) TextAttack: `bench/textattack_worker.py` in the venv builds the attacks from TextAttack's components with
hf_srnets' resources behind TextAttack's interfaces (see that file) and attacks the same examples.
Steps (3) and (4) alternate recipe by recipe (hf_srnets on R, TextAttack on R, then the next recipe), each side in
its own process with the same thread count (`OMP_NUM_THREADS`, 1 unless set) and `--device`.
(5) Per recipe: Clean% / Aua% / Suc% / #Query of both, the share of examples with the same outcome (over the
examples either side attacked, and over all), #Query compared, and each side's examples/minute: from the examples'
attack seconds (resources loaded; not given for hf_srnets with `--num_workers` > 1, whose examples overlap) and
from the wall clock of its process (loading included); per-example differences go to
`<output_dir>/side_by_side.json`.

#Query: both sides' per-example count of the attacked examples, averaged over the attacked ones. TextAttack's
`AttackResult.num_queries` is set to its goal function's count at the end of the search (`SearchMethod.__call__`);
"TA spent" reads that count directly after each attack, a check that the two agree.

To finish within a deadline, the recipes can also be run as separate processes and merged: `run_attack.py
--recipes textbugger` into another dir and the worker with a one-recipe spec, then this script with `--skip_hf
--skip_textattack` on a dir holding both JSONL files and the merged `worker_out.json`
(results/textattack_side_by_side/README.md gives the commands used).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
WORKER = REPO / "bench" / "textattack_worker.py"
TEXTATTACK = "textattack==0.3.11"
TEXTATTACK_PACKAGES = (
    "nltk",
    "jieba",
    "lru-dict",
    "levenshtein",
    "rapidfuzz",
    "langdetect",
    "six",
    "pinyin",
    "OpenHowNet",
    "anytree",
    "lemminflect",
    "more-itertools",
    "num2words",
    "word2number",
    "language-tool-python",
    "toml",
    "bert-score",
    "editdistance",
    "terminaltables",
)
# NLTK's English stopword list (the `stopwords` corpus as distributed up to 2023: 179 words).
NLTK_ENGLISH_STOPWORDS = (
    "i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself yourselves he him his "
    "himself she she's her hers herself it it's its itself they them their theirs themselves what which who whom "
    "this that that'll these those am is are was were be been being have has had having do does did doing a an the "
    "and but if or because as until while of at by for with about against between into through during before after "
    "above below to from up down in out on off over under again further then once here there when where why how all "
    "any both each few more most other some such no nor not only own same so than too very s t can will just don "
    "don't should should've now d ll m o re ve y ain aren aren't couldn couldn't didn didn't doesn doesn't hadn "
    "hadn't hasn hasn't haven haven't isn isn't ma mightn mightn't mustn mustn't needn needn't shan shan't shouldn "
    "shouldn't wasn wasn't weren weren't won won't wouldn wouldn't"
).split()
FLAIR_PLACEHOLDER = {
    "__init__.py": '"""Placeholder for TextAttack\'s top-level flair imports (bench only; no flair code runs)."""\n'
    'device = "cpu"\nfrom . import data, models  # noqa: E402,F401\n',
    "data.py": "class Sentence:\n    def __init__(self, *args, **kwargs):\n"
    '        raise RuntimeError("flair is a placeholder in this venv: use tagger_type other than flair")\n\n\n'
    "class Tokenizer:\n    pass\n",
    "models.py": "class SequenceTagger:\n    @classmethod\n    def load(cls, *args, **kwargs):\n"
    '        raise RuntimeError("flair is a placeholder in this venv: no flair models")\n',
}
RECIPES = ("textfooler", "textbugger")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, help="Fine-tuned checkpoint (or hf_srnets mask dir) to attack.")
    p.add_argument("--base_model", default=None, help="For a mask dir: the weights to apply the masks to.")
    p.add_argument("--task", default="sst2", help="sst2, mnli, ... (the task's label names and text fields).")
    p.add_argument("--data_dir", default=str(REPO.parent / "shared" / "data"), help="The task's files.")
    p.add_argument("--split", default="validation", help="validation (SST-2: GLUE dev; MNLI: dev_matched), test, ...")
    p.add_argument("--num_examples", type=int, default=20, help="Attack the first N examples of the split.")
    p.add_argument("--recipes", nargs="+", default=list(RECIPES), choices=RECIPES)
    p.add_argument("--output_dir", default="/tmp/ta_side/run", help="hf_srnets JSONL, worker files, side_by_side.json.")
    p.add_argument("--results_json", default=None, help="Also write the summary (table + differences) here.")
    p.add_argument("--venv", default="/tmp/ta_venv", help="The throwaway TextAttack venv (created if missing).")
    p.add_argument("--nltk_data", default=None, help="NLTK_DATA dir for the stopword list (default <venv>/nltk_data).")
    p.add_argument(
        "--word_vectors",
        default=None,
        help="Vectors file for both sides (default: hf_srnets' default GloVe, words only: words_only_vectors).",
    )
    p.add_argument(
        "--pos_tagger",
        default="coarse",
        choices=["nltk", "coarse"],
        help="hf_srnets' POS tagger for both sides (nltk needs NLTK's tagger data in both environments).",
    )
    p.add_argument(
        "--textattack_pos_rule",
        default="textattack",
        choices=["textattack", "x_wildcard"],
        help="Ablation: x_wildcard lets TextAttack's POS constraint accept the tag X as hf_srnets does.",
    )
    p.add_argument(
        "--textattack_victim",
        default="shared",
        choices=["shared", "textattack"],
        help="TextAttack side's victim: shared (hf_srnets' classifier, the same victim work on both sides) or "
        "textattack (TextAttack's own HuggingFaceModelWrapper, as its users run it: every batch padded to the "
        "tokenizer's model_max_length).",
    )
    p.add_argument("--num_workers", type=int, default=1, help="hf_srnets side: run_attack.py --num_workers.")
    p.add_argument(
        "--device",
        default="cpu",
        help="Both sides: where the victim and the sentence encoder run (cpu, cuda); the same for both.",
    )
    p.add_argument("--batch_size", type=int, default=32)
    p.add_argument("--max_seq_length", type=int, default=512)
    p.add_argument("--seed", type=int, default=0, help="TextAttack side: np.random seed + example index.")
    p.add_argument("--skip_hf", action="store_true", help="Reuse the hf_srnets JSONL already in --output_dir.")
    p.add_argument("--skip_textattack", action="store_true", help="Reuse the worker output already in --output_dir.")
    return p.parse_args(argv)


def _run(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=True, text=True, **kwargs)


def _venv_site(venv: Path) -> Path:
    found = sorted(venv.glob("lib/python3*/site-packages"))
    if not found:
        raise RuntimeError(f"{venv} has no lib/python3*/site-packages: remove it and run again")
    return found[0]


def _missing_packages(python: Path, packages: tuple[str, ...] = (TEXTATTACK, *TEXTATTACK_PACKAGES)) -> list[str]:
    """The specs in `packages` that `python` lacks: not installed at all, or (`name==version`) at another version."""
    code = (
        "import importlib.metadata as m, sys\n"
        "for spec in sys.argv[1:]:\n"
        "    name, _, version = spec.partition('==')\n"
        "    try:\n"
        "        installed = m.version(name)\n"
        "    except m.PackageNotFoundError:\n"
        "        installed = None\n"
        "    ok = installed is not None and (not version or installed == version)\n"
        "    print('' if ok else spec)\n"
    )
    out = _run([str(python), "-c", code, *packages], capture_output=True).stdout
    return [line for line in out.split() if line]


def _write_if_missing(path: Path, text: str, done: list[str], what: str) -> None:
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    done.append(f"{what}: {path}")


def ensure_textattack_venv(venv: Path, nltk_data: Path) -> list[str]:
    """Create / complete the TextAttack venv (idempotent); return what this call installed or wrote."""
    done: list[str] = []
    python = venv / "bin" / "python"
    if not python.exists():
        _run([sys.executable, "-m", "venv", str(venv)])
        done.append(f"venv: {venv}")
    missing = _missing_packages(python)
    if missing:
        _run([str(python), "-m", "pip", "install", "-q", "--no-deps", *missing])
        done.append(f"pip install --no-deps {' '.join(missing)}")
    site = _venv_site(venv)
    project_site = sysconfig.get_paths()["purelib"]
    line = f"import site; site.addsitedir({project_site!r})\n"
    pth = site / "zz_hf_srnets_project_site.pth"
    if pth.exists() and pth.read_text(encoding="utf-8") != line:  # a venv built from another checkout or venv
        pth.unlink()
    _write_if_missing(pth, line, done, "project site-packages after the venv's")
    for name, text in FLAIR_PLACEHOLDER.items():
        _write_if_missing(site / "flair" / name, text, done, "flair placeholder")
    # WordSwapHomoglyphSwap.__init__ opens this data file, which the 0.3.11 wheel does not ship; it is read only
    # for the differential-evolution attack, not for the word swaps TextBugger uses: an empty file is enough.
    homoglyphs = site / "textattack" / "shared" / "intentional_homoglyphs.txt"
    _write_if_missing(homoglyphs, "# not shipped in the textattack 0.3.11 wheel\n", done, "empty homoglyph data file")
    stopwords = "\n".join(NLTK_ENGLISH_STOPWORDS) + "\n"
    _write_if_missing(nltk_data / "corpora" / "stopwords" / "english", stopwords, done, "NLTK English stopwords")
    return done


def child_env(nltk_data: Path | None = None) -> dict[str, str]:
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("MKL_NUM_THREADS", "1")
    if nltk_data is not None:
        env["NLTK_DATA"] = str(nltk_data)
    return env


def words_only_vectors(out: Path) -> Path:
    """hf_srnets' default word vectors (which leave out the tokens that are not one word: punctuation such as "," or
    "--", abbreviations such as "u.s.", "_"), written as a GloVe text file for both sides. TextAttack cannot take such
    a neighbour: its word splitter returns no word for it, so the swap has no modified index and its
    sentence-encoder constraint raises StopIteration (TextAttack's counter-fitted vectors hold words only)."""
    path = out / "glove_words_only.txt"
    if path.exists():
        return path
    sys.path.insert(0, str(REPO))
    from hf_srnets.attack.resources import load_word_embedding

    embedding = load_word_embedding()
    with open(path, "w", encoding="utf-8") as f:
        for word, row in zip(embedding.words, embedding.matrix):
            f.write(word + " " + " ".join(f"{v:.7g}" for v in row) + "\n")
    print(f"word vectors: {embedding.source}, {len(embedding)} words -> {path}", flush=True)
    return path


def load_examples(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The examples `run_attack.py --num_examples N` attacks, read by its own loader."""
    sys.path.insert(0, str(REPO))
    from hf_srnets.arguments.attack_arguments import AttackDataArguments
    from hf_srnets.attack import dataset_examples, select_indices
    from hf_srnets.data.tasks import resolve_task
    from hf_srnets.jobs.attack import load_attack_data

    task = resolve_task(args.task)
    data = AttackDataArguments(task=args.task, data_dir=args.data_dir, split=args.split)
    dataset, _ = load_attack_data(data, task, None)
    examples = dataset_examples(dataset, select_indices(len(dataset), args.num_examples))
    return [{"index": e.index, "id": e.id, "text": list(e.text), "label": e.label} for e in examples]


def hf_output_dir(out: Path, name: str) -> Path:
    """Where `run_attack.py --recipes name` writes: `<out>/hf_<name>`, or `<out>` itself for a merged dir."""
    own = out / f"hf_{name}"
    return own if own.is_dir() or not (out / f"attack_{name}.jsonl").is_file() else out


def run_hf_srnets(args: argparse.Namespace, out: Path, name: str) -> tuple[list[dict], float]:
    """`run_attack.py --recipes name` on the examples (its own process and output dir); the JSONL records (as
    dicts) and the process's wall time."""
    cmd = [sys.executable, str(REPO / "run_attack.py"), "--model_name_or_path", args.model, "--task", args.task]
    cmd += ["--data_dir", args.data_dir, "--split", args.split, "--num_examples", str(args.num_examples)]
    cmd += ["--recipes", name, "--output_dir", str(out / f"hf_{name}"), "--batch_size", str(args.batch_size)]
    cmd += ["--max_seq_length", str(args.max_seq_length), "--disable_tqdm", "true", "--word_vectors", args.word_vectors]
    if args.base_model:
        cmd += ["--base_model", args.base_model]
    from hf_srnets.arguments.attack_arguments import RESOURCE_OPTIONS, AttackRunArguments

    if "pos_tagger" in RESOURCE_OPTIONS:
        cmd += ["--pos_tagger", args.pos_tagger]
    if "num_workers" in AttackRunArguments.__dataclass_fields__:  # hf_srnets before issue 37 has neither
        cmd += ["--num_workers", str(args.num_workers), "--device", args.device]
    start = time.perf_counter()
    if not args.skip_hf:
        _run([*cmd, "--overwrite_output_dir", "true"], env=child_env(), cwd=REPO)
    seconds = time.perf_counter() - start
    sys.path.insert(0, str(REPO))
    from hf_srnets.attack.results import read_results, results_path

    path = results_path(str(hf_output_dir(out, name)), name)
    records = [{"index": r.index, **r.result.to_dict(), "seconds": r.seconds} for r in read_results(path)]
    return records, seconds


def run_textattack(
    args: argparse.Namespace, examples: list[dict], nltk_data: Path, out: Path, name: str
) -> tuple[dict, float]:
    """The worker in the TextAttack venv on one recipe; its output and the process's wall time. A merged
    `worker_out.json` (all recipes) is read when the recipe's own output is not there."""
    suffix = variant_suffix(args)
    spec_path, out_path = out / f"worker_spec{suffix}.{name}.json", out / f"worker_out{suffix}.{name}.json"
    spec = {"model": args.model, "base_model": args.base_model, "task": args.task, "examples": examples}
    spec |= {
        "recipes": [name],
        "word_vectors": args.word_vectors,
        "pos_tagger": args.pos_tagger,
        "pos_rule": args.textattack_pos_rule,
        "batch_size": args.batch_size,
        "max_length": args.max_seq_length,
        "device": args.device,
        "victim": args.textattack_victim,
    }
    spec_path.write_text(json.dumps(spec | {"seed": args.seed}, ensure_ascii=False), encoding="utf-8")
    start = time.perf_counter()
    if not args.skip_textattack:
        python = Path(args.venv) / "bin" / "python"
        _run([str(python), str(WORKER), str(spec_path), str(out_path)], env=child_env(nltk_data), cwd=REPO)
    seconds = time.perf_counter() - start
    if not out_path.is_file():
        out_path = out / f"worker_out{suffix}.json"
    return json.loads(out_path.read_text(encoding="utf-8")), seconds


def variant_suffix(args: argparse.Namespace) -> str:
    """How the files of a non-default TextAttack side are told apart: `.x_wildcard`, `.ta_victim`, both, or ''."""
    parts = [args.textattack_pos_rule] if args.textattack_pos_rule != "textattack" else []
    parts += ["ta_victim"] if args.textattack_victim == "textattack" else []
    return "".join(f".{part}" for part in parts)


def speed(records: list[dict], wall_seconds: float, workers: int = 1) -> dict[str, Any]:
    """Examples/minute of one side on one recipe: from the attack seconds of the examples (each side times each
    attack alone, resources already loaded), and from the wall clock of the side's whole process (loading
    included). With several workers the examples' seconds overlap, so the first is not given."""
    timed = [r["seconds"] for r in records if r.get("seconds") is not None]
    attack_seconds = sum(timed) if len(timed) == len(records) and records else None
    per_minute = None if attack_seconds is None or workers > 1 else 60 * len(records) / attack_seconds
    return {
        "attack_seconds": None if attack_seconds is None else round(attack_seconds, 2),
        "examples_per_minute": None if per_minute is None else round(per_minute, 2),
        "wall_seconds": round(wall_seconds, 1),
        "examples_per_minute_wall": round(60 * len(records) / wall_seconds, 2) if wall_seconds > 1 else None,
    }


def summary(records: list[dict], queries_key: str = "num_queries") -> dict[str, Any]:
    """Clean / Aua / Suc (fractions) and mean #Query over attacked examples (TextAttack's and hf_srnets' formulas)."""
    n = len(records)
    count = {o: sum(r["outcome"] == o for r in records) for o in ("skipped", "successful", "failed")}
    attacked = [r[queries_key] for r in records if r["outcome"] != "skipped"]
    attempted = count["successful"] + count["failed"]
    return {
        "n": n,
        **count,
        "clean": (n - count["skipped"]) / n if n else 0.0,
        "aua": count["failed"] / n if n else 0.0,
        "suc": count["successful"] / attempted if attempted else 0.0,
        "query": sum(attacked) / len(attacked) if attacked else None,
    }


def compare(hf: list[dict], ta: list[dict], examples: list[dict]) -> dict[str, Any]:
    """Summaries, outcome agreement and the per-example differences of one recipe."""
    by_index = {e["index"]: e for e in examples}
    ta_by = {r["index"]: r for r in ta}
    pairs = [(h, ta_by[h["index"]]) for h in hf if h["index"] in ta_by]  # a cut run: the examples both attacked
    hf, ta = [h for h, _ in pairs], [t for _, t in pairs]
    same = [h["outcome"] == t["outcome"] for h, t in pairs]
    both = [(h, t) for h, t in pairs if h["outcome"] != "skipped" and t["outcome"] != "skipped"]
    diffs = []
    for h, t in pairs:
        if h["outcome"] != t["outcome"] or h["num_queries"] != t["num_queries"]:
            diffs.append(
                {
                    "index": h["index"],
                    "text": by_index[h["index"]]["text"],
                    "label": by_index[h["index"]]["label"],
                    "hf_srnets": {k: h.get(k) for k in ("outcome", "num_queries", "perturbed", "words_changed")},
                    "textattack": {k: t.get(k) for k in ("outcome", "num_queries", "queries_spent", "perturbed")},
                }
            )
    attacked = [(h, t) for h, t in pairs if h["outcome"] != "skipped" or t["outcome"] != "skipped"]
    return {
        "hf_srnets": summary(hf),
        "textattack": summary(ta),
        "same_outcome_attacked": sum(h["outcome"] == t["outcome"] for h, t in attacked) / len(attacked)
        if attacked
        else None,
        "textattack_spent": summary(ta, "queries_spent"),
        "examples": len(pairs),
        "same_outcome": sum(same) / len(pairs) if pairs else None,
        "same_queries_when_both_attacked": sum(h["num_queries"] == t["num_queries"] for h, t in both) / len(both)
        if both
        else None,
        "differences": diffs,
    }


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:5.1f}"


def _q(x: float | None) -> str:
    return "n/a" if x is None else f"{x:7.1f}"


def _rel(a: float | None, b: float | None) -> float | None:
    return None if not (a and b) else a / b - 1


def format_table(task: str, comparisons: dict[str, dict[str, Any]]) -> str:
    """The side-by-side table (Markdown): #Query diff is hf_srnets' mean over TextAttack's reported / spent - 1."""
    lines = [
        f"| {task} recipe | side | n | Clean% | Aua% | Suc% | #Query | TA spent | same outcome % (attacked / all) "
        "| #Query diff % (reported / spent) | ex/min (attacks / wall) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, c in comparisons.items():
        hf, ta, spent = c["hf_srnets"], c["textattack"], c["textattack_spent"]
        diff = f"{_pct(_rel(hf['query'], ta['query']))} / {_pct(_rel(hf['query'], spent['query']))}"
        same = f"{_pct(c.get('same_outcome_attacked'))} / {_pct(c['same_outcome'])}"
        speeds = c.get("speed", {})
        cells = [
            ("TextAttack", ta, _q(spent["query"]), "", "", _speed(speeds.get("textattack"))),
            ("hf_srnets", hf, "", same, diff, _speed(speeds.get("hf_srnets"))),
        ]
        for side, s, spent_q, same_cell, diff_cell, speed_cell in cells:
            values = [name, side, s["n"], _pct(s["clean"]), _pct(s["aua"]), _pct(s["suc"]), _q(s["query"])]
            lines.append("| " + " | ".join(str(v) for v in [*values, spent_q, same_cell, diff_cell, speed_cell]) + " |")
    return "\n".join(lines)


def _speed(side: dict[str, Any] | None) -> str:
    if not side:
        return "n/a"
    attacks, wall = side.get("examples_per_minute"), side.get("examples_per_minute_wall")
    return f"{'n/a' if attacks is None else f'{attacks:.1f}'} / {'n/a' if wall is None else f'{wall:.1f}'}"


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    sys.path.insert(0, str(REPO))
    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    venv = Path(args.venv)
    nltk_data = Path(args.nltk_data) if args.nltk_data else venv / "nltk_data"
    if args.skip_textattack:  # the worker's output is read back: no venv needed
        print(f"TextAttack venv: not needed (--skip_textattack reads {out})", flush=True)
    else:
        installed = ensure_textattack_venv(venv, nltk_data)
        print("TextAttack venv:", "; ".join(installed) or f"{venv} complete, nothing installed", flush=True)
    args.word_vectors = args.word_vectors or str(words_only_vectors(out))
    examples = load_examples(args)
    comparisons, seconds, resources = {}, {"hf_srnets": 0.0, "textattack": 0.0}, {}
    for name in args.recipes:  # the sides alternate recipe by recipe: a slower spell of the machine hits both
        hf, hf_seconds = run_hf_srnets(args, out, name)
        ta, ta_seconds = run_textattack(args, examples, nltk_data, out, name)
        comparisons[name] = compare(hf, ta["results"][name], examples)
        comparisons[name]["speed"] = {
            "hf_srnets": speed(hf, hf_seconds, args.num_workers),
            "textattack": speed(ta["results"][name], ta_seconds),
        }
        seconds["hf_srnets"] += hf_seconds
        seconds["textattack"] += ta_seconds
        resources = ta["resources"]
    table = format_table(args.task, comparisons)
    report = {
        "task": args.task,
        "model": os.path.abspath(args.model),
        "split": args.split,
        "num_examples": len(examples),
        "textattack": TEXTATTACK,
        "textattack_pos_rule": args.textattack_pos_rule,
        "textattack_victim": args.textattack_victim,
        "shared_resources": resources | {"word_vectors_file": args.word_vectors},
        "seconds": {side: round(value, 1) for side, value in seconds.items()},
        "machine": {"cpus": os.cpu_count(), "torch_threads": child_env()["OMP_NUM_THREADS"], "device": args.device},
        "num_workers": args.num_workers,
        "table": table,
        "recipes": comparisons,
    }
    name = f"side_by_side{variant_suffix(args)}.json"
    (out / name).write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    if args.results_json:
        Path(args.results_json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.results_json).write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    walls = ", ".join(f"{side} {value:.0f}s" for side, value in seconds.items())
    print(f"\nshared resources: {resources}; wall time {walls}")
    print(table)
    print(f"per-example differences: {out / name}")
    return report


if __name__ == "__main__":
    main()
