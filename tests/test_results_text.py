"""The text follows the files: every number README.md, results/README.md and the results folders' READMEs quote
from a committed file (test counts, timings, table cells, agreements) is read back here and recomputed from that
file, and a mismatch is named with the file, the quote and the value the file gives. The checker itself is shown
to fail on a copy of the text with a planted wrong number.

A quote is a regular expression over one text file; its groups are the quoted values, compared as strings with
the values computed from the backing file (formatted as the text formats them).
"""

from __future__ import annotations

import csv
import gzip
import json
import re
import subprocess
import sys
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from suite_budget import whole_suite

from hf_srnets.metrics.significance import holm, paired_t_test

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "results"


@dataclass(frozen=True)
class Quote:
    """Numbers quoted in `path` (its regex `pattern`'s groups) and the same numbers from `source` (`expected`)."""

    path: str
    pattern: str
    expected: Callable[[], tuple[str, ...]]
    source: str


def read_csv(path: str) -> list[dict[str, str]]:
    with open(ROOT / path, newline="") as f:
        return list(csv.DictReader(f))


def read_json(path: str) -> dict:
    return json.loads((ROOT / path).read_text())


def mismatches(quotes: list[Quote], read: Callable[[str], str] | None = None) -> list[str]:
    """Every quote whose text is missing or differs from its source, as `path: quoted X, source gives Y`."""
    read = read or (lambda path: (ROOT / path).read_text(encoding="utf-8"))
    found = []
    for quote in quotes:
        match = re.search(quote.pattern, read(quote.path), re.MULTILINE)
        expected = tuple(quote.expected())
        if match is None:
            found.append(
                f"{quote.path}: no text matches {quote.pattern!r} (the source {quote.source} gives {expected})"
            )
        elif match.groups() != expected:
            found.append(f"{quote.path}: quotes {match.groups()}, {quote.source} gives {expected}")
    return found


# --- test counts -----------------------------------------------------------------------------------------------


def counts() -> dict:
    return read_json("results/test_counts.json")


def cutoff() -> str:
    return str(counts()["slow_cutoff_s"])


def timings() -> tuple[str, ...]:
    t = counts()["timings_measured_at"]
    return f"{t['collected']:,}", t["not_slow_one_thread"], t["all_one_thread"], t["all_ci_two_cores"]


COUNT_QUOTES = [
    Quote(
        "README.md",
        r"Inner loop: the (\d+) tests \(of ([\d,]+)\)",
        lambda: (str(counts()["slow"]), f"{counts()['collected']:,}"),
        "results/test_counts.json",
    ),
    Quote("README.md", r"(\d+) s or more each in a\s+full run's", lambda: (cutoff(),), "results/test_counts.json"),
    Quote("docs/testing.md", r"processes \((\d+) s or more each", lambda: (cutoff(),), "results/test_counts.json"),
    Quote(
        "README.md",
        r"measured at ([\d,]+)\s+tests: without the slow ones the suite took (.+?) on one thread "
        r"\(the whole suite\s+(.+?) on one thread,\s+(.+?) in CI's",
        timings,
        "results/test_counts.json",
    ),
]  # fmt: skip


# --- the Win-win sweep: timings and the table -------------------------------------------------------------------


def sweep_timings() -> tuple[str, ...]:
    runs = [r for r in read_csv("results/sweep_minilm_mnli/runs.csv") if r["train_runtime"]]
    long = [float(r["train_runtime"]) for r in runs if r["train_steps"] == "188"]
    imp = [float(r["train_runtime"]) for r in runs if r["train_steps"] == "90"]
    per_seed: dict[str, float] = defaultdict(float)
    for r in runs:
        per_seed[r["seed"]] += float(r["train_runtime"]) / 60
    return (
        *(f"{v:.0f}" for v in (min(long), max(long), min(imp), max(imp))),
        *(f"{per_seed[s]:.1f}" for s in sorted(per_seed)),
    )


def default_bias_moves() -> tuple[str, ...]:
    """How the sweep's PoE runs move with today's default bias model: how many of how many, the largest |Δ| in
    points of MNLI-m and of HANS entailment, and the default model's selected C (default_bias_*.json/csv)."""
    old = {(r["method"], float(r["sparsity"]), r["seed"]): r for r in read_csv("results/sweep_minilm_mnli/runs.csv")}
    new = read_csv("results/sweep_minilm_mnli/default_bias_runs.csv")
    keys = ("eval_mnli_accuracy", "eval_hans_accuracy", "eval_hans_entailment_accuracy")
    deltas = []
    for row in new:
        before = old[(row["method"], float(row["sparsity"]), row["seed"])]
        deltas.append([abs(float(row[k]) - float(before[k])) for k in keys])
    moved = sum(any(d > 1e-9 for d in row) for row in deltas)
    c = read_json("results/sweep_minilm_mnli/default_bias_report.json")["model"]["C"]
    return (
        str(moved),
        str(len(new)),
        f"{100 * max(d[0] for d in deltas):.1f}",
        f"{100 * max(d[2] for d in deltas):.1f}",
        f"{c:g}",
    )


def bias_fits() -> tuple[str, ...]:
    """Train accuracy (%) and mean p_b(entailment) on HANS of today's default bias model, then of the committed one."""
    out: tuple[str, ...] = ()
    for name in ("default_bias_report.json", "bias_report.json"):
        splits = read_json(f"results/sweep_minilm_mnli/{name}")["splits"]
        hans = splits["hans"]["per_label"]["entailment"]["mean_prob"]["entailment"]
        out += (f"{100 * splits['train']['accuracy']:.1f}", f"{hans:.3f}")
    return out[0], out[2], out[1], out[3]


def full_poe_seed2_entailment() -> tuple[str, str]:
    key = "eval_hans_entailment_accuracy"
    old = next(
        r for r in read_csv("results/sweep_minilm_mnli/runs.csv") if r["method"] == "full_poe" and r["seed"] == "2"
    )
    new = next(
        r
        for r in read_csv("results/sweep_minilm_mnli/default_bias_runs.csv")
        if r["method"] == "full_poe" and r["seed"] == "2"
    )
    return f"{100 * float(old[key]):.1f}", f"{100 * float(new[key]):.1f}"


def sweep_mask30_hans() -> tuple[str, ...]:
    """The mask_poe 30% row's HANS interval and seed-level p (Holm) in the sweep's regenerated report.md."""
    report = (RESULTS / "sweep_minilm_mnli" / "report.md").read_text().split("## Paired by column against full_ce")[1]
    row = next(
        cells(line)
        for line in table_rows(report, "| method | sparsity | paired seeds |")
        if cells(line)[:2] == ["mask_poe", "30%"]
    )
    interval = re.fullmatch(r"\S+ \[(\S+), (\S+)\][*°]?", row[5])
    p, holm = re.fullmatch(r"[+−0]+ (\S+) \((\S+)\)", row[6]).groups()  # the seeds' signs, then p (Holm)
    return interval.group(1), interval.group(2), p, holm


SWEEP_QUOTES = [
    Quote(
        "results/README.md",
        r"per-example interval is \[(\S+), (\S+)\]\s+and the seed-level test gives p = ([\d.]+) \(([\d.]+) after Holm",
        sweep_mask30_hans,
        "results/sweep_minilm_mnli/report.md (Paired by column, mask_poe 30%, HANS)",
    ),
    Quote(
        "results/sweep_minilm_mnli/README.md",
        r"right on ([\d.]+)% of the training pairs against ([\d.]+)%, and puts\s+([\d.]+) on entailment for HANS pairs "
        r"against ([\d.]+)\.",
        bias_fits,
        "results/sweep_minilm_mnli/default_bias_report.json and bias_report.json",
    ),
    Quote(
        "results/sweep_minilm_mnli/README.md",
        r"full_poe seed 2's HANS entailment went from ([\d.]+)% to ([\d.]+)%",
        full_poe_seed2_entailment,
        "results/sweep_minilm_mnli/runs.csv and default_bias_runs.csv",
    ),
    Quote(
        "results/sweep_minilm_mnli/README.md",
        r"\*\*(\d+) of the (\d+) PoE runs moved\*\*, by up to ([\d.]+) points of MNLI-m and ([\d.]+) of HANS\s+"
        r"entailment[\s\S]*?C = ([\d.]+) chosen",
        default_bias_moves,
        "results/sweep_minilm_mnli/runs.csv against default_bias_runs.csv, default_bias_report.json",
    ),
    Quote(
        "results/README.md",
        r"Training took (\d+)–(\d+) s per 188-step run \((\d+)–(\d+) s for IMP's 90 steps; "
        r"([\d.]+) and ([\d.]+) minutes",
        sweep_timings,
        "results/sweep_minilm_mnli/runs.csv (train_runtime, min and max; sums per seed)",
    ),
]


