"""What the compact tests share: padded inputs, livelier weights, logits and parameter counts of tiny models."""

import torch


def padded_inputs(seed: int = 0, shape: tuple[int, int] = (3, 7), cuts: dict[int, int] | None = None) -> dict:
    """Random token ids of `shape`; row r is padded from position `cuts[r]` on (attention mask 0)."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, 90, shape, generator=g)
    mask = torch.ones_like(ids)
    for row, start in (cuts or {}).items():
        mask[row, start:] = 0
    return {"input_ids": ids, "attention_mask": mask}


def lively(model, seed: int = 0):
    """Weights of std 0.3 instead of the init's 0.02, so that one unit or head visibly moves the logits."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.3)
    return model


def logits(model, batch: dict) -> torch.Tensor:
    with torch.no_grad():
        return model(**batch).logits


def num_params(model) -> int:
    return sum(p.numel() for p in model.parameters())
