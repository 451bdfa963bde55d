"""`export_onnx`: a saved sequence classifier (dense, merged or compact) as an ONNX graph that ONNX Runtime runs, with
dynamic batch and sequence axes, checked against the PyTorch logits before it is kept.

The graph takes the inputs the tokenizer gives and the model reads (`input_ids`, `attention_mask`, and
`token_type_ids` for BERT-like models) as int64 `[batch, sequence]` and returns `logits` `[batch, num_labels]`. It is
traced with torch's TorchScript exporter (`torch.onnx.export(..., dynamo=False)` with `dynamic_axes`): it needs only
`onnx`, works offline, and traces the per-layer shapes of a compact model (heads and FFN units removed) as they
are. The model is exported in float32 whatever dtype it was saved in.

The check: ONNX Runtime (CPU) runs two padded batches of shapes other than the traced one ((3, 9) and (1, 23); the
trace was (2, 16)), so a batch or sequence size baked into the graph fails it, and the largest absolute difference
from the PyTorch logits must stay within `tolerance` (1e-4); otherwise `ExportCheckError` names it and no
`model.onnx` is left.
"""

from __future__ import annotations

import inspect
import logging
import os
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import torch
from torch import nn

from ..compact import load_pretrained_model
from ..errors import InputError, naming_path
from .extras import ONNX_EXTRA, require
from .files import (
    ONNX_NAME,
    ExportCheckError,
    check_export_paths,
    check_finite_weights,
    check_number,
    files_bytes,
    load_tokenizer,
    prepare_output_dir,
    save_config_and_tokenizer,
    write_report,
)
from .formats import ExportFormat, register_export_format
from .quantize import QUANTIZE_CHOICES, int8_agreement, replace_with_int8

logger = logging.getLogger(__name__)

DEFAULT_OPSET = 17  # LayerNormalization is one op from 17 on
# transformers' attention traces to scaled_dot_product_attention, which the exporter writes from opset 14 on (and the
# Slice of the dynamic sequence axis from 10 on): below 14 no model the exporter takes (BERT-like or decoder) exports
MIN_OPSET = 14
try:  # above it torch warns that it does not support the opset; a private constant that another torch may move
    from torch.onnx._constants import ONNX_TORCHSCRIPT_EXPORTER_MAX_OPSET as MAX_OPSET
except ImportError:
    MAX_OPSET = 20  # torch 2.x's TorchScript exporter
TOLERANCE = 1e-4
TRACE_SHAPE = (2, 16)  # (batch, sequence) of the traced example
CHECK_SHAPES = ((3, 9), (1, 23))  # other batch sizes and lengths: a size baked into the graph fails the check
MODEL_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


class LogitsOnly(nn.Module):
    """The classifier called with its inputs by position, returning the logits alone: what the graph computes (no
    cache of a decoder, no output dict, which the tracer cannot return)."""

    def __init__(self, model: nn.Module, input_names: list[str]) -> None:
        super().__init__()
        self.model = model
        self.input_names = input_names
        self.no_cache = "use_cache" in inspect.signature(model.forward).parameters

    def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
        kwargs: dict[str, Any] = dict(zip(self.input_names, inputs))
        if self.no_cache:
            kwargs["use_cache"] = False
        return self.model(**kwargs).logits


def model_inputs(model: nn.Module, tokenizer: Any | None) -> list[str]:
    """The graph's inputs: those of `MODEL_INPUTS` the model's forward takes; `token_type_ids` only when the tokenizer
    (if any) gives them too, so that `session.run(None, dict(tokenizer(..., return_tensors="np")))` feeds it."""
    accepted = inspect.signature(model.forward).parameters
    given = set(getattr(tokenizer, "model_input_names", MODEL_INPUTS)) if tokenizer is not None else set(MODEL_INPUTS)
    return [n for n in MODEL_INPUTS if n in accepted and (n != "token_type_ids" or n in given)]


