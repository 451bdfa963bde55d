"""Gemma (`GemmaForSequenceClassification`: GELU-gated MLP, scaled embeddings; grouped-query attention)
as a first-class target: mask search with PoE, merged == masked == compact, reload, card."""

from transformers import GemmaConfig

from families.helpers import DECODER, check_run, run_search, save_checkpoint


def test_gemma_mask_search_poe_compact_and_reload(data_dir, tmp_path):
    checkpoint = save_checkpoint(GemmaConfig(**DECODER, pad_token_id=0), tmp_path / "ckpt")
    assert GemmaConfig.from_pretrained(checkpoint).model_type == "gemma"
    run_search(checkpoint, data_dir, tmp_path / "out")
    check_run(checkpoint, tmp_path / "out", heads_per_unit=2)