def table_rows(text: str, header_start: str) -> list[str]:
    """The body rows of the first Markdown table whose header line starts with `header_start`."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append(line)
    return rows


def test_the_win_win_sweep_table_is_summary_md_row_for_row() -> None:
    quoted = table_rows((RESULTS / "README.md").read_text(), "| method | sparsity | seeds | MNLI-m acc |")
    summary = (RESULTS / "sweep_minilm_mnli" / "summary.md").read_text()
    assert len(quoted) == 10
    assert [row for row in quoted if row not in summary] == []


# --- Fig. 1: the last 1,000 steps ------------------------------------------------------------------------------


def polarised_gain(path: str) -> tuple[str, ...]:
    share = {int(r["step"]): 100 * (float(r["l0_gates_zero"]) + float(r["l0_gates_one"])) for r in read_csv(path)}
    return (f"{share[4000] - share[3000]:.2f}",)


def cross_cpu_drift() -> tuple[str, ...]:
    """The authors'-λ search re-run on another CPU (full_data/search_gates.csv) against the committed one: the share
    of gates at 0 or 1 at step 4,000 in each, and the largest gap over the curve."""
    shares = []
    for path in (
        "results/robust_tickets_fig1/full_data/search_gates.csv",
        "results/robust_tickets_fig1/authors_lambda/gates.csv",
    ):
        shares.append({r["step"]: 100 * (float(r["l0_gates_zero"]) + float(r["l0_gates_one"])) for r in read_csv(path)})
    gap = max(abs(shares[0][step] - shares[1][step]) for step in shares[1])
    return f"{shares[0]['4000']:.1f}", f"{shares[1]['4000']:.1f}", f"{gap:.2f}"


FIG1_QUOTES = [
    Quote(
        "docs/testing.md",
        r"ending at ([\d.]+)% of its gates at 0 or 1 instead of ([\d.]+)% \(at most ([\d.]+) points apart",
        cross_cpu_drift,
        "results/robust_tickets_fig1/{full_data/search_gates,authors_lambda/gates}.csv",
    ),
    Quote(
        "results/robust_tickets_fig1/README.md",
        r"The last 1,000 steps \(3,000 to 4,000 in `gates.csv`\) added only ([\d.]+) points",
        lambda: polarised_gain("results/robust_tickets_fig1/gates.csv"),
        "results/robust_tickets_fig1/gates.csv",
    ),
    Quote(
        "results/robust_tickets_fig1/README.md",
        r"the last 1,000 steps add ([\d.]+)\s+points \(3,000 to 4,000 in `authors_lambda/gates.csv`\)",
        lambda: polarised_gain("results/robust_tickets_fig1/authors_lambda/gates.csv"),
        "results/robust_tickets_fig1/authors_lambda/gates.csv",
    ),
]


# --- Robust Tickets Table 1: one denominator per number --------------------------------------------------------


def clean_differences(path: str, methods: list[str], column: str) -> tuple[str, ...]:
    rows = {r["method"]: float(r[column]) for r in read_csv(path)}
    return tuple(f"{100 * (rows[m] - rows['Fine-tune']):+.1f}".replace("-", "−") for m in methods)


def retrained_gains() -> tuple[str, ...]:
    rows = {r["method"]: r for r in read_csv("results/robust_tickets_fig1/retrained/table1_sst2.csv")}
    t = rows["RobustT"]
    dev = [100 * (float(t["dev_accuracy"]) - float(rows[m]["dev_accuracy"])) for m in ("Fine-tune", "Rand")]
    attacked = [
        100 * (float(t["textfooler_clean"]) - float(rows[m]["textfooler_clean"])) for m in ("Fine-tune", "Rand")
    ]
    return tuple(f"{v:.1f}" for v in (*dev, *attacked))


TABLE1, SPARSE = "results/robust_tickets_sst2/table1_sst2.csv", ["LTH", "Rand", "RobustT"]
TABLE1_QUOTES = [
    Quote(
        "results/robust_tickets_sst2/README.md",
        r"On all 872 dev sentences, the paper's denominator: LTH\s+(\S+), Rand (\S+), RobustT (\S+) \(",
        lambda: clean_differences(TABLE1, SPARSE, "dev_accuracy"),
        "results/robust_tickets_sst2/table1_sst2.csv (dev_accuracy)",
    ),
    Quote(
        "results/robust_tickets_sst2/README.md",
        r"On the 300 attacked sentences of the table above: (\S+),\s+(\S+) and (\S+), all outside noise",
        lambda: clean_differences(TABLE1, SPARSE, "textfooler_clean"),
        "results/robust_tickets_sst2/table1_sst2.csv (textfooler_clean)",
    ),
    Quote(
        "results/robust_tickets_fig1/retrained/README.md",
        r"on all 872 dev sentences \+([\d.]+) points over Fine-tune\s+and \+([\d.]+) over Rand with the same "
        r"per-matrix sparsity \(on the 300 attacked ones \+([\d.]+) and \+([\d.]+)\)",
        retrained_gains,
        "results/robust_tickets_fig1/retrained/table1_sst2.csv",
    ),
]  # fmt: skip


# --- Robust Tickets Fig. 1 folders: each quoted interval is its folder's table1_sst2_paired.csv -----------------

FIG1 = "results/robust_tickets_fig1"
INTERVAL = r"([+−]\d+\.\d \[[+−]\d+\.\d, [+−]\d+\.\d\]\*?)"  # +7.7 [+3.3, +12.0]*, typographic minus


def intervals(folder: str, *keys: tuple[str, str, str]) -> Callable[[], tuple[str, ...]]:
    """The paired intervals (method, recipe, metric) of `folder`/table1_sst2_paired.csv, as the READMEs write them."""
    from hf_srnets.metrics.bootstrap import format_interval

    def expected() -> tuple[str, ...]:
        rows = {(r["method"], r["recipe"], r["metric"]): r for r in read_csv(f"{folder}/table1_sst2_paired.csv")}
        out = []
        for key in keys:
            row = rows[key]
            text = format_interval(float(row["difference"]), float(row["low"]), float(row["high"]), digits=1)
            out.append(text.replace("-", "−"))
        return tuple(out)

    return expected


def interval_quote(path: str, pattern: str, folder: str, *keys: tuple[str, str, str]) -> Quote:
    return Quote(path, pattern.replace("{I}", INTERVAL), intervals(folder, *keys), f"{folder}/table1_sst2_paired.csv")


RETRAINED, AUTHORS, FULL_DATA = f"{FIG1}/retrained", f"{FIG1}/authors_lambda/retrained", f"{FIG1}/full_data"
CLEAN, TF_AUA, TB_AUA = ("textfooler", "clean"), ("textfooler", "aua"), ("textbugger", "aua")
FIG1_INTERVAL_QUOTES = [
    Quote(f"{FULL_DATA}/README.md", r"\(([+−][\d.]+) on all 872 dev sentences; the paper: −1\.1\)",
          lambda: clean_differences(f"{FULL_DATA}/table1_sst2.csv", ["RobustT"], "dev_accuracy"),
          f"{FULL_DATA}/table1_sst2.csv (dev_accuracy)"),
    interval_quote(f"{RETRAINED}/README.md",
                   r"Clean {I}, TextFooler Aua% {I}, TextBugger Aua% {I},\s+TextBugger Suc% {I}", RETRAINED,
                   ("RobustT", *CLEAN), ("RobustT", *TF_AUA), ("RobustT", *TB_AUA), ("RobustT", "textbugger", "suc")),
    interval_quote(f"{RETRAINED}/README.md", r"gave the same picture \(TF Aua% {I}, TB Aua% {I}\)",
                   "results/robust_tickets_sst2", ("RobustT", *TF_AUA), ("RobustT", *TB_AUA)),
    interval_quote(f"{FIG1}/authors_lambda/README.md",
                   r"\| Rand 30% \(this ticket's per-matrix sparsity\) \|[^|]+\|[^|]+\|[^|]+\| {I} \| {I} \| {I} \|",
                   AUTHORS, ("Rand", *CLEAN), ("Rand", *TF_AUA), ("Rand", *TB_AUA)),
    interval_quote(f"{FIG1}/authors_lambda/README.md",
                   r"\| RobustT 30%, hf_srnets' λ \(`../retrained/`\) \|[^|]+\|[^|]+\|[^|]+\| {I} \| {I} \| {I} \|",
                   RETRAINED, ("RobustT", *CLEAN), ("RobustT", *TF_AUA), ("RobustT", *TB_AUA)),
    interval_quote(f"{FIG1}/authors_lambda/README.md",
                   r"\| \*\*RobustT 30%, authors' λ\*\* \|[^|]+\|[^|]+\|[^|]+\| {I} \| {I} \| {I} \|",
                   AUTHORS, ("RobustT", *CLEAN), ("RobustT", *TF_AUA), ("RobustT", *TB_AUA)),
    interval_quote(f"{FIG1}/README.md", r"no robustness: TextFooler Aua% {I}, TextBugger Aua% {I} and\s+Suc% {I} \(",
                   RETRAINED, ("RobustT", *TF_AUA), ("RobustT", *TB_AUA), ("RobustT", "textbugger", "suc")),
    interval_quote(f"{FIG1}/README.md", r"and Aua% {I} \(TextFooler\) and {I} \(TextBugger\), both inside",
                   AUTHORS, ("RobustT", *TF_AUA), ("RobustT", *TB_AUA)),
    interval_quote(f"{FIG1}/README.md", r"and Aua% differs by {I}\s+\(TextFooler\) and {I}\s+\(TextBugger\)",
                   FULL_DATA, ("RobustT", *TF_AUA), ("RobustT", *TB_AUA)),
    interval_quote(f"{FULL_DATA}/README.md",
                   r"- clean {I} \(.*\n- TextFooler Aua% {I} \(the paper: \+21.7\);\n- TextBugger Aua% {I} \(",
                   FULL_DATA, ("RobustT", *CLEAN), ("RobustT", *TF_AUA), ("RobustT", *TB_AUA)),
    Quote("results/README.md",
          (r"\| {I} and {I} on 300 sentences \(`robust_tickets_fig1/retrained/`\); {I} and {I} with the authors' λ "
           r"timing \(`robust_tickets_fig1/authors_lambda/`\); at equal data \(both on all 60,614 sentences\) {I} and "
           r"{I},").replace("{I}", INTERVAL),
          lambda: tuple(v for folder in (RETRAINED, AUTHORS, FULL_DATA)
                        for v in intervals(folder, ("RobustT", *TF_AUA), ("RobustT", *TB_AUA))()),
          "the three folders' table1_sst2_paired.csv"),
]  # fmt: skip


def test_the_table1_intervals_in_the_readme_are_the_regenerated_csv() -> None:
    """The README's paired table (each method against Fine-tune) is table1_sst2_paired.csv, cell for cell."""
    readme = (RESULTS / "robust_tickets_sst2" / "README.md").read_text()
    quoted = [cells(row) for row in table_rows(readme, "| method (all on the 300 attacked) |")]
    assert [row[0] for row in quoted] == ["FreeLB", "LTH", "Rand", "RobustT"]
    for row in quoted:
        keys = [("textfooler", "clean"), ("textfooler", "aua"), ("textfooler", "suc")]
        keys += [("textbugger", "aua"), ("textbugger", "suc")]
        expected = intervals("results/robust_tickets_sst2", *((row[0], *key) for key in keys))()
        assert row[1:] == [value.replace("−", "-") for value in expected], row[0]  # cells() reads "−" as "-"


