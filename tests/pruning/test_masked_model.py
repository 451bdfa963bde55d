"""The seam between pruning methods and `SRNetModel`: `MaskedModel` lists what hooks and callbacks may use.

Both sides are checked: `SRNetModel` has every member of the protocol (methods with the same signature), and no
module of `hf_srnets/pruning/` uses a member of an `srnet` (a hook's argument, or a controller's `self.model`) that
the protocol does not list, nor does the protocol list one that no module uses. Each check is shown able to fail.
"""

from __future__ import annotations

import ast
import inspect
import typing
from pathlib import Path

from conftest import tiny_model

from hf_srnets.masking import SRNetModel
from hf_srnets.pruning import MaskedModel, ThresholdConfig

PRUNING_DIR = Path(__file__).resolve().parents[2] / "hf_srnets" / "pruning"
# written out here, so that adding or dropping a member of the protocol is a decision this test records
MEMBERS = {
    "base_model",
    "binary_masks",
    "fixed_masks",
    "is_search",
    "masked_layers",
    "masked_layers_scores",
    "record_fingerprint",
    "set_masks",
    "sparsity_report",
    "srnet_config",
    "train_weights_with_fixed_masks",
    "zero_pruned_weights",
}


def protocol_members(protocol: type) -> set[str]:
    """The public names a protocol class declares."""
    return {name for name in vars(protocol) if not name.startswith("_")}


def signature_mismatches(protocol: type, cls: type) -> list[str]:
    """`name: why` for each method of `protocol` that `cls` lacks or declares with other parameters or return type."""

    def shape(function: typing.Callable) -> tuple:
        signature = inspect.signature(function)
        params = [(p.name, p.kind, p.default, p.annotation) for p in signature.parameters.values()]
        return params, signature.return_annotation

    out = []
    for name in sorted(protocol_members(protocol)):
        declared = getattr(protocol, name)
        if isinstance(declared, property):  # a data member: checked on an instance
            continue
        found = getattr(cls, name, None)
        if found is None:
            out.append(f"{name}: missing")
        elif shape(found) != shape(declared):
            out.append(f"{name}: {inspect.signature(found)} != {inspect.signature(declared)}")
    return out


def srnet_uses(source: str) -> list[tuple[int, str]]:
    """(line, member) for each attribute read of a name `srnet` or of `self.model` (a controller's srnet)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Attribute):
            continue
        owner = node.value
        is_srnet = isinstance(owner, ast.Name) and owner.id == "srnet"
        is_model = (
            isinstance(owner, ast.Attribute) and owner.attr == "model" and getattr(owner.value, "id", "") == "self"
        )
        if is_srnet or is_model:
            out.append((node.lineno, node.attr))
    return sorted(out)


def pruning_uses() -> dict[str, set[str]]:
    """Member -> the files of `hf_srnets/pruning/` that use it on an srnet."""
    uses: dict[str, set[str]] = {}
    for path in sorted(PRUNING_DIR.rglob("*.py")):
        for _, member in srnet_uses(path.read_text(encoding="utf-8")):
            uses.setdefault(member, set()).add(path.relative_to(PRUNING_DIR).as_posix())
    return uses


def test_the_protocol_lists_the_members_written_here():
    assert protocol_members(MaskedModel) == MEMBERS


def test_srnet_model_has_every_method_of_the_protocol_with_its_signature():
    assert signature_mismatches(MaskedModel, SRNetModel) == []


def test_srnet_model_has_every_data_member_of_the_protocol_with_its_type():
    srnet = SRNetModel(tiny_model("bert"), ThresholdConfig(sparsity=0.5))
    data = {name for name in MEMBERS if isinstance(getattr(MaskedModel, name), property)}
    assert data == {"base_model", "srnet_config", "is_search", "fixed_masks"}
    for name in sorted(data):
        expected = typing.get_type_hints(getattr(MaskedModel, name).fget)["return"]
        assert isinstance(getattr(srnet, name), expected), name
    assert isinstance(srnet, MaskedModel)


def test_the_signature_check_finds_a_renamed_or_changed_member():
    class Renamed:
        def set_masks(self, mask: dict[str, typing.Any]) -> None:  # a renamed parameter
            pass

        def sparsity_report(self) -> dict[str, typing.Any]:  # a parameter less
            return {}

    found = signature_mismatches(MaskedModel, Renamed)
    assert "record_fingerprint: missing" in found
    assert any(line.startswith("set_masks: ") for line in found)
    assert any(line.startswith("sparsity_report: ") for line in found)
    assert len(found) == len(MEMBERS) - 4  # every method: 8, none of them right


def test_pruning_uses_exactly_the_members_of_the_protocol():
    uses = pruning_uses()
    foreign = {member: files for member, files in uses.items() if member not in MEMBERS}
    assert not foreign, f"members of an srnet outside MaskedModel (add them to it or stop using them): {foreign}"
    assert set(uses) == MEMBERS, f"members of MaskedModel no pruning module uses: {sorted(MEMBERS - set(uses))}"


def test_the_scan_finds_srnet_and_controller_uses():
    source = (
        "def hook(self, srnet):\n"
        "    srnet.masked_layers()\n"
        "    srnet.method.config\n"
        "    self.model.base_model.train()\n"
        "    model.trainer\n"  # not an srnet: any other name is left alone
        "    self.model.trainer\n"
    )
    assert srnet_uses(source) == [(2, "masked_layers"), (3, "method"), (4, "base_model"), (6, "trainer")]
    foreign = [member for _, member in srnet_uses(source) if member not in MEMBERS]
    assert foreign == ["method", "trainer"]