def sample_batch(config: Any, names: list[str], shape: tuple[int, int], seed: int) -> dict[str, torch.Tensor]:
    """Random token ids of `shape`, the first row padded from half its length on (attention mask 0, the pad id), so
    that the check covers the mask; `token_type_ids` mark a second segment where the model has one."""
    length = shape[1]
    g = torch.Generator().manual_seed(seed)
    pad = getattr(config, "pad_token_id", None)
    pad = 0 if pad is None else pad
    ids = torch.randint(min(5, config.vocab_size - 1), config.vocab_size, shape, generator=g)
    ids[ids == pad] = (pad + 1) % config.vocab_size
    mask = torch.ones_like(ids)
    mask[0, max(1, length // 2) :] = 0
    ids[mask == 0] = pad
    inputs = {"input_ids": ids, "attention_mask": mask, "token_type_ids": torch.zeros_like(ids)}
    if getattr(config, "type_vocab_size", 1) > 1:
        inputs["token_type_ids"][:, length // 2 :] = 1
    return {name: inputs[name] for name in names}


def pytorch_logits(model: nn.Module, inputs: dict[str, torch.Tensor], model_dir: str) -> torch.Tensor:
    """The model's logits on `inputs`; a model that cannot run a padded batch (a decoder without a pad token) is
    refused as an `InputError` naming the fix."""
    try:
        with torch.no_grad():
            return model(**inputs).logits
    except ValueError as err:
        raise InputError(
            f"{model_dir} cannot classify a padded batch in PyTorch ({err}): set pad_token_id in its config "
            "(a decoder pools the last token that is not padding) and export again"
        ) from err


def check_opset(opset: int) -> None:
    """`InputError` for an opset outside `MIN_OPSET`-`MAX_OPSET`, before any model is loaded."""
    if isinstance(opset, bool) or not isinstance(opset, int) or not MIN_OPSET <= opset <= MAX_OPSET:
        raise InputError(
            f"--opset must be in {MIN_OPSET}-{MAX_OPSET} (the attention exports from {MIN_OPSET} on, torch's exporter "
            f"goes up to {MAX_OPSET}), got {opset!r}: leave it out for the default, --opset {DEFAULT_OPSET}"
        )


def exporter_error(err: Exception, model: nn.Module, opset: int) -> InputError:
    """An error of torch's exporter at an opset it takes (an operator it cannot write at that opset) as one line."""
    fix = f"export with the default, --opset {DEFAULT_OPSET}" if opset != DEFAULT_OPSET else f"try --opset {MAX_OPSET}"
    cause = (str(err).strip().splitlines() or [""])[0]  # a SymbolicValueError goes on with the graph
    return InputError(
        f"--opset {opset} cannot export {model.config.name_or_path or 'this model'} ({type(err).__name__}: "
        f"{cause}): {fix}"
    )


def trace_to_onnx(model: nn.Module, names: list[str], path: str, opset: int) -> float:
    """Export `model` (eval mode) to `path` with dynamic batch and sequence axes; returns the seconds it took."""
    example = sample_batch(model.config, names, TRACE_SHAPE, seed=0)
    axes = {name: {0: "batch", 1: "sequence"} for name in names} | {"logits": {0: "batch"}}
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught, naming_path(path):
        warnings.simplefilter("always")
        try:
            torch.onnx.export(
                LogitsOnly(model, names).eval(),  # a new module trains: the exporter would leave it in train mode
                tuple(example[name] for name in names),
                path,
                input_names=names,
                output_names=["logits"],
                dynamic_axes=axes,
                opset_version=opset,
                dynamo=False,
            )
        except torch.onnx.errors.OnnxExporterError as err:
            raise exporter_error(err, model, opset) from err
    seconds = time.perf_counter() - start
    model.eval()  # as it came, whatever the exporter restored
    for warning in caught:  # tracer warnings on Python branches: the check below is what tells whether they matter
        logger.debug(f"torch.onnx.export: {warning.category.__name__}: {warning.message}")
    return seconds


def check_onnx(model: nn.Module, names: list[str], path: str, ort: Any, tolerance: float) -> float:
    """Run `path` with ONNX Runtime on the `CHECK_SHAPES` batches; the largest absolute difference from the PyTorch
    logits, or `ExportCheckError` when it exceeds `tolerance` or a shape is wrong."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = torch.get_num_threads()
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    worst = 0.0
    for seed, shape in enumerate(CHECK_SHAPES, start=1):
        inputs = sample_batch(model.config, names, shape, seed)
        expected = pytorch_logits(model, inputs, path).numpy()
        (got,) = session.run(["logits"], {name: tensor.numpy() for name, tensor in inputs.items()})
        if got.shape != expected.shape:
            raise ExportCheckError(f"{path}: ONNX Runtime gave logits of shape {got.shape} for {expected.shape}")
        diff = float(abs(got - expected).max())
        if not diff <= tolerance:  # NaN fails too
            raise ExportCheckError(
                f"{path}: ONNX Runtime's logits differ from PyTorch's by up to {diff:.3g} (> {tolerance:g}) on a "
                f"batch of shape {shape}: the export is wrong; the model's config and this message make the report"
            )
        worst = max(worst, diff)
    return worst


def check_quantize(quantize: str) -> None:
    if quantize not in QUANTIZE_CHOICES:
        raise InputError(f"quantize must be one of {', '.join(QUANTIZE_CHOICES)}, got {quantize!r}: e.g. int8.")


def quantized(model: nn.Module, names: list[str], path: str, ort: Any) -> dict[str, Any]:
    """Quantize the checked float graph at `path` to INT8 in place; its settings and agreement with `model`."""
    settings = replace_with_int8(path)
    agreement = int8_agreement(model, names, path, ort, sample_batch, pytorch_logits)
    logger.info(
        f"{path}: INT8, predicted labels agree with float32 PyTorch on {agreement['label_agreement']:.1%} of "
        f"{agreement['check_examples']} check examples (max |Δlogit| {agreement['max_abs_diff']:.3g})"
    )
    return {**settings, **agreement}


def onnx_modules() -> tuple[Any, Any]:
    """onnx and onnxruntime, or the one-line error naming the extra that installs them."""
    onnx, ort = require("--format onnx", ONNX_EXTRA, "onnx", "onnxruntime")
    return onnx, ort


def export_onnx(
    model_dir: str,
    output_dir: str,
    *,
    opset: int = DEFAULT_OPSET,
    tolerance: float = TOLERANCE,
    quantize: str = "none",
) -> dict[str, Any]:
    """Export the classifier saved in `model_dir` (loaded with `load_pretrained_model`: dense, merged or compact) to
    `<output_dir>/model.onnx`, check it with ONNX Runtime (module docstring), write its config, tokenizer and
    `export_report.json` beside it; return the report. `quantize="int8"`: the checked graph is then quantized
    (`hf_srnets.export.quantize`) and its agreement with the float32 model recorded."""
    check_export_paths("export_onnx", model_dir=model_dir, output_dir=output_dir)
    check_opset(opset)
    check_number(tolerance, "tolerance", 0.0, float("inf"), "1e-4")
    check_quantize(quantize)
    onnx, ort = onnx_modules()
    model = load_pretrained_model(model_dir).float().eval()
    check_finite_weights(model, model_dir)
    tokenizer = load_tokenizer(model_dir)
    names = model_inputs(model, tokenizer)
    pytorch_logits(model, sample_batch(model.config, names, TRACE_SHAPE, seed=0), model_dir)
    prepare_output_dir(model_dir, output_dir)
    path = os.path.join(output_dir, ONNX_NAME)
    seconds = trace_to_onnx(model, names, path, opset)
    try:
        onnx.checker.check_model(path)
        max_diff = check_onnx(model, names, path, ort, tolerance)
        quantization = quantized(model, names, path, ort) if quantize == "int8" else None
    except Exception:
        os.remove(path)  # a graph that failed its check is not left to be used
        raise
    save_config_and_tokenizer(model, tokenizer, output_dir)
    report = {
        "format": "onnx",
        "source": model_dir,
        "seconds": round(seconds, 3),
        "file_bytes": files_bytes(output_dir, ONNX_NAME),
        "parameters": sum(p.numel() for p in model.parameters()),
        "inputs": names,
        "outputs": ["logits"],
        "dynamic_axes": {"batch": 0, "sequence": 1},
        "max_abs_diff": max_diff,
        "tolerance": tolerance,
        "checked_shapes": [list(s) for s in CHECK_SHAPES],
        "opset": opset,
        "exporter": f"torch {torch.__version__} torch.onnx.export (TorchScript, dynamo=False)",
        "onnx_version": onnx.__version__,
        "onnxruntime_version": ort.__version__,
        "quantize": quantize,
        **({"quantization": quantization} if quantization else {}),
    }
    write_report(output_dir, report)
    logger.info(f"{path}: {report['file_bytes'] / 1e6:.1f} MB in {seconds:.1f} s, max |Δlogit| {max_diff:.2g}")
    return report


@dataclass
class OnnxOptions:
    """`--format onnx`'s options (`export_onnx`'s keyword arguments)."""

    _argument_group_name: ClassVar[str] = "--format onnx"

    opset: int = field(
        default=DEFAULT_OPSET,
        metadata={
            "help": f"onnx: the ONNX opset, {MIN_OPSET}-{MAX_OPSET} (the attention exports from {MIN_OPSET} on, "
            f"torch's exporter goes up to {MAX_OPSET})."
        },
    )
    tolerance: float = field(
        default=TOLERANCE, metadata={"help": "onnx: the largest |ONNX Runtime logit - PyTorch logit| accepted."}
    )
    quantize: Literal["none", "int8"] = field(
        default="none",
        metadata={
            "help": "onnx: int8 = ONNX Runtime's dynamic quantization of the checked graph (int8 weights per "
            "channel, activations at run time); the report records its label agreement with float32."
        },
    )

    def __post_init__(self) -> None:
        if not self.tolerance > 0:
            raise InputError(f"--tolerance must be positive, got {self.tolerance}.")
        check_opset(self.opset)
        if self.quantize not in QUANTIZE_CHOICES:
            raise InputError(f"--quantize must be one of {', '.join(QUANTIZE_CHOICES)}, got {self.quantize!r}.")


register_export_format(
    ExportFormat(
        name="onnx",
        summary="ONNX Runtime; dense, merged or compact models",
        export=export_onnx,
        require=onnx_modules,
        options=OnnxOptions,
    )
)
