"""The work of the commands that are one job each, other than `run_glue_sparse.py` (whose phases are
`hf_srnets.runner`): `attack.run_attack` (`run_attack.py`), `bias_model.run_bias_model` (`run_bias_model.py`),
`export.run_export` (`run_export.py`) and `extract_ticket.run_extract_ticket` (`run_extract_ticket.py`). Each takes
its command's parsed arguments (`hf_srnets.arguments.<command>_arguments`).

It sits above `runner` (an attack reads a run's position limit from it) and beside `experiments` (the commands made
of several runs); `commands` holds each script's `main`."""
