"""Experiments made of several runs: run output folders and their rules (`output_dir`), sweeps over methods,
sparsities and seeds (`sweep`) and RMC's stage 1, IMP runs whose losses give each example's difficulty
(`sample_difficulty`)."""
