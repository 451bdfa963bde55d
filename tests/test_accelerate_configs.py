"""Every shipped accelerate config parses with accelerate's own loader; the DeepSpeed ones are ZeRO stage 2 in fp16
and stage 3 in bf16, each with the Trainer's `--deepspeed` file of the same stage beside it (the files the CPU runs of
tests/training/test_deepspeed.py pass); the FSDP one FSDP2 with full sharding."""

import json
from pathlib import Path

import pytest
from accelerate.commands.config.config_args import ClusterConfig, load_config_from_file
from accelerate.utils import DistributedType

CONFIGS = sorted((Path(__file__).resolve().parents[1] / "accelerate_configs").glob("*.yaml"))


def test_the_folder_has_the_documented_configs():
    names = {path.name for path in CONFIGS}
    expected = {"cpu.yaml", "single_gpu.yaml", "multi_gpu.yaml", "single_gpu_fp16.yaml", "multi_gpu_fp16.yaml"}
    assert expected | {"deepspeed_zero2.yaml", "deepspeed_zero3.yaml", "fsdp.yaml"} <= names
    readme = (CONFIGS[0].parent / "README.md").read_text(encoding="utf-8")
    assert all(name in readme for name in names)


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_config_parses_with_accelerate(path):
    config = load_config_from_file(str(path))  # raises on unknown keys or values accelerate does not accept
    assert isinstance(config, ClusterConfig)
    assert config.num_machines == 1 and config.num_processes >= 1
    assert config.mixed_precision in ("no", "fp16", "bf16")
    assert config.use_cpu == (path.name == "cpu.yaml")
    if "fp16" in path.name:
        assert config.mixed_precision == "fp16"


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_each_config_sets_the_machine_its_name_says(path):
    """multi_gpu*: DDP over several processes; single_gpu* and cpu: one process; deepspeed_zero2: DeepSpeed; fsdp:
    FSDP."""
    config = load_config_from_file(str(path))
    expected = {
        "multi": DistributedType.MULTI_GPU,
        "deepspeed": DistributedType.DEEPSPEED,
        "fsdp": DistributedType.FSDP,
    }
    assert config.distributed_type == expected.get(path.stem.split("_")[0], DistributedType.NO)
    assert (config.num_processes > 1) == (config.distributed_type != DistributedType.NO)


def test_deepspeed_config_is_zero_stage_2_fp16():
    config = load_config_from_file(str(CONFIGS[0].parent / "deepspeed_zero2.yaml"))
    assert config.distributed_type == DistributedType.DEEPSPEED
    assert config.deepspeed_config["zero_stage"] == 2
    assert config.mixed_precision == "fp16"  # V100-class cards have no bf16


def test_deepspeed_zero_3_config_is_stage_3_bf16_loading_whole_models():
    config = load_config_from_file(str(CONFIGS[0].parent / "deepspeed_zero3.yaml"))
    assert config.deepspeed_config["zero_stage"] == 3 and config.mixed_precision == "bf16"
    assert config.deepspeed_config["zero3_init_flag"] is False  # masked layers are built from whole weights


@pytest.mark.parametrize("stage", [2, 3])
def test_each_deepspeed_config_has_a_trainer_file_of_its_stage(stage):
    folder = CONFIGS[0].parent
    trainer_config = json.loads((folder / f"deepspeed_zero{stage}.json").read_text())
    assert trainer_config["zero_optimization"]["stage"] == stage
    assert load_config_from_file(str(folder / f"deepspeed_zero{stage}.yaml")).deepspeed_config["zero_stage"] == stage
    assert f"deepspeed_zero{stage}.json" in (folder / "README.md").read_text(encoding="utf-8")


def test_fsdp_config_is_fsdp2_full_shard_by_transformer_layers():
    """FSDP2: accelerate's default FSDP1 does not run on CPU processes (`training.fsdp`)."""
    config = load_config_from_file(str(CONFIGS[0].parent / "fsdp.yaml"))
    assert config.fsdp_config["fsdp_version"] == 2
    assert config.fsdp_config["fsdp_reshard_after_forward"] is True
    assert config.fsdp_config["fsdp_auto_wrap_policy"] == "TRANSFORMER_BASED_WRAP"