# --- TextAttack side by side: agreement over the attacked examples ---------------------------------------------


def agreement(name: str, recipe: str) -> tuple[int, int]:
    """(same outcome, attacked) over the examples at least one side attacked: both sides skip the examples the
    victim gets wrong, and those agree by construction."""
    record = read_json(f"results/textattack_side_by_side/{name}.json")["recipes"][recipe]
    n, skipped = record["examples"], record["hf_srnets"]["skipped"]
    assert record["textattack"]["skipped"] == skipped  # the same victim and examples: the same skips
    return round(record["same_outcome"] * n) - skipped, n - skipped


def textattack_headline() -> tuple[str, ...]:
    out = []
    for name, before in (("sst2", "sst2"), ("mnli", "mnli")):
        after = agreement(f"{name}_textfooler_after_pos_fix", "textfooler")
        old = agreement(before, "textfooler")
        bugger = agreement(name, "textbugger")
        out += [str(after[0]), str(after[1]), f"{100 * after[0] / after[1]:.1f}", str(old[0]), str(old[1])]
        out += [str(bugger[0]), str(bugger[1]), f"{100 * bugger[0] / bugger[1]:.1f}"]
    return tuple(out)


def textattack_all_100() -> tuple[str, ...]:
    pairs = [("sst2_textfooler_after_pos_fix", "textfooler"), ("sst2", "textbugger")]
    pairs += [("mnli_textfooler_after_pos_fix", "textfooler"), ("mnli", "textbugger")]
    return tuple(
        str(round(100 * read_json(f"results/textattack_side_by_side/{n}.json")["recipes"][r]["same_outcome"]))
        for n, r in pairs
    )


TEXTATTACK_QUOTES = [
    Quote(
        "results/README.md",
        r"SST-2 TextFooler (\d+)/(\d+) \(([\d.]+)%, after the POS fix; (\d+)/(\d+) before\), TextBugger (\d+)/(\d+) "
        r"\(([\d.]+)%\);\s+MNLI TextFooler (\d+)/(\d+) \(([\d.]+)%, after the POS fix; (\d+)/(\d+) before\), "
        r"TextBugger (\d+)/(\d+) \(([\d.]+)%\)",
        textattack_headline,
        "results/textattack_side_by_side/*.json (same_outcome, skipped)",
    ),
    Quote(
        "results/README.md",
        r"counting\s+the skipped ones as agreeing: (\d+) / (\d+) / (\d+) / (\d+)\.",
        textattack_all_100,
        "results/textattack_side_by_side/*.json (same_outcome)",
    ),
]


# --- RMC: budgets and seed-level tests beside each interval ----------------------------------------------------

RMC_ROWS = {
    "imp_vanilla": "IMP 40% – Vanilla",
    "imp_distil": "IMP 40% – Distil",
    "imp_smooth": "IMP 40% – Smooth",
    "imp_focal": "IMP 40% – Focal",
    "imp_jtt": "IMP 40% – JTT",
    "imp_rmc": "IMP 40% – RMC",
    "heads20_ce": "heads −20% – CE",
    "mask_poe": "SRNet 40% – mask, PoE",
}
RMC_METRICS = ("eval_mnli_accuracy", "eval_hans_accuracy", "f_bias")


def rmc_runs() -> dict[str, dict[str, dict[str, str]]]:
    runs: dict[str, dict[str, dict[str, str]]] = defaultdict(dict)
    for r in read_csv("results/rmc_large_minilm_mnli/runs.csv"):
        runs[r["method"]][r["seed"]] = r
    return runs


def rmc_seed_tests() -> dict[str, list[str]]:
    """Per method, `p (Holm p)` of each metric: the paired t-test over the seeds against Vanilla, Holm over the
    seven compared rows of one metric (`hf_srnets.metrics.significance`)."""
    runs = rmc_runs()
    methods = [m for m in RMC_ROWS if m != "imp_vanilla"]
    cells: dict[str, list[str]] = {m: [] for m in methods}
    for metric in RMC_METRICS:
        p = []
        for m in methods:
            seeds = sorted(runs[m])
            p.append(paired_t_test([float(runs[m][s][metric]) - float(runs["imp_vanilla"][s][metric]) for s in seeds]))
        for m, raw, adjusted in zip(methods, p, holm(p)):
            cells[m].append(f"{raw:.2g} ({adjusted:.2g})")
    return cells


def rmc_row(method: str) -> tuple[str, ...]:
    steps = {r["train_steps"] for r in rmc_runs()[method].values()}
    (step,) = steps
    step = f"**{step}**" if method in ("heads20_ce", "mask_poe") else step
    return (step, *rmc_seed_tests()[method]) if method != "imp_vanilla" else (step,)


def rmc_quote(method: str) -> Quote:
    name = re.escape(RMC_ROWS[method])
    if method == "imp_vanilla":
        pattern = rf"^\| {name} \| 3 \| ([^|]+?) \|"
    else:  # train steps, then the seed p after each of the three intervals
        interval = r"[^|]+ \| ([^|]+?) \|"
        pattern = rf"^\| {name} \| 3 \| ([^|]+?) \|(?: [^|]+ \|){{4}} {interval} {interval} {interval}"
    return Quote(
        "results/rmc_large_minilm_mnli/README.md",
        pattern,
        lambda: rmc_row(method),
        "results/rmc_large_minilm_mnli/runs.csv",
    )


RMC_QUOTES = [rmc_quote(m) for m in RMC_ROWS]


def f_bias_above_one() -> tuple[str, ...]:
    above = [(m, s, float(r["f_bias"])) for m, seeds in rmc_runs().items() for s, r in seeds.items()]
    above = sorted((m, s, v) for m, s, v in above if v > 1)
    total = sum(len(seeds) for seeds in rmc_runs().values())
    return (str(len(above)), str(total), *(f"{s}, {v:.3f}" for _, s, v in above))


RMC_QUOTES.append(
    Quote(
        "results/rmc_large_minilm_mnli/README.md",
        r"\((\d+) of the (\d+) runs are above 1:\s+Vanilla seed (\d+, [\d.]+), and the SRNet seed (\d+, [\d.]+);",
        f_bias_above_one,
        "results/rmc_large_minilm_mnli/runs.csv (f_bias)",
    )
)


def equal_budget_mnli_differences(*methods: str) -> tuple[str, ...]:
    """Δ MNLI-m against imp_vanilla of `methods` in rmc_large_minilm_mnli_equal/report.md, to one decimal."""
    report = (RESULTS / "rmc_large_minilm_mnli_equal" / "report.md").read_text(encoding="utf-8")
    rows = {cells(r)[0]: cells(r) for r in table_rows(report, "| method | sparsity | paired seeds |")}
    return tuple(f"{float(rows[m][3].split()[0]):+.1f}".replace("-", "−") for m in methods)


# issue 50: the distillation row had kept the superseded 152-step differences (+0.3, +0.1, +0.4)
RMC_QUOTES.append(
    Quote(
        "results/README.md",
        r"\| Distil/Smooth/RMC 84\.1–84\.2 vs 84\.0 \| ([+−][\d.]+), ([+−][\d.]+), ([+−][\d.]+) points MNLI-m "
        r"against Vanilla at equal budgets",
        lambda: equal_budget_mnli_differences("imp_distil", "imp_smooth", "imp_rmc"),
        "results/rmc_large_minilm_mnli_equal/report.md (paired Δ eval_mnli_accuracy)",
    )
)


