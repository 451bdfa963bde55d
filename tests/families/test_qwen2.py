"""Qwen2 (`Qwen2ForSequenceClassification`: biases on Q, K, V; grouped-query attention)
as a first-class target: mask search with PoE, merged == masked == compact, reload, card."""

from transformers import Qwen2Config

from families.helpers import DECODER, check_run, run_search, save_checkpoint


def test_qwen2_mask_search_poe_compact_and_reload(data_dir, tmp_path):
    checkpoint = save_checkpoint(Qwen2Config(**DECODER, pad_token_id=0), tmp_path / "ckpt")
    assert Qwen2Config.from_pretrained(checkpoint).model_type == "qwen2"
    run_search(checkpoint, data_dir, tmp_path / "out")
    check_run(checkpoint, tmp_path / "out", heads_per_unit=2)
