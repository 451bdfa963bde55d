"""Qwen3 (`Qwen3ForSequenceClassification`: per-head RMSNorm of Q and K; grouped-query attention)
as a first-class target: mask search with PoE, merged == masked == compact, reload, card."""

from transformers import Qwen3Config

from families.helpers import DECODER, check_run, run_search, save_checkpoint


def test_qwen3_mask_search_poe_compact_and_reload(data_dir, tmp_path):
    checkpoint = save_checkpoint(Qwen3Config(**DECODER, pad_token_id=0), tmp_path / "ckpt")
    assert Qwen3Config.from_pretrained(checkpoint).model_type == "qwen3"
    run_search(checkpoint, data_dir, tmp_path / "out")
    check_run(checkpoint, tmp_path / "out", heads_per_unit=2)