def entailment_share(path: str) -> tuple[str]:
    """The share of a per-example file's predictions that are "entailment", in % to one decimal."""
    with gzip.open(ROOT / path, "rt", encoding="utf-8") as f:
        predictions = [json.loads(line)["prediction"] for line in f]
    return (f"{100 * predictions.count('entailment') / len(predictions):.1f}",)


# issue 50: the README gave the teacher's accuracy on entailed pairs (89.7%) as the share it labels entailment
RMC_QUOTES.append(
    Quote(
        "results/oneshot_large_minilm_mnli/README.md",
        r"\(49\.2%: it labels ([\d.]+)% of the\s+pairs \"entailment\"\)",
        lambda: entailment_share("results/oneshot_large_minilm_mnli/per_example/teacher/s0/seed0/hans.jsonl.gz"),
        "results/oneshot_large_minilm_mnli/per_example/teacher/s0/seed0/hans.jsonl.gz",
    )
)

# --- the GPU check: mission times and overhead ratios --------------------------------------------------------

GPU_RUNS = {
    "H100": "results/gpu/2026-11-27_NVIDIA_H100_80GB_HBM3",
    "H200": "results/gpu/2026-11-27_NVIDIA_H200_after_fixes",
    "run3": "results/gpu/2026-11-28_NVIDIA_H100_80GB_HBM3",
}


def gpu_step_seconds(run: str, step: str) -> str:
    """The seconds `summary.md` gives one step (`- (b) accelerate launch, mask PoE, fp16: exit 0 in 63 s`)."""
    text = (ROOT / GPU_RUNS[run] / "summary.md").read_text(encoding="utf-8")
    return re.search(re.escape(step) + r": exit \d+ in (\d+) s", text).group(1)


def gpu_mask_poe_ratio(run: str, name: str = "overhead") -> str:
    return f"{read_json(f'{GPU_RUNS[run]}/{name}.json')['summary']['mask-poe']['ratio_to_plain_median']:.3f}"


def gpu_ms_per_step(name: str, variant: str) -> str:
    seconds = read_json(f"{GPU_RUNS['run3']}/{name}.json")["summary"][variant]["seconds_per_step_median"]
    return f"{1000 * seconds:.2f}"


def gpu_update_ms(name: str) -> tuple[str, ...]:
    """One bench_threshold_update.py result: kthvalue, topk and sort ms of the largest matrix, then both updates."""
    selection = read_json(f"{GPU_RUNS['run3']}/threshold_update_{name}.json")["selection"]
    primitives = selection["primitive_ms"]
    times = (primitives["kthvalue"], primitives["topk"], primitives["sort"])
    return tuple(f"{t:.2f}" for t in times) + tuple(f"{selection[f'update_{k}_ms']:.1f}" for k in ("local", "global"))


def gpu_suite_counts(run: str) -> tuple[str, str, str]:
    line = (ROOT / GPU_RUNS[run] / "suite.log").read_text(encoding="utf-8").strip().splitlines()[-1]
    found = re.fullmatch(r"(\d+) passed, (\d+) skipped, .* in ([\d.]+)s \(.*\)", line)
    return found.group(1), found.group(2), f"{float(found.group(3)):.0f}"


GPU_QUOTES = [
    Quote(
        "results/README.md",
        r"`accelerate launch`\s+command\s+in\s+fp16\s+\((\d+) s\)\s+and\s+bf16\s+\((\d+) s\)[\s\S]*?"
        r"\(mask-PoE ([\d.]+)× the plain Trainer's step time on the H200, ([\d.]+)×\s+on the H100",
        lambda: (
            gpu_step_seconds("H200", "(b) accelerate launch, mask PoE, fp16"),
            gpu_step_seconds("H200", "(b) accelerate launch, mask PoE, bf16"),
            gpu_mask_poe_ratio("H200"),
            gpu_mask_poe_ratio("H100"),
        ),
        "results/gpu/*/summary.md (step times) and overhead.json (ratio_to_plain_median)",
    ),
    Quote(
        "results/README.md",
        r"`kthvalue`, (\d+) ms per update on CUDA, now `topk` \((\d+) ms\); mask-PoE\s+([\d.]+)× plain after it",
        lambda: (
            f"{float(gpu_update_ms('before')[3]):.0f}",
            f"{float(gpu_update_ms('after')[3]):.0f}",
            gpu_mask_poe_ratio("run3", "overhead_after"),
        ),
        "results/gpu/2026-11-28_*/threshold_update_{before,after}.json (local scope), overhead_after.json",
    ),
    Quote(
        "results/gpu/README.md",
        r"Fast suite on CUDA, 14 workers:\*\* (\d+) passed, (\d+) skipped, 0 failed in (\d+) s\. Every skip",
        lambda: gpu_suite_counts("run3"),
        "results/gpu/2026-11-28_*/suite.log (its last line)",
    ),
    Quote(
        "results/gpu/README.md",
        r"Missions:\*\* fp16 (\d+) s, bf16 (\d+) s, both[\s\S]*?mask-PoE ([\d.]+)× plain; in a longer run[^)]*\) "
        r"([\d.]+)×:\s+([\d.]+) ms against ([\d.]+) ms per step",
        lambda: (
            gpu_step_seconds("run3", "(b) accelerate launch, mask PoE, fp16"),
            gpu_step_seconds("run3", "(b) accelerate launch, mask PoE, bf16"),
            gpu_mask_poe_ratio("run3"),
            gpu_mask_poe_ratio("run3", "overhead_long"),
            gpu_ms_per_step("overhead_long", "mask-poe"),
            gpu_ms_per_step("overhead_long", "plain"),
        ),
        "results/gpu/2026-11-28_*/summary.md, overhead.json, overhead_long.json",
    ),
    Quote(
        "results/gpu/README.md",
        r"`kthvalue` of one [\d,]+-score FFN matrix \| ([\d.]+) ms \| ([\d.]+) ms[^|]*\|\n"
        r"\| `topk`[^|]*\| ([\d.]+) ms \| ([\d.]+) ms \|\n\| full `sort`[^|]*\| ([\d.]+) ms \| ([\d.]+) ms \|\n"
        r"\| one threshold update, local[^|]*\| ([\d.]+) ms \| ([\d.]+) ms \|\n"
        r"\| one threshold update, global[^|]*\| ([\d.]+) ms \| ([\d.]+) ms \|",
        lambda: tuple(v for pair in zip(gpu_update_ms("before"), gpu_update_ms("after")) for v in pair),
        "results/gpu/2026-11-28_*/threshold_update_{before,after}.json",
    ),
    Quote(
        "results/gpu/README.md",
        r"mask-PoE ([\d.]+) ms per step against\s+plain's ([\d.]+) ms, ([\d.]+)× \(median",
        lambda: (
            gpu_ms_per_step("overhead_after", "mask-poe"),
            gpu_ms_per_step("overhead_after", "plain"),
            gpu_mask_poe_ratio("run3", "overhead_after"),
        ),
        "results/gpu/2026-11-28_*/overhead_after.json",
    ),
]  # fmt: skip

# --- the quickstart in fp32 and bf16 (results/quickstart_precision) -------------------------------------------

QUICKSTART = "results/quickstart_precision"
QUICKSTART_CELLS = ("eval_mnli_accuracy", "eval_hans_accuracy", "eval_hans_entailment_accuracy",
                    "eval_hans_non-entailment_accuracy")  # fmt: skip


def quickstart_row(run: str, precision: str, train_seconds: bool = True) -> tuple[str, ...]:
    results = read_json(f"{QUICKSTART}/quickstart_results_{precision}.json")["runs"][run]
    cells = tuple(f"{100 * results[key]:.2f}" for key in QUICKSTART_CELLS)
    if train_seconds:
        cells += (f"{read_json(f'{QUICKSTART}/{run}_all_results_{precision}.json')['train_runtime']:.0f}",)
    return cells


def quickstart_wall_clocks() -> tuple[str, str, str]:
    fp32, bf16 = (read_json(f"{QUICKSTART}/wall_clock_{p}.json")["wall_clock_s"] for p in ("fp32", "bf16"))
    return str(fp32), str(bf16), f"{fp32 / bf16:.1f}"


