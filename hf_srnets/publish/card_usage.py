"""The code a card gives to load the run's model: the weights the masks were searched on, the run's labels, and
no local absolute paths in a card meant for the Hub."""

from __future__ import annotations

import re

from ..masking.hub_upload import portable_path

_SNAPSHOT = re.compile(r"models--([^/\\]+?)--([^/\\]+)[/\\]snapshots[/\\]")


def is_hub_snapshot(path: str) -> bool:
    """Whether `path` is a snapshot of the Hub cache (`.../models--org--name/snapshots/<sha>`)."""
    return _SNAPSHOT.search(path) is not None


def portable(path: str | None) -> str:
    """A name for a model that is fine in a public card: a Hub id as is; the Hub id of a Hub cache snapshot
    (`.../models--org--name/snapshots/<sha>`); else the name the uploaded `srnet_config.json` gives a local dir
    (`hub.portable_path`: its directory name, with the parent's when the name is generic)."""
    if not path:
        return ""
    match = _SNAPSHOT.search(path)
    if match:
        return f"{match[1]}/{match[2]}"

    return portable_path(path)


def _labels_code(id2label: dict[int, str] | None) -> tuple[str, str]:
    if not id2label:
        return "", ""
    labels = {int(k): str(v) for k, v in id2label.items()}
    setup = f"id2label = {labels!r}\n"
    args = f", num_labels={len(labels)}, id2label=id2label, label2id={{v: k for k, v in id2label.items()}}"
    return setup, args


def merged_usage(path: str) -> str:
    return (
        "from transformers import AutoModelForSequenceClassification, AutoTokenizer\n\n"
        f'model = AutoModelForSequenceClassification.from_pretrained("{path}")  # pruned weights are exactly 0\n'
        f'tokenizer = AutoTokenizer.from_pretrained("{path}")'
    )


def usage_snippet(
    output_dir: str,
    *,
    pruned: bool,
    base: str | None = None,
    id2label: dict[int, str] | None = None,
    base_note: str | None = None,
    head_pruned: bool = False,
) -> str:
    """Code that loads the run's model. `output_dir` is where the model or masks are (a dir or Hub repo id).
    `head_pruned`: the model has `config.srnet_pruned_heads`, so it loads with `hf_srnets.load_pretrained_model`.

    For masks: `base` is the model the masks were searched on (`srnet_config.base_model_name_or_path`) and
    `id2label` the run's labels, so a pre-trained base gets a classification head of the right size and names (the
    trained head itself comes from the mask file when it trained).
    """
    if not pruned and head_pruned:  # smaller attention than config.json says: its modeling file rebuilds it
        return remote_code_usage(output_dir, "attention heads removed (--prune_heads)")
    if not pruned:
        return (
            "from transformers import AutoModelForSequenceClassification, AutoTokenizer\n\n"
            f'model = AutoModelForSequenceClassification.from_pretrained("{output_dir}")\n'
            f'tokenizer = AutoTokenizer.from_pretrained("{output_dir}")'
        )
    setup, label_args = _labels_code(id2label)
    comment = f"  # {base_note}" if base_note else ""
    return (
        "from transformers import AutoModelForSequenceClassification, AutoTokenizer\n"
        "from hf_srnets.masking import SRNetModel\n\n"
        f"{setup}"
        f'base = AutoModelForSequenceClassification.from_pretrained(\n    "{base}"{label_args}\n){comment}\n'
        f'srnet = SRNetModel.from_pretrained(base, "{output_dir}")\n'
        "model = srnet.merge_and_unload()  # a plain transformers model, pruned weights are 0\n"
        f'tokenizer = AutoTokenizer.from_pretrained("{output_dir}")'
    )


def compact_usage(path: str) -> str:
    return remote_code_usage(path, "pruned FFN units and heads removed (--save_compact)")


def remote_code_usage(path: str, what: str) -> str:
    """Code that loads a compact checkpoint: transformers with the modeling file saved beside the weights
    (`hf_srnets.compact.remote_code`), or hf_srnets' loader."""
    return (
        "from transformers import AutoModelForSequenceClassification, AutoTokenizer\n\n"
        f"# {what}: the modeling file beside the weights gives each layer its shapes\n"
        f'model = AutoModelForSequenceClassification.from_pretrained("{path}", trust_remote_code=True)\n'
        f'tokenizer = AutoTokenizer.from_pretrained("{path}")\n'
        f'# or, with hf_srnets installed: hf_srnets.load_pretrained_model("{path}")'
    )
