"""Llama (`LlamaForSequenceClassification`, grouped-query attention: 4 query heads on 2 key/value heads) as a
first-class target: mask search with PoE, merged == masked == compact, reload, card; a tokenizer without a pad token
pads with its end-of-sequence token."""

from transformers import AutoConfig, LlamaConfig

from families.helpers import DECODER, check_run, run_search, save_checkpoint


def test_llama_mask_search_poe_compact_and_reload(data_dir, tmp_path):
    checkpoint = save_checkpoint(LlamaConfig(**DECODER, pad_token_id=None), tmp_path / "ckpt", pad=False)
    run_search(checkpoint, data_dir, tmp_path / "out")
    check_run(checkpoint, tmp_path / "out", heads_per_unit=2)
    merged = AutoConfig.from_pretrained(tmp_path / "out" / "merged")
    assert merged.pad_token_id == 3  # [SEP], the end-of-sequence token it pads with