QUICKSTART_ROWS = {
    ("full_ce", "fp32"): r"\| full fine-tuning, `ce` \| fp32",
    ("full_ce", "bf16"): r"\| full fine-tuning, `ce` \| bf16",
    ("mask_poe_50", "fp32"): r"\| SRNet, mask-PoE 50% \| fp32",
    ("mask_poe_50", "bf16"): r"\| SRNet, mask-PoE 50% \| bf16",
}
QUICKSTART_QUOTES = [
    Quote(path, prefix + r" \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| (\d+) \|",
          lambda run=run, precision=precision: quickstart_row(run, precision),
          f"{QUICKSTART}/quickstart_results_{precision}.json, {run}_all_results_{precision}.json")
    for path in ("docs/scale.md", f"{QUICKSTART}/README.md")
    for (run, precision), prefix in QUICKSTART_ROWS.items()
] + [
    # the full quickstart's table (the first run's, above it, is the --quick fixture's: test_readme.py)
    Quote("README.md",
          r"## Quickstart[\s\S]*?\| full fine-tuning, `ce` \| 0% \| "
          r"([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|",
          lambda: quickstart_row("full_ce", "fp32", False), f"{QUICKSTART}/quickstart_results_fp32.json"),
    Quote("README.md",
          r"## Quickstart[\s\S]*?\| SRNet: mask training, `poe` \| 50% \| "
          r"([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|",
          lambda: quickstart_row("mask_poe_50", "fp32", False), f"{QUICKSTART}/quickstart_results_fp32.json"),
    Quote("README.md", r"2026-11-27, (\d+) s alone:", lambda: quickstart_wall_clocks()[:1],
          f"{QUICKSTART}/wall_clock_fp32.json"),
    Quote("README.md", r"ran ([\d.]+)× faster \((\d+) s against (\d+) s, one thread",
          lambda: (quickstart_wall_clocks()[2], quickstart_wall_clocks()[1], quickstart_wall_clocks()[0]),
          f"{QUICKSTART}/wall_clock_*.json"),
    Quote("docs/scale.md", r"Wall clock (\d+) s in fp32 and (\d+) s in bf16 \(([\d.]+)×\)", quickstart_wall_clocks,
          f"{QUICKSTART}/wall_clock_*.json"),
    Quote(f"{QUICKSTART}/README.md", r"\*\*Wall clock:\*\* (\d+) s in fp32 and (\d+) s in bf16, ([\d.]+)× faster",
          quickstart_wall_clocks, f"{QUICKSTART}/wall_clock_*.json"),
]  # fmt: skip


def quickstart_agreement(run: str, name: str) -> str:
    """% of the examples on which the fp32 and bf16 runs predict the same label (the committed per-example files)."""
    import gzip

    rows = []
    for precision in ("fp32", "bf16"):
        path = RESULTS / "quickstart_precision" / "per_example" / precision / run / f"{name}.jsonl.gz"
        with gzip.open(path, "rt") as f:
            rows.append({r["id"]: r["prediction"] for r in map(json.loads, f)})
    assert rows[0].keys() == rows[1].keys()
    return f"{100 * sum(rows[0][k] == rows[1][k] for k in rows[0]) / len(rows[0]):.1f}"


QUICKSTART_QUOTES += [
    Quote("results/README.md", r"wall\s+clocks\s+\((\d+) s\s+and\s+(\d+) s,\s+([\d.]+)×\)", quickstart_wall_clocks,
          f"{QUICKSTART}/wall_clock_*.json"),
    Quote("docs/scale.md", r"predictions agree on ([\d.]+)% \(MNLI-m\) and\s+([\d.]+)% \(HANS\)",
          lambda: (quickstart_agreement("full_ce", "mnli"), quickstart_agreement("full_ce", "hans")),
          f"{QUICKSTART}/per_example"),
    Quote("docs/scale.md", r"its predictions agree on ([\d.]+)% / ([\d.]+)%",
          lambda: (quickstart_agreement("mask_poe_50", "mnli"), quickstart_agreement("mask_poe_50", "hans")),
          f"{QUICKSTART}/per_example"),
    Quote(f"{QUICKSTART}/README.md", r"full model agrees on ([\d.]+)% of\s+MNLI-m and ([\d.]+)% of HANS, the SRNet on "
          r"([\d.]+)% and ([\d.]+)%",
          lambda: tuple(quickstart_agreement(r, n) for r in ("full_ce", "mask_poe_50") for n in ("mnli", "hans")),
          f"{QUICKSTART}/per_example"),
]  # fmt: skip

ALL_QUOTES = (
    COUNT_QUOTES
    + SWEEP_QUOTES
    + FIG1_QUOTES
    + TABLE1_QUOTES
    + FIG1_INTERVAL_QUOTES
    + TEXTATTACK_QUOTES
    + RMC_QUOTES
    + GPU_QUOTES
    + QUICKSTART_QUOTES
)


def test_every_quoted_number_matches_its_file() -> None:
    assert mismatches(ALL_QUOTES) == []


def test_the_checker_fails_on_a_planted_wrong_number() -> None:
    """Each kind of quote, with one digit changed in a copy of its text, is reported with both values."""
    planted = {
        "README.md": ("Inner loop: the 69 tests", "Inner loop: the 68 tests"),
        "results/README.md": ("Training took 514–619 s", "Training took 516–619 s"),
        "results/rmc_large_minilm_mnli/README.md": ("| 0.072 (0.51) |", "| 0.07 (0.51) |"),
        "results/robust_tickets_fig1/retrained/README.md": ("Suc% +5.7 [+0.7, +11.1]*", "Suc% +5.7 [+0.8, +11.1]*"),
    }
    for path, (old, new) in planted.items():
        text = (ROOT / path).read_text(encoding="utf-8")
        if path == "README.md":  # the counts move with the suite: plant relative to the recorded one
            old = f"Inner loop: the {counts()['slow']} tests"
            new = f"Inner loop: the {counts()['slow'] + 1} tests"
        assert old in text, f"{path} no longer holds {old!r}: plant another number"
        copy = text.replace(old, new)

        def read(p: str, path: str = path, copy: str = copy) -> str:
            return copy if p == path else (ROOT / p).read_text(encoding="utf-8")

        found = mismatches(ALL_QUOTES, read)
        assert len(found) == 1 and found[0].startswith(f"{path}: quotes "), found


def test_a_quote_that_is_gone_is_reported() -> None:
    quote = Quote("README.md", r"no such sentence (\d+)", lambda: ("1",), "nowhere")
    assert mismatches([quote]) == [
        "README.md: no text matches 'no such sentence (\\\\d+)' (the source nowhere gives ('1',))"
    ]


def test_win_win_observations_are_cited_from_section_4_2_2() -> None:
    """The paper's §4.2.1 is the set-up; the observations on Fig. 2 and 3 are in §4.2.2 ("4.2.2 Results")."""
    path = ROOT.parent / "shared" / "papers" / "srnets-winwin-main.txt"
    if not path.is_file():  # a GPU machine gets the repo alone
        pytest.skip(f"paper text not found at {path}")
    paper = path.read_text(encoding="utf-8")
    assert "4.2.1 Problem Formulation and Experimental Setups" in paper and "4.2.2 Results" in paper
    texts = [ROOT / "docs" / "sweeps.md", *RESULTS.glob("*/README.md"), RESULTS / "README.md"]
    assert [str(p.relative_to(ROOT)) for p in texts if "§4.2.1" in p.read_text(encoding="utf-8")] == []


@pytest.mark.slow  # slow in a partial run (a collection of its own)
def test_the_recorded_counts_are_the_suites(request) -> None:
    """results/test_counts.json must hold the suite's counts; after adding or removing tests, run `python
    tests/count_tests.py --write` and the README follows from the file. In a run of the whole suite this session's
    own collection gives them (every xdist worker collects every test); otherwise one collection of the suite does
    (count_tests.py, about 20 s of CPU)."""
    if whole_suite(request.config):
        items = request.session.items
        fresh = {"collected": len(items), "slow": sum(bool(item.get_closest_marker("slow")) for item in items)}
    else:
        result = subprocess.run(
            [sys.executable, str(ROOT / "tests" / "count_tests.py")], capture_output=True, text=True
        )
        assert result.returncode == 0, result.stderr[-2000:]
        fresh = json.loads(result.stdout.strip().splitlines()[-1])
    recorded = counts()
    assert (recorded["collected"], recorded["slow"]) == (fresh["collected"], fresh["slow"])


# --- one-shot pruning against the search (issue 35): the README's table is report.md's per-column tables ----------

ONESHOT_NAMES = {
    "search (mask, PoE)": "mask_poe",
    "magnitude one-shot": "magnitude_oneshot",
    "Wanda one-shot": "wanda_oneshot",
    "dense (teacher)": "teacher",
}


def cells(row: str) -> list[str]:
    return [c.strip().replace("−", "-") for c in row.strip().strip("|").split("|")]


def test_the_oneshot_table_is_the_regenerated_report_row_for_row() -> None:
    folder = RESULTS / "oneshot_large_minilm_mnli"
    report = (folder / "report.md").read_text().split("## Paired by column against mask_poe")[1]
    means = {(c[0], c[1]): c[3:] for c in map(cells, table_rows(report, "| method | sparsity | seeds | MNLI-m |"))}
    paired = {(c[0], c[1]): c[3::2] for c in map(cells, table_rows(report, "| method | sparsity | paired seeds |"))}
    quoted = table_rows((folder / "README.md").read_text(), "| method | sparsity | MNLI-m | HANS | HANS non-ent |")
    assert len(quoted) == 10
    for row in map(cells, quoted):
        key = (ONESHOT_NAMES[row[0]], row[1])
        expected = means[key]
        if key[0] == "magnitude_oneshot":  # its seeds are one model: the README leaves out "± 0.0"
            expected = [c.split(" ± ")[0] for c in expected]
        if key[0] == "teacher":
            expected = [*expected[:3], "1"]  # F_bias of the reference against itself
        assert row[2:6] == expected, row[0]
        assert row[6:] == (paired[key] if key in paired else ["–"] * 4 if key[0] == "mask_poe" else [""] * 4), row[0]


# --- structured SRNets (issue 32): the README's table is summary.json and report.md's per-column tables -----------


