"""ModernBERT (`ModernBertForSequenceClassification`: Q, K, V fused in `attn.Wqkv`, the GLU's input and gate halves
fused in `mlp.Wi`) as a first-class target: a unit spans every block of a fused matrix; mask search with PoE,
merged == masked == compact, reload, card."""

from transformers import ModernBertConfig

from families.helpers import check_run, run_search, save_checkpoint

TINY = {"vocab_size": 100, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
        "intermediate_size": 48, "max_position_embeddings": 128, "pad_token_id": 0, "bos_token_id": 2,
        "eos_token_id": 3, "cls_token_id": 2, "sep_token_id": 3}  # fmt: skip


def test_modernbert_mask_search_poe_compact_and_reload(data_dir, tmp_path):
    checkpoint = save_checkpoint(ModernBertConfig(**TINY), tmp_path / "ckpt")
    run_search(checkpoint, data_dir, tmp_path / "out")
    # 4 heads of 8 (each its own unit) and 48 GLU units per layer: 2 heads and 24 units go
    check_run(checkpoint, tmp_path / "out", heads_per_unit=1, units=4,
              matrices=("attn.Wqkv", "attn.Wo", "mlp.Wi", "mlp.Wo"))  # fmt: skip
