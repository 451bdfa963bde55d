"""One run of `run_glue_sparse.py` as phases, in a prepared output dir (`run.run`): `data` (splits, tokens, and the
id-keyed p_b, p_t and d_i columns of `columns`) -> `model` (the classifier, `SRNetModel`, early start, head pruning)
-> `SRNetTrainer` -> train -> evaluate -> `outputs` (results, sparsity report, card, checkpoints, Hub).

It sits above `arguments` (it takes a parsed `RunArguments`) and below `jobs` (the other single commands' work),
`experiments` (sweeps and RMC stage 1 read data with its phases) and `commands` (the scripts' `main`)."""

from .run import files_read, run

__all__ = ["files_read", "run"]
