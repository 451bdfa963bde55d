"""Model cards for SRNet runs: Hub metadata YAML plus a markdown summary, filled from a template."""

from __future__ import annotations

import os
from importlib import resources
from typing import Any

import yaml

from ..evaluation import easy_hard_table, f_bias_table, results_table
from ..evaluation.f_bias import CITATION_KEY as F_BIAS_CITATION_KEY
from ..metrics import HANS_HEURISTICS, HANS_LABELS
from ..objectives import OBJECTIVES, citations_for
from ..resources.citations import format_bibtex
from ..resources.model_location import is_local_path
from ..version import __version__
from .card_data import data_section
from .card_facts import CardFacts
from .card_usage import portable


def _versions() -> str:
    import accelerate
    import datasets
    import torch
    import transformers

    return (
        f"hf_srnets {__version__}, transformers {transformers.__version__}, torch {torch.__version__}, "
        f"datasets {datasets.__version__}, accelerate {accelerate.__version__}"
    )


def card_metadata(facts: CardFacts) -> dict[str, Any]:
    """Hub model-card metadata (the YAML header)."""
    results = facts.results
    model_index_results = []
    # With `splits` (`card_facts.describe_splits`), only results on a full official split are entered.
    claims = None
    if facts.splits is not None:
        claims = {s.name: s.model_index_dataset() for s in facts.splits if s.role != "train"}
    for name, key, dataset in facts.metric_rows:
        if claims is not None:
            dataset = claims.get(name)
        if isinstance(dataset, str):
            dataset = {"name": dataset, "type": dataset}
        if dataset and key in results:
            model_index_results.append(
                {
                    "task": {"type": "text-classification", "name": "Text Classification"},
                    "dataset": dataset,
                    "metrics": [
                        {
                            "type": key.rsplit("_", 1)[-1],
                            "value": round(100 * float(results[key]), 2),
                            "name": f"{name} {key.rsplit('_', 1)[-1]}",
                        }
                    ],
                }
            )
    as_adapter = facts.pruning != "none" and not facts.merged
    meta: dict[str, Any] = {
        "library_name": "hf_srnets" if as_adapter else "transformers",
        "pipeline_tag": "text-classification",
        "tags": ["hf_srnets", "srnet", "pruning", "debiasing", facts.task],
        "license": "apache-2.0",
    }
    base = facts.base_model
    if base and not is_local_path(str(base)):
        meta["base_model"] = base
    if facts.datasets:
        meta["datasets"] = facts.datasets
    if model_index_results:
        meta["model-index"] = [{"name": facts.title, "results": model_index_results}]
    return meta


def easy_hard_section(facts: CardFacts) -> str:
    """The card's "Easy and hard examples" part (Du et al. 2023, §4, Table 6), or "" without easy/hard results."""
    results, id_name = facts.results, facts.id_name or facts.task
    table = easy_hard_table(results, id_name)
    if not table:
        return ""
    source = results.get(f"eval_{id_name}_hard_subset")
    return (
        "\n### Easy and hard examples\n\nThe ID dev set split into easy (shortcut) and hard examples"
        + (f" by {source}" if source else "")
        + " (Du et al. 2023, §4 and Table 6): accuracy, mean confidence (max softmax probability) and the gap E − H."
        + f"\n\n{table}\n"
    )


def compact_summary(report: dict[str, Any]) -> str:
    """What `--save_compact` removed from the merged checkpoint (`compact_model`'s report) and how it loads."""
    before, after = report["parameters_before"], report["parameters_after"]
    loads = (
        "`transformers` alone loads it"
        if report.get("stock_checkpoint")
        else "load it with `AutoModelForSequenceClassification.from_pretrained(path, trust_remote_code=True)` (the "
        "modeling file saved beside the weights rebuilds the removed heads / FFN widths its config records) or "
        "`hf_srnets.load_pretrained_model`"
    )
    return (
        f"This is the **compact** merged checkpoint: FFN units and attention heads the masks removed entirely are "
        f"removed from the weights, {before:,} → {after:,} parameters ({100 * after / before:.1f}%), with the same "
        f"logits. Attention heads per layer: {', '.join(map(str, report['heads_per_layer']))}; FFN units per layer: "
        f"{', '.join(map(str, report['ffn_units_per_layer']))}. Remaining pruned weights are exactly 0; {loads}."
    )


def structure_section(results: dict[str, Any]) -> str:
    """What a structured change removed (`--prune_heads`, `--student_layers`, `--student_ffn_size`), from the run's
    results, or ""."""
    lines = []
    layers = results.get("student_layers_kept")
    if layers:
        lines.append(f"Layers: a student with {len(layers)} layers, the original's {', '.join(map(str, layers))}.")
    width = results.get("student_ffn_size")
    if width:
        lines.append(f"FFN: a student with {width} FFN units per layer, the original's of largest mean |W|.")
    kept = results.get("heads_kept_per_layer")
    if kept:
        pruned = sum(len(heads) for heads in (results.get("heads_pruned") or {}).values())
        lines.append(
            f"Attention heads: {pruned} of {pruned + sum(kept)} removed from the weights, lowest importance "
            "E|∂L/∂ξ_h| first (Michel et al. 2019; Du et al. 2023, §3.1); heads kept per layer: "
            f"{', '.join(map(str, kept))}. Load with `trust_remote_code=True` (the modeling file beside the weights) "
            "or `hf_srnets.load_pretrained_model`."
        )
    return "\n\n".join(lines)


