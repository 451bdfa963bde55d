"""Resources shared by packages that do not import each other: word vectors (the bias model's features and the
attacks' synonym swaps), the BibTeX of the methods (losses, objectives and cards), the one rule for "Hub id or
local path?" (`model_location.is_local_path`), `Auto*.from_pretrained` without a model's own code
(`auto_loading`), and what /proc/cpuinfo says of the CPU (`cpu.cpuinfo_values`)."""