def column_tables(report: str, baseline: str) -> tuple[dict, dict]:
    """report.md's per-column section against `baseline`: (method, sparsity) -> mean cells and -> paired cells."""
    section = report.split(f"## Paired by column against {baseline}")[1].split("## ")[0]
    means = {(c[0], c[1]): c[3:] for c in map(cells, table_rows(section, "| method | sparsity | seeds | MNLI-m |"))}
    paired = {(c[0], c[1]): c[3::2] for c in map(cells, table_rows(section, "| method | sparsity | paired seeds |"))}
    return means, paired


def test_the_structured_table_is_summary_json_and_the_regenerated_report() -> None:
    folder = RESULTS / "structured_large_minilm_mnli"
    report = (folder / "report.md").read_text()
    means, against_element = column_tables(report, "element")
    _, against_dense = column_tables(report, "dense")
    summary = {(r["method"], f"{r['sparsity']:.0%}"): r for r in json.loads((folder / "summary.json").read_text())}
    quoted = table_rows((folder / "README.md").read_text(), "| model | sparsity | MNLI-m | % of element |")
    assert len(quoted) == len(summary) == 9
    for row in map(cells, quoted):
        key = (row[0], row[1])
        mnli, hans, non_ent, f_bias = means[key]
        entailment = f"{summary[key]['hans_entailment']:.1f}"
        assert [row[2], row[4], row[5], row[6]] == [
            mnli,
            hans,
            f"{entailment} / {non_ent}",
            f_bias if key[0] != "dense" else "1",
        ]
        element = summary.get(("element", key[1]))
        share = f"{100 * summary[key]['mnli_m'] / element['mnli_m']:.1f}%" if element else ""
        assert row[3] == (share.replace("100.0%", "100%")), key
        assert row[8:10] == [
            f"{summary[key]['cpu_throughput_vs_dense_b32']:.2f}",
            f"{summary[key]['cpu_latency_vs_dense_b1']:.2f}",
        ]
        assert row[10] == (against_element[key][0] if key in against_element else "–" if key[0] == "element" else "")
        assert row[11] == (against_dense[key][2] if key in against_dense else "")


# --- TextAttack side by side: the speed tables are the bench's JSON files -----------------------------------------

SIDE_BY_SIDE_TABLES = {  # README section -> the JSON file of each task (per recipe, a row)
    "## The 100 + 100 run against the fine-tuned victims": "side_by_side_{task}_100.json",
    "## Against TextAttack as its users run it": "side_by_side_{task}_15.ta_victim.json",
}


def side_by_side_row(task: str, recipe: str, record: dict) -> list[str]:
    """A speed-table row from the bench's record of one recipe: agreement, #Query (and their difference when they
    differ), examples/minute of both sides and the ratio of the attack-time rates."""
    hf, ta, speed = record["hf_srnets"], record["textattack"], record["speed"]
    queries = f"{hf['query']:.1f} / {ta['query']:.1f}"
    if f"{hf['query']:.1f}" != f"{ta['query']:.1f}":
        queries += f" ({100 * (hf['query'] / ta['query'] - 1):+.1f} %)"
    rate = {side: speed[side]["examples_per_minute"] for side in ("hf_srnets", "textattack")}
    return [
        {"sst2": "SST-2", "mnli": "MNLI"}[task],
        recipe,
        f"{100 * record['same_outcome_attacked']:.1f} / {100 * record['same_outcome']:.1f}",
        queries,
        f"{rate['textattack']:.1f} / {speed['textattack']['examples_per_minute_wall']:.1f}",
        f"{rate['hf_srnets']:.1f} / {speed['hf_srnets']['examples_per_minute_wall']:.1f}",
        f"{rate['hf_srnets'] / rate['textattack']:.2f}",
    ]


def test_the_side_by_side_speed_tables_are_the_bench_files() -> None:
    readme = (RESULTS / "textattack_side_by_side" / "README.md").read_text()
    header = "| task | recipe | same outcome % (attacked / all) | #Query hf / TA |"
    for section, name in SIDE_BY_SIDE_TABLES.items():
        quoted = [cells(row) for row in table_rows(readme.split(section)[1], header)]
        expected = []
        for task in ("sst2", "mnli"):
            report = read_json(f"results/textattack_side_by_side/{name.format(task=task)}")
            expected += [side_by_side_row(task, recipe, c) for recipe, c in report["recipes"].items()]
        for row, want in zip(quoted, expected, strict=True):
            assert row[:6] == [c.replace("−", "-") for c in want[:6]], section
            assert float(row[6]) == pytest.approx(float(want[6]), abs=0.051), section  # quoted to 1 or 2 digits


@pytest.mark.parametrize(
    ("name", "baseline"),
    [
        ("cue_minilm_mnli", "dense_poe"),  # issue 52, the controlled cue (first column: ID)
        ("hard_minilm_mnli", "dense_poe"),  # issue 52, MNLI's hard subset (first column: ID)
        ("structured_large_hidden_distil", "hybrid"),
        ("rmc_large_minilm_mnli_equal", "imp_vanilla"),  # issue 36: the RMC comparison at equal budgets
        ("winwin_large_minilm_mnli", "full_poe"),  # issue 36: Win-win's tables regenerated from per_example/
        ("structured_minilm_mnli", "full_ce"),  # issue 36: the structured searches re-run with per_example/
        ("rmc_minilm_mnli", "imp_vanilla"),  # issue 36: the small RMC comparison re-run with per_example/
        ("winwin_weak_bias_minilm_mnli", "full_ce"),  # issue 36: re-run with per_example/, every run identical
        ("sweep_minilm_mnli", "full_ce"),  # issue 36: Win-win Fig. 2 at CPU scale re-run with per_example/
    ],
)
def test_the_readme_quotes_the_regenerated_per_column_tables(name: str, baseline: str) -> None:
    folder = RESULTS / name
    report = (folder / "report.md").read_text().split(f"## Paired by column against {baseline}")[1]
    readme = (folder / "README.md").read_text()
    first = "ID" if name in ("cue_minilm_mnli", "hard_minilm_mnli") else "MNLI-m"
    for header in (f"| method | sparsity | seeds | {first} |", "| method | sparsity | paired seeds |"):
        assert table_rows(readme, header) == table_rows(report, header), header


# the runs.csv columns of a re-run's accuracies, and the all_results.json keys of the same accuracies
RERUN_KEYS = (
    ("mnli", "eval_mnli_accuracy"),
    ("hans", "eval_hans_accuracy"),
    ("hans_entailment", "eval_hans_entailment_accuracy"),
    ("hans_non_entailment", "eval_hans_non-entailment_accuracy"),
)


def moved(old: dict, new: dict) -> list[str] | None:
    """`old → new` of each accuracy in % to one digit, or None when no accuracy moved."""
    pairs = [(float(old[o]), float(new[n])) for o, n in RERUN_KEYS]
    if all(abs(a - b) < 1e-9 for a, b in pairs):
        return None
    return [f"{100 * a:.1f} → {100 * b:.1f}" for a, b in pairs]


def rerun_results(folder: Path, method: str, sparsity: float, seed: str) -> dict:
    """A re-run's accuracies as its per-example `run.json` records them."""
    run = folder / "per_example" / method / f"s{sparsity:g}" / f"seed{seed}" / "run.json"
    return json.loads(run.read_text())["results"]


def old_new_table(readme: str, header: str) -> dict[str, list[str]]:
    """A README's old → new table: first cell → [MNLI-m, HANS, HANS ent, HANS non-ent] as `old → new`."""
    quoted = {}
    for row in map(cells, table_rows(readme, header)):
        ent, non_ent = (part.split(" / ") for part in row[3].split(" → "))
        quoted[row[0]] = [row[1], row[2], f"{ent[0]} → {non_ent[0]}", f"{ent[1]} → {non_ent[1]}"]
    return quoted


def structured_run(row: dict[str, str]) -> tuple[str, str, float, str]:
    """The old → new table's label of a structured_minilm_mnli runs.csv row, and where its re-run is."""
    sparsity = float(row["target_sparsity"])
    return f"{row['granularity']} {100 * sparsity:.0f}%", row["method"], sparsity, row["seed"]


def rmc_run(row: dict[str, str]) -> tuple[str, str, float, str]:
    """The same for rmc_minilm_mnli, whose runs.csv names each run's folder; the teacher is an extra run."""
    run = Path(row["run"]).relative_to("outputs/rmc_minilm_mnli")
    method, sparsity, seed = ("teacher", "s0", "seed0") if run == Path("teacher") else run.parts
    return f"{run.parts[0]} seed {run.name.removeprefix('seed')}", method, float(sparsity[1:]), seed[4:]


@pytest.mark.parametrize(
    ("name", "locate", "header", "count"),
    [
        ("structured_minilm_mnli", structured_run, "| model | MNLI-m old → new |", "{same} of the {all} reproduce"),
        ("rmc_minilm_mnli", rmc_run, "| run | MNLI-m old → new |", "**{same} of the {all} runs**"),
    ],
)
def test_a_rerun_names_exactly_the_runs_that_moved(name: str, locate: Callable, header: str, count: str) -> None:
    """The old → new table lists the runs whose accuracies differ between runs.csv (the first run) and the re-run's
    per-example run.json, with both values; the text's count of reproduced runs is the rest."""
    folder = RESULTS / name
    rows = read_csv(f"results/{name}/runs.csv")
    found = {}
    for row in rows:
        label, method, sparsity, seed = locate(row)
        change = moved(row, rerun_results(folder, method, sparsity, seed))
        if change:
            found[label] = change
    readme = (folder / "README.md").read_text()
    assert old_new_table(readme, header) == found
    assert count.format(same=len(rows) - len(found), all=len(rows)) in readme