def relative_bias_section(facts: CardFacts) -> str:
    """The card's "Relative bias" part: F_bias = Δ_model / Δ_reference (Du et al. 2023, §3.4), or ""."""
    table = f_bias_table(facts.results)
    if not table:
        return ""
    reference = facts.reference_results
    pooling = facts.results.get("f_bias_pooling")
    note = {
        "examples": " The task row pools the OOD sets' examples (accuracy over all of them), as the paper does.",
        "mean": " The task row averages the OOD sets' accuracies: an example count was missing (the paper pools).",
    }.get(pooling, "")
    return (
        "\n### Relative bias\n\n"
        'F_bias = Δ_model / Δ_reference with Δ = (F_dev − F_OOD) / F_dev on accuracy (Du et al., "Robustness '
        'Challenges in Model Distillation and Pruning for Natural Language Understanding", EACL 2023, §3.4)'
        + (f", against the reference run `{reference}`" if reference else "")
        + ". F_bias > 1: this model loses more out of distribution than the reference; undefined when the "
        f"reference has Δ ≤ 0.{note}\n\n{table}\n"
    )


def _citations(facts: CardFacts, step: str) -> str:
    """The card's BibTeX: the objective's papers, the pruning method's, and Du et al. 2023 for F_bias/easy-hard."""
    keys = [*citations_for(facts.loss, step=step), *facts.citations]
    if relative_bias_section(facts) or easy_hard_section(facts):
        keys.append(F_BIAS_CITATION_KEY)
    return format_bibtex(dict.fromkeys(keys))


def _step_words(step: str) -> str:
    """How the card names the step objective around the loss: its `card_words`, else `**name**`."""
    registered = OBJECTIVES.get(step)
    return getattr(registered, "card_words", "") or f"**{step}**"


def render_model_card(facts: CardFacts) -> str:
    """Fill the template from a run's card facts: title, task, base model, pruning, loss, sparsity, results, args."""
    template = resources.files("hf_srnets").joinpath("publish/templates/model_card.md").read_text(encoding="utf-8")
    results, pruning, loss = facts.results, facts.pruning, facts.loss
    step = facts.step_objective or "none"
    sparsity = facts.sparsity_report
    base_name = facts.base_name or facts.base_model
    summary = (
        f"A {'sparse and robust subnetwork (SRNet)' if pruning != 'none' else 'fine-tuned model'} of "
        f"`{base_name}` for **{facts.task_display or facts.task}**, trained with the **{loss}** loss"
        + (f" under {_step_words(step)}" if step != "none" else "")
        + (f" and **{pruning}** pruning" if pruning != "none" else "")
        + (f" to **{100 * sparsity['sparsity']:.1f}%** sparsity of the prunable weights." if sparsity else ".")
        + (f" Search: {facts.schedule}." if facts.schedule else "")
        + (f" Bias model: {facts.bias_model}." if facts.bias_model else "")
    )
    if not facts.trained and pruning == "none":  # an evaluation-only run: nothing was trained here
        what = "the ONNX export" if "onnx_export" in results else "the model"
        how = " with PyTorch's dynamic INT8 Linear layers (`--quantize int8`)" if "quantization" in results else ""
        summary = (
            f"An evaluation of {what} `{base_name}`{how} on **{facts.task_display or facts.task}**: this run "
            "trained nothing (`--do_eval` only) and saved no model; the results below are that model's."
        )
    if facts.compact:
        summary += "\n\n" + compact_summary(facts.compact)
    elif facts.merged:
        summary += (
            "\n\nThis is the **merged** checkpoint: the masks are folded into the weights (pruned weights are exactly"
            " 0), so `transformers` alone loads it. Its size is that of the dense model; store the mask repo for the"
            " compact form (about H(s) bits per prunable weight), or save the merged model with `--save_compact`."
        )
    elif facts.holds:
        summary += f"\n\nThis repo holds {facts.holds}."
    elif pruning != "none":
        summary += (
            "\n\nThis repo holds the mask config and the entropy-coded masks only; the weights come from the base"
            " model."
        )
    if facts.base_note and not facts.merged:
        summary += f" Base weights: {facts.base_note}."

    rows = [(name, key) for name, key, _ in facts.metric_rows]
    hans_rows = [("hans", f"eval_hans_{h}_{lab}_accuracy") for h in HANS_HEURISTICS for lab in HANS_LABELS]
    hans = results_table(results, hans_rows) if any(k in results for _, k in hans_rows) else ""
    if sparsity:
        per_module = sparsity["per_module"]
        bars = "\n".join(f"| `{name}` | {100 * s:.1f}% | {'█' * round(20 * s)} |" for name, s in per_module.items())
        sparsity_section = (
            f"Overall: {100 * sparsity['sparsity']:.2f}% of {sparsity['num_prunable']:,} prunable weights "
            f"({sparsity['num_pruned']:,} pruned).\n\n| matrix | sparsity | |\n|---|---|---|\n{bars}"
        )
    else:
        sparsity_section = "Not pruned."
    structure = structure_section(results)
    if structure:
        sparsity_section = f"{structure}\n\n{sparsity_section}" if sparsity else structure
    training = facts.training_args
    training_table = "| argument | value |\n|---|---|\n" + "\n".join(f"| {k} | {v} |" for k, v in training.items())
    return template.format(
        metadata=yaml.safe_dump(card_metadata(facts), sort_keys=False).strip(),
        data_section=data_section(facts.splits) if facts.splits else "Not recorded.",
        title=facts.title,
        summary=summary,
        results_table=results_table(results, rows),
        hans_table=("HANS by heuristic and gold label:\n\n" + hans) if hans else "",
        robustness_section=relative_bias_section(facts) + easy_hard_section(facts),
        sparsity_section=sparsity_section,
        usage=facts.usage,
        training_table=training_table,
        versions=_versions(),
        citations=_citations(facts, step),
    )


