"""An ONNX export evaluated as a run's model: `run_glue_sparse.py --model_name_or_path ONNX_DIR --do_eval` (issue 71).

A folder written by `run_export.py --format onnx` (float32 or `--quantize int8`) holds `model.onnx`, the source's
`config.json` and tokenizer. `OnnxClassifier` runs that graph with ONNX Runtime behind the interface the Trainer's
evaluation calls (`forward(input_ids, attention_mask, token_type_ids, labels) -> SequenceClassifierOutput`), so the
run evaluates it exactly as it evaluates a PyTorch checkpoint: the same sets, metrics, per-example files and F_bias,
and `report` compares an INT8 graph with its float32 model by paired intervals. Its labels are the config's (the run
reorders the task to them, as for any fine-tuned checkpoint). Nothing in it trains: a run that would train, prune or
reshape it is refused (`hf_srnets.runner.model`).
"""

from __future__ import annotations

import json
import os

import torch
from torch import nn
from transformers import AutoConfig
from transformers.modeling_outputs import SequenceClassifierOutput

from ..resources.auto_loading import auto_from_pretrained
from ..run_files import MODEL_CONFIG_NAME
from .files import EXPORT_REPORT_NAME, ONNX_NAME
from .onnx import onnx_modules


def is_onnx_export(path: str) -> bool:
    """Whether `path` is a folder holding an exported `model.onnx` and its `config.json`."""
    return os.path.isfile(os.path.join(path, ONNX_NAME)) and os.path.isfile(os.path.join(path, MODEL_CONFIG_NAME))


class OnnxClassifier(nn.Module):
    """`model.onnx` of an export folder run by ONNX Runtime's CPU provider, as a sequence classifier (module
    docstring). `config` is the folder's; `export_report` its `export_report.json` (empty if there is none)."""

    def __init__(self, path: str, threads: int | None = None) -> None:
        super().__init__()
        _, ort = onnx_modules()
        self.config = auto_from_pretrained(AutoConfig, path)
        self.name_or_path = path
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or torch.get_num_threads()
        self.session = ort.InferenceSession(os.path.join(path, ONNX_NAME), options, providers=["CPUExecutionProvider"])
        self.input_names = [graph_input.name for graph_input in self.session.get_inputs()]
        report = os.path.join(path, EXPORT_REPORT_NAME)
        self.export_report = json.load(open(report, encoding="utf-8")) if os.path.isfile(report) else {}
        # a parameter-free module has no device or dtype for the Trainer to read; this one stands for the CPU
        self.register_buffer("_device_anchor", torch.zeros(()), persistent=False)

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
    ) -> SequenceClassifierOutput:
        """The graph's logits for the batch (the inputs it takes: the Trainer keeps the columns this signature
        names), and the cross-entropy with `labels` when given."""
        given = {"input_ids": input_ids, "attention_mask": attention_mask, "token_type_ids": token_type_ids}
        feed = {name: value for name, value in given.items() if value is not None}
        missing = [name for name in self.input_names if name not in feed]
        if missing:
            raise ValueError(f"{self.name_or_path}/{ONNX_NAME} needs the inputs {missing}, which the batch lacks")
        arrays = {name: feed[name].detach().cpu().long().numpy() for name in self.input_names}
        (logits,) = self.session.run(["logits"], arrays)
        logits = torch.from_numpy(logits).float().to(input_ids.device)
        loss = nn.functional.cross_entropy(logits, labels.to(logits.device)) if labels is not None else None
        return SequenceClassifierOutput(loss=loss, logits=logits)