@pytest.mark.parametrize("name", ["winwin_weak_bias_minilm_mnli", "sweep_minilm_mnli"])
def test_a_rerun_that_reproduces_every_run_says_so(name: str) -> None:
    """Every accuracy of runs.csv (the first run) equals the re-run's per-example run.json, as the README says."""
    folder = RESULTS / name
    rows = read_csv(f"results/{name}/runs.csv")
    for row in rows:
        results = rerun_results(folder, row["method"], float(row["sparsity"]), row["seed"])
        assert all(float(row[key]) == results[key] for _, key in RERUN_KEYS), row
    assert f"**All {len(rows)} runs reproduce**" in (folder / "README.md").read_text()


# --- issue 36: the RMC table at equal budgets beside the old one ----------------------------------------------


RMC_NAMES = {
    "IMP 40% – Vanilla": "imp_vanilla",
    "IMP 40% – Distil": "imp_distil",
    "IMP 40% – Smooth": "imp_smooth",
    "IMP 40% – Focal": "imp_focal",
    "IMP 40% – JTT": "imp_jtt",
    "IMP 40% – RMC": "imp_rmc",
    "heads -20% – CE": "heads20_ce",  # as `cells` gives it: "−" read as "-"
    "SRNet 40% – mask, PoE": "mask_poe",
}


def test_the_equal_budget_table_beside_the_old_one_is_both_runs_csv() -> None:
    """Steps, MNLI-m and F_bias, old → new, are the means of the two sweeps' runs.csv (seeds 42-44 in both)."""
    runs = {
        when: read_csv(f"results/{folder}/runs.csv")
        for when, folder in (("old", "rmc_large_minilm_mnli"), ("new", "rmc_large_minilm_mnli_equal"))
    }

    def mean(when: str, method: str, key: str) -> float:
        values = [float(r[key]) for r in runs[when] if r["method"] == method]
        assert len(values) == 3, (when, method)
        return sum(values) / 3

    readme = (RESULTS / "rmc_large_minilm_mnli_equal" / "README.md").read_text()
    quoted = table_rows(readme, "| method | steps old → new |")
    assert len(quoted) == len(RMC_NAMES)
    for row in map(cells, quoted):
        method = RMC_NAMES[row[0]]
        steps = {when: {r["train_steps"] for r in runs[when] if r["method"] == method} for when in runs}
        assert all(len(s) == 1 for s in steps.values()), (method, steps)  # one budget per method and sweep
        assert row[1] == f"{min(steps['old'])} → {min(steps['new'])}", row[0]
        assert row[2] == f"{100 * mean('old', method, 'eval_mnli_accuracy'):.1f} → " + (
            f"{100 * mean('new', method, 'eval_mnli_accuracy'):.1f}"
        ), row[0]
        assert row[3] == f"{mean('old', method, 'f_bias'):.3f} → {mean('new', method, 'f_bias'):.3f}", row[0]


def test_the_robust_tickets_mnli_readme_tables_are_the_regenerated_md() -> None:
    """Every table row of results/robust_tickets_mnli/README.md is a row of l0_freelb_poe_vs_ce.md, which a test
    regenerates from per_example/ (tests/test_example_table_intervals.py)."""
    folder = RESULTS / "robust_tickets_mnli"
    made = set((folder / "l0_freelb_poe_vs_ce.md").read_text().splitlines())
    rows = [line for line in (folder / "README.md").read_text().splitlines() if line.startswith("| ")]
    assert len(rows) == 11  # two headers, 2 searches and 7 measures
    assert [row for row in rows if row not in made] == []


# --- issue 48's pilot: the README's table and the gains it quotes, from summary.json -------------------------------
PILOT = "results/structured_weights_pilot_minilm_mnli"


def pilot_rows() -> dict[str, dict]:
    return {row["method"]: row for row in read_json(f"{PILOT}/summary.json")}


def test_the_structured_weights_pilot_readme_follows_its_summary() -> None:
    rows = pilot_rows()
    dense = rows["dense"]["mnli_m"]
    text = (ROOT / PILOT / "README.md").read_text(encoding="utf-8")
    for r in rows.values():
        line = (
            f"| {r['method']} | {r['recipe']} | {round(100 * r['sparsity'])}% | {r['mnli_m']:.2f} | "
            f"{100 * r['mnli_m'] / dense:.1f}% | {r['hans_non_entailment']:.2f} | {r['recipe_train_steps']} | "
            f"{r['recipe_train_runtime_s']:.0f} | {r['cpu_throughput_vs_dense_b32']:.2f} | "
            f"{r['cpu_latency_vs_dense_b1']:.2f} |"
        )
        assert line in text, line
    gain = {unit: rows[f"{unit}_weights"]["mnli_m"] - rows[unit]["mnli_m"] for unit in ("hybrid", "ffn")}
    recovery = {
        unit: rows[f"{unit}_recovered"]["mnli_m"] - rows[f"{unit}_weights"]["mnli_m"] for unit in ("hybrid", "ffn")
    }
    assert f"(+{gain['hybrid']:.1f}), ffn 70% from" in text and f"61.57 (+{gain['ffn']:.1f})" in text
    assert f"adds +{recovery['hybrid']:.1f} (hybrid) and +{recovery['ffn']:.1f} (ffn)" in text
    best = rows["hybrid_recovered"]
    needed = 0.97 * dense
    assert (
        f"weights+recovery, {best['cpu_throughput_vs_dense_b32']:.2f}×) keeps {100 * best['mnli_m'] / dense:.1f}%"
        in text
    )
    assert f"against the {needed:.2f} the target needs: {needed - best['mnli_m']:.1f} points short" in text


# --- issue 48's experiment: the README's table, gains and target sentence from summary.json and report.md ----------
STRUCTURED_WEIGHTS = "results/structured_weights_large_minilm_mnli"


def test_the_structured_weights_readme_follows_its_summary_and_report() -> None:
    rows = {(r["method"], r["sparsity"]): r for r in read_json(f"{STRUCTURED_WEIGHTS}/summary.json")}
    dense = rows[("dense", 0.0)]["mnli_m"]
    text = (ROOT / STRUCTURED_WEIGHTS / "README.md").read_text(encoding="utf-8")
    flat = " ".join(text.split())
    for r in rows.values():
        line = (
            f"| {r['method']} | {r['recipe']} | {round(100 * r['sparsity'])}% | {r['mnli_m']:.2f} | "
            f"{100 * r['mnli_m'] / dense:.1f}% | {r['hans_non_entailment']:.2f} | {r['recipe_train_steps']:.0f} | "
            f"{r['recipe_train_runtime_s']:.0f} | {r['cpu_throughput_vs_dense_b32']:.2f} | "
            f"{r['cpu_latency_vs_dense_b1']:.2f} |"
        )
        assert line in text, line
    assert len(rows) == 15 and all(r["seeds"] == [42, 43, 44] for r in rows.values())

    def mnli(method: str, sparsity: float) -> float:
        return rows[(method, sparsity)]["mnli_m"]

    gains = [mnli("hybrid_weights", s) - mnli("hybrid", s) for s in (0.5, 0.7)]
    assert f"hybrid MNLI-m +{gains[0]:.1f} at 50% and +{gains[1]:.1f} at 70%" in flat
    recovery = [mnli("ffn_recovered", s) - mnli("ffn_weights", s) for s in (0.5, 0.7)]
    assert f"+{recovery[0]:.1f} and +{recovery[1]:.1f} (ffn)" in flat
    needed = 0.97 * dense
    assert f"missed.** The 97% line is {needed:.2f}. The only models at 2× or more are the hybrid 70% ones" in flat
    at_2x = [r for r in rows.values() if r["cpu_throughput_vs_dense_b32"] >= 2.0]
    assert {(r["method"].split("_")[0], r["sparsity"]) for r in at_2x} == {("hybrid", 0.7)}
    best = max(at_2x, key=lambda r: r["mnli_m"])
    assert best["method"] == "hybrid_recovered"
    assert (
        f"weights+recovery ({best['cpu_throughput_vs_dense_b32']:.2f}×), keeps {100 * best['mnli_m'] / dense:.1f}% "
        f"({best['mnli_m']:.2f}: {needed - best['mnli_m']:.1f} points short)" in flat
    )
    near = rows[("hybrid_recovered", 0.5)]
    assert (
        f"Hybrid 50% weights+recovery keeps {100 * near['mnli_m'] / dense:.1f}% ({near['mnli_m']:.2f}: "
        f"{needed - near['mnli_m']:.1f} points short) at {near['cpu_throughput_vs_dense_b32']:.2f}×" in flat
    )
    report = " ".join((ROOT / STRUCTURED_WEIGHTS / "report.md").read_text(encoding="utf-8").split())
    for interval in re.findall(r"[+-]\d+\.\d \[[+-]\d+\.\d, [+-]\d+\.\d\]\*?", flat):
        assert interval in report, interval