def portable_card(card: str, *, output_dir: str, repo_id: str, base: str | None = None) -> str:
    """A card written for a local output dir, made fit for the Hub repo `repo_id`: the dir becomes the repo id and
    a local `base` model dir the portable name the uploaded `srnet_config.json` uses. For uploads of runs that were
    not pushed at the end of training (`python -m hf_srnets.commands.push_to_hub`)."""
    swaps: dict[str, str] = {}
    if base and os.path.exists(base):
        for form in {base, os.path.abspath(base), os.path.realpath(base)}:
            swaps[form] = portable(base)
    for form in {output_dir, os.path.normpath(output_dir), os.path.abspath(output_dir), os.path.realpath(output_dir)}:
        swaps.setdefault(form, repo_id)
    for old in sorted(swaps, key=len, reverse=True):  # a base inside the dir (early start) before the dir
        card = card.replace(f'"{old}"', f'"{swaps[old]}"').replace(f"`{old}`", f"`{swaps[old]}`")
    return card


ATTACK_SECTION_START = "<!-- hf_srnets attack results -->"
ATTACK_SECTION_END = "<!-- /hf_srnets attack results -->"


def attack_section(summaries: dict[str, dict[str, Any]], settings: dict[str, dict[str, Any]]) -> str:
    """The card's "Robustness under attack" section: Clean% / Aua% / Suc% / #Query per recipe (`run_attack.py`)."""

    def pct(value: float | None) -> str:
        return "n/a" if value is None else f"{100 * value:.1f}"

    rows = []
    for recipe, s in summaries.items():
        queries = "n/a" if s.get("avg_queries") is None else f"{s['avg_queries']:.1f}"
        data = settings.get(recipe, {}).get("data", "")
        rows.append(
            f"| {recipe} | {s['num_examples']} | {pct(s['clean_accuracy'])} | {pct(s['accuracy_under_attack'])} | "
            f"{pct(s['attack_success_rate'])} | {queries} | {pct(s.get('avg_words_perturbed'))} | `{data}` |"
        )
    return (
        f"{ATTACK_SECTION_START}\n## Robustness under attack\n\n"
        "Written by `run_attack.py` (TextAttack's definitions: Clean% accuracy on the sample, Aua% accuracy under "
        "attack, Suc% successful / attacked, #Query mean texts submitted to the model per attacked example, "
        "cached or not).\n\n"
        "| attack | examples | Clean% | Aua% | Suc% | #Query | words perturbed % | data |\n"
        "|---|---|---|---|---|---|---|---|\n"
        + "\n".join(rows)
        + "\n"
        + _attack_resources(settings)
        + f"{ATTACK_SECTION_END}\n"
    )


def _attack_resources(settings: dict[str, dict[str, Any]]) -> str:
    """One line per recipe naming the word vectors, sentence encoder, POS tagger and stopwords it ran with."""

    def show(value: Any) -> str:
        if isinstance(value, dict):
            return ", ".join(f"{k} {v}" for k, v in value.items())
        return str(value)

    lines = []
    for recipe, setting in settings.items():
        used = setting.get("resources") or {}
        if used:
            lines.append(f"- {recipe}: " + "; ".join(f"{k.replace('_', ' ')}: `{show(v)}`" for k, v in used.items()))
    return "\nResources used:\n\n" + "\n".join(lines) + "\n" if lines else ""


def update_card_attack_section(
    card: str, summaries: dict[str, dict[str, Any]], settings: dict[str, dict[str, Any]]
) -> str:
    """`card` with its attack section replaced (or added before "## Citations", else at the end)."""
    section = attack_section(summaries, settings)
    start, end = card.find(ATTACK_SECTION_START), card.find(ATTACK_SECTION_END)
    if start != -1 and end != -1:
        return card[:start] + section + card[end + len(ATTACK_SECTION_END) :].lstrip("\n")
    anchor = card.find("\n## Citations")
    if anchor != -1:
        return card[: anchor + 1] + section + "\n" + card[anchor + 1 :]
    return card.rstrip("\n") + "\n\n" + section
