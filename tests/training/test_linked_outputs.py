"""Files a save writes in place (transformers' `save_pretrained`, `torch.save`, safetensors, `Trainer.save_state`)
are never written through a hard or symbolic link found at their path into a file that also lives elsewhere
(issue 50: only hf_srnets' own writes went by rename). Each test places links where a run saves and checks that
the linked files are byte for byte what they were."""

import os

from conftest import tiny_model

from hf_srnets import save_pretrained_model
from hf_srnets.masking import SRNetModel
from hf_srnets.pruning import ThresholdConfig
from hf_srnets.run_files import MODEL_CONFIG_NAME, SAFE_WEIGHTS_NAME, TRAINER_STATE_NAME, TRAINING_ARGS_NAME
from hf_srnets.training.collator import SRNetDataCollator
from hf_srnets.training.trainer import SRNetTrainer

from .helpers import cpu_args, synthetic_nli, tiny_tokenizer

KEPT = b"a user's file that must not change\n"


def _links(tmp_path, directory, hard=(), symbolic=()) -> list:
    """Place a hard link for each name in `hard` and a symbolic one for each in `symbolic` in `directory`, each to
    its own file outside it holding KEPT; return those files."""
    os.makedirs(directory, exist_ok=True)
    tmp_path.mkdir(exist_ok=True)
    outside = []
    for kind, names in (("hard", hard), ("symbolic", symbolic)):
        for name in names:
            original = tmp_path / f"kept_{kind}_{name}"
            original.write_bytes(KEPT)
            (os.link if kind == "hard" else os.symlink)(original, os.path.join(directory, name))
            outside.append(original)
    return outside


def _unchanged(files) -> None:
    for path in files:
        assert path.read_bytes() == KEPT, f"{path} was written through"


def test_save_pretrained_model_replaces_linked_files(tmp_path):
    out = tmp_path / "model"
    outside = _links(tmp_path, out, hard=[MODEL_CONFIG_NAME], symbolic=[SAFE_WEIGHTS_NAME])
    save_pretrained_model(tiny_model(), str(out))
    _unchanged(outside)
    assert not os.path.islink(out / SAFE_WEIGHTS_NAME) and os.stat(out / MODEL_CONFIG_NAME).st_nlink == 1


def test_mask_save_replaces_linked_files(tmp_path):
    # a guard: the installed safetensors and the config's write_json already write by rename; it holds for others
    out = tmp_path / "masks"
    outside = _links(tmp_path, out, hard=["srnet_config.json", "srnet_masks.safetensors"])
    srnet = SRNetModel(tiny_model(), ThresholdConfig(sparsity=0.5))
    srnet.save_pretrained(out)
    _unchanged(outside)
    SRNetModel.from_pretrained(tiny_model(), str(out))  # the masks written are whole


def test_a_run_saves_its_model_state_and_checkpoints_beside_links_without_writing_through(tmp_path):
    """The run's top-level saves (masks, tokenizer, training_args.bin, trainer_state.json) and a checkpoint folder
    a former run left (its optimizer.pt and rng_state.pth hard links, its trainer_state.json a symbolic one)."""
    out = tmp_path / "out"
    top = _links(tmp_path, out, hard=[TRAINING_ARGS_NAME, "tokenizer_config.json"], symbolic=[TRAINER_STATE_NAME])
    checkpoint = _links(tmp_path / "ck", out / "checkpoint-2", hard=["optimizer.pt", "rng_state.pth"],
                        symbolic=[TRAINER_STATE_NAME])  # fmt: skip
    user_file = out / "notes.txt"
    os.link(top[0], user_file)  # a user's own hard link, not a name a run writes: left alone
    tokenizer = tiny_tokenizer(tmp_path)
    train = synthetic_nli(tokenizer, n=16)
    srnet = SRNetModel(tiny_model("bert"), ThresholdConfig(sparsity=0.5, threshold_update_interval=1))
    args = cpu_args(out, max_steps=2, save_strategy="steps", save_steps=2, mask_learning_rate=0.05)
    trainer = SRNetTrainer(model=srnet, args=args, train_dataset=train, data_collator=SRNetDataCollator(tokenizer),
                           processing_class=tokenizer)  # fmt: skip
    trainer.train()
    trainer.save_model()
    trainer.save_state()
    _unchanged(top + checkpoint)
    assert os.path.samefile(user_file, top[0])
    assert os.path.getsize(out / "checkpoint-2" / "optimizer.pt") > len(KEPT)
    assert os.path.getsize(out / TRAINER_STATE_NAME) > len(KEPT)


def test_the_exports_config_replaces_a_linked_file(tmp_path):
    from hf_srnets.export.files import save_config_and_tokenizer

    out = tmp_path / "onnx"
    outside = _links(tmp_path, out, hard=[MODEL_CONFIG_NAME])
    save_config_and_tokenizer(tiny_model(), None, str(out))
    _unchanged(outside)


def test_save_merged_replaces_a_symlinked_merged_folder(tmp_path):
    """A `merged` link to another folder: the merged model is written into the output dir, the other folder is
    untouched (before, the model's files went into the link's target, or rmtree refused the link)."""
    from hf_srnets.publish.hub import save_merged

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "config.json").write_bytes(KEPT)
    out = tmp_path / "out"
    out.mkdir()
    os.symlink(elsewhere, out / "merged")
    merged = save_merged(SRNetModel(tiny_model(), ThresholdConfig(sparsity=0.5)), str(out))
    assert [p.name for p in elsewhere.iterdir()] == ["config.json"] and (elsewhere / "config.json").read_bytes() == KEPT
    assert not os.path.islink(merged) and os.path.isfile(os.path.join(merged, MODEL_CONFIG_NAME))