def test_the_runtime_speed_table_of_docs_export_follows_runtimes_json() -> None:
    """docs/export.md's table of ×dense per runtime (issue 49) is `bench/bench_runtimes.py`'s record, rounded."""
    record = read_json(f"{STRUCTURED_WEIGHTS}/runtimes/runtimes.json")
    text = (ROOT / "docs" / "export.md").read_text(encoding="utf-8")
    names = {"hybrid50": "hybrid 50%", "hybrid70": "hybrid 70%", "ffn50": "ffn 50%", "ffn70": "ffn 70%"}
    runtimes = ("eager", "compile", "onnxruntime")
    for model, title in names.items():
        ratios = record["speedups"][model]
        cells = [f"{ratios['throughput_vs_dense_b32'][r]:.2f}" for r in runtimes]
        cells += [f"{ratios['latency_vs_dense_b1'][r]:.2f}" for r in runtimes]
        assert f"| {title}, weights+recovery | " + " | ".join(cells) + " |" in text, model
        assert ratios["holds_in"] == list(runtimes) and ratios["not_in"] == []
    assert record["threads"] == 2 and record["seq_length"] == 128
    rows = {r: record["runtimes"][r]["rows"] for r in runtimes}
    dense = {r: next(x for x in rows[r] if x["model"] == "dense" and x["batch_size"] == 1) for r in runtimes}
    assert "b1: {:.1f} ms eager, {:.1f} ms compiled, {:.1f} ms in ONNX Runtime".format(
        *(dense[r]["latency_ms"] for r in runtimes)
    ) in " ".join(text.split())


def test_the_int8_speed_table_of_docs_export_follows_its_runtimes_json() -> None:
    """docs/export.md's INT8 table (issue 71) is `bench/bench_runtimes.py`'s record, rounded: every cell."""
    record = read_json(f"{STRUCTURED_WEIGHTS}/runtimes_int8/runtimes.json")
    rows = {(r["model"], rt, r["batch_size"]): r for rt, rec in record["runtimes"].items() for r in rec["rows"]}
    text = (ROOT / "docs" / "export.md").read_text(encoding="utf-8")
    base = rows[("dense", "eager", 32)]["examples_per_s"]
    titles = {"dense": "dense", "hybrid50": "hybrid 50%, weights+recovery", "hybrid70": "hybrid 70%, weights+recovery",
              "ffn70": "ffn 70%, weights+recovery"}  # fmt: skip
    for model, title in titles.items():
        b32 = [rows[(model, rt, 32)]["examples_per_s"] for rt in ("eager", "onnxruntime", "onnxruntime-int8",
                                                                    "torch-int8")]  # fmt: skip
        b1 = [rows[(model, rt, 1)]["latency_ms"] for rt in ("eager", "onnxruntime-int8", "torch-int8")]
        agree = [record["runtimes"][rt]["setup_seconds"][model]["int8_label_agreement"] for rt in
                 ("onnxruntime-int8", "torch-int8")]  # fmt: skip
        line = (f"| {title} | {' / '.join(f'{v:.1f}' for v in b32)} | {b32[2] / base:.2f} / {b32[3] / base:.2f} | "
                f"{' / '.join(f'{v:.2f}' for v in b1)} | {agree[0]:.2f} / {agree[1]:.2f} |")  # fmt: skip
        assert line in text, line
    for quoted, runtime in (("2.25× in ONNX Runtime", "onnxruntime-int8"), ("2.10× in PyTorch", "torch-int8")):
        assert f"{rows[('dense', runtime, 32)]['examples_per_s'] / base:.2f}×" in quoted and quoted in " ".join(
            text.split()
        )
    assert record["cpu_integer_instructions"] == ["avx512_vnni", "avx2"] and record["threads"] == 2


def test_the_int8_cofi_readme_follows_its_per_example_files_and_runtimes_json() -> None:
    """results/int8_cofi_minilm_mnli/README.md (issue 71): every accuracy, interval, agreement and speed it quotes is
    recomputed here from its per-example files (10,000 paired resamples) and runtimes.json."""
    from hf_srnets.evaluation.eval_predictions import read_eval_predictions
    from hf_srnets.metrics.bootstrap import paired_bootstrap

    folder = RESULTS / "int8_cofi_minilm_mnli"
    text = " ".join((folder / "README.md").read_text(encoding="utf-8").split())
    for name, title in (("mnli", "MNLI-m"), ("hans", "HANS")):
        runs = {k: read_eval_predictions(folder / "per_example" / k / f"{name}.jsonl.gz") for k in
                ("pytorch_bf16", "onnx_fp32", "onnx_int8")}  # fmt: skip
        fp32, int8 = runs["onnx_fp32"], runs["onnx_int8"]
        assert fp32.keys == int8.keys == runs["pytorch_bf16"].keys and len(fp32.keys) == 3000
        diff = paired_bootstrap(int8.correct, fp32.correct, n_resamples=10000)
        same = sum(a == b for a, b in zip(fp32.predictions, int8.predictions)) / len(fp32.keys)
        cells = [f"{100 * r.correct.mean():.2f}" for r in runs.values()]
        interval = f"{100 * diff.difference:+.2f} [{100 * diff.low:+.2f}, {100 * diff.high:+.2f}]".replace("-", "−")
        line = f"| {title} | {' | '.join(cells)} | {interval} | {100 * same:.1f}% |"
        assert line in text, line
    record = json.loads((folder / "runtimes.json").read_text(encoding="utf-8"))
    rows = {(r["model"], rt, r["batch_size"]): r for rt, rec in record["runtimes"].items() for r in rec["rows"]}
    base = rows[("dense", "eager", 32)]["examples_per_s"]
    for model in ("dense", "student_l3", "student_l2", "cofi50", "cofi70"):
        b32 = [rows[(model, rt, 32)]["examples_per_s"] for rt in ("eager", "onnxruntime", "onnxruntime-int8",
                                                                    "torch-int8")]  # fmt: skip
        b1 = [rows[(model, rt, 1)]["latency_ms"] for rt in ("eager", "onnxruntime-int8", "torch-int8")]
        line = (f"| {model} | {' / '.join(f'{v:.1f}' for v in b32)} | {b32[0] / base:.2f} / {b32[2] / base:.2f} / "
                f"{b32[3] / base:.2f} | {' / '.join(f'{v:.2f}' for v in b1)} |")  # fmt: skip
        assert line in text, line
    claims = {
        ("cofi50", "student_l3", "fp32"): "+0.40 [−1.07, +1.87] in float32",
        ("cofi50", "student_l3", "int8"): "+0.87 [−0.63, +2.40] in INT8",
        ("cofi70", "student_l2", "fp32"): "+11.53 [+9.57, +13.47] in float32",
        ("cofi70", "student_l2", "int8"): "+11.20 [+9.27, +13.10] in INT8",
    }
    for (srnet, student, precision), claim in claims.items():
        srnet_run, student_run = (read_eval_predictions(folder / "per_example" / f"{m}_torch_{precision}" /
                                                        "mnli.jsonl.gz") for m in (srnet, student))  # fmt: skip
        diff = paired_bootstrap(srnet_run.correct, student_run.correct, n_resamples=10000)
        assert (
            f"{100 * diff.difference:+.2f} [{100 * diff.low:+.2f}, {100 * diff.high:+.2f}]".replace("-", "−") in claim
        )
        assert claim in text, claim


def test_the_int8_table_regenerates_from_its_folder_with_f_bias_by_hand(tmp_path) -> None:
    """examples/int8_table.py on a copy of results/int8_cofi_minilm_mnli writes the committed table.md (quoted in
    the README) and a plot; F_bias of one row recomputed here from the accuracies, by §3.4's formula."""
    import shutil

    from hf_srnets.evaluation.eval_predictions import read_eval_predictions

    folder = RESULTS / "int8_cofi_minilm_mnli"
    copy = tmp_path / "int8"
    shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("table.md", "pareto.png"))
    subprocess.run([sys.executable, str(ROOT / "examples" / "int8_table.py"), str(copy)], check=True, cwd=ROOT,
                   capture_output=True)  # fmt: skip
    table = (copy / "table.md").read_text(encoding="utf-8")
    assert table == (folder / "table.md").read_text(encoding="utf-8")
    assert table in (folder / "README.md").read_text(encoding="utf-8")
    assert (copy / "pareto.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    def acc(run: str, name: str) -> float:
        return read_eval_predictions(folder / "per_example" / run / f"{name}.jsonl.gz").correct.mean()

    gap = (acc("cofi50_torch_int8", "mnli") - acc("cofi50_torch_int8", "hans")) / acc("cofi50_torch_int8", "mnli")
    ref = (acc("dense_torch_fp32", "mnli") - acc("dense_torch_fp32", "hans")) / acc("dense_torch_fp32", "mnli")
    assert f"| cofi50 | int8 | {100 * acc('cofi50_torch_int8', 'mnli'):.2f} |" in table
    assert f"| {gap / ref:.3f} |" in next(line for line in table.splitlines() if line.startswith("| cofi50 | int8"))
