"""The scripts' commands, one module each with its `main()` (arguments, docstring shown by `--help`): the top floor of
the package. `run_<name>.py` beside the package and `python -m hf_srnets.commands.<name>` run the same command;
children of sweeps and RMC stage 1 start `python -m hf_srnets.commands.glue_sparse`, so they work from an installed
package."""
