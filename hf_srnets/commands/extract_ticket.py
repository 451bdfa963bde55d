"""Extract robust tickets of any sparsity from one `--pruning l0` search, without training (Robust Tickets §3.3).

    python run_glue_sparse.py ... --pruning l0 --l0_lambda 0.5 --output_dir search_sst2
    python run_extract_ticket.py search_sst2 --sparsity 0.1 0.3 0.5 --output_dir tickets_sst2
    python run_glue_sparse.py ... --pruning none --mask_from tickets_sst2/sparsity_0.30 --output_dir retrain_30

Ranks the search's log α and prunes the smallest: exactly ⌊s·N⌋ of all N weights of θ_pr (`--scope global`, the
paper's setting) or ⌊s·n_i⌋ of each matrix (`--scope local`). Writes `<output_dir>/sparsity_<s>/` (the packed
masks and `srnet_config.json`, recording the source directory, sparsity and scope) for every s, and logs each
ticket's actual sparsity. The extraction holds the output dir's lock (the one training runs take): a second
extraction into the same dir is refused while the first writes, and `tickets.json` is written atomically.
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
from dataclasses import dataclass, field
from typing import Literal

from transformers import HfArgumentParser

from ..cli.parser import parse_dataclasses
from ..errors import InputError, MissingInputError, run_script
from ..pruning.l0 import read_search_dir, write_ticket
from ..run_files import SRNET_CONFIG_NAME, TICKETS_NAME, read_json_object, write_json
from ..training.output_dir import acquire_lock

logger = logging.getLogger("run_extract_ticket")


@dataclass
class ExtractTicketArguments:
    """The search to extract from, the sparsities and the scope of the ranking, where to write the tickets."""

    search_dir: str = field(metadata={"help": "Output directory of a --pruning l0 run (also the first argument)."})
    sparsity: list[float] = field(metadata={"help": "Ticket sparsities, e.g. --sparsity 0.1 0.3 0.5."})
    output_dir: str = field(metadata={"help": "Tickets are written to <output_dir>/sparsity_<s>/."})
    scope: Literal["global", "local"] = field(
        default="global", metadata={"help": "global (rank log α over all of θ_pr, the paper) or local (per matrix)."}
    )
    overwrite_output_dir: bool = field(
        default=False,
        metadata={"help": "Replace the tickets of another search or scope in --output_dir (default: refuse)."},
    )

    def __post_init__(self) -> None:
        if not os.path.isdir(self.search_dir):
            raise MissingInputError(
                f"search dir {self.search_dir} does not exist: give the --output_dir of a --pruning l0 run"
            )
        if not os.path.isfile(os.path.join(self.search_dir, SRNET_CONFIG_NAME)):
            raise InputError(
                f"{self.search_dir} holds no {SRNET_CONFIG_NAME}, so it is no search: give the --output_dir of a "
                "--pruning l0 run"
            )
        if self.scope not in ("global", "local"):
            raise InputError(f"--scope must be global or local, got {self.scope!r}.")
        bad = [s for s in self.sparsity if not 0.0 <= s < 1.0]
        if bad:
            raise InputError(f"--sparsity values must be in [0, 1), got {bad}: e.g. --sparsity 0.1 0.3 0.5.")


def ticket_dir_name(sparsity: float) -> str:
    return f"sparsity_{sparsity:.2f}" if round(sparsity, 2) == sparsity else f"sparsity_{sparsity:g}"


def parse_args(argv: list[str]) -> ExtractTicketArguments:
    """HfArgumentParser over `ExtractTicketArguments`; a leading argument without `--` is the search directory."""
    if argv and not argv[0].startswith("-"):
        argv = ["--search_dir", *argv]
    (args,) = parse_dataclasses(HfArgumentParser(ExtractTicketArguments), argv)
    return args


def read_tickets_record(record: str) -> dict:
    """The `tickets.json` at `record`: an `InputError` naming it when it is empty, cut or not a tickets record."""
    earlier = read_json_object(record)
    if (
        earlier is None
        or not isinstance(earlier.get("tickets"), dict)
        or not isinstance(earlier.get("search_dir"), str)
    ):
        raise InputError(
            f"{record} is empty, cut or not a record of tickets (search_dir, tickets): give --overwrite_output_dir "
            f"true to extract the tickets again in {os.path.dirname(record)}, or use another --output_dir"
        )
    return earlier


def remove_earlier_tickets(record: str) -> None:
    """--overwrite_output_dir: delete the ticket folders `record` (a tickets.json) lists, and the record (a damaged
    record is removed alone)."""
    if not os.path.isfile(record):
        return
    try:
        names = read_tickets_record(record)["tickets"]
    except InputError:
        names = {}
    for name in names:
        shutil.rmtree(os.path.join(os.path.dirname(record), name), ignore_errors=True)
    os.remove(record)


def earlier_tickets(args: ExtractTicketArguments) -> dict[str, dict]:
    """The tickets `tickets.json` in --output_dir records, if they come from the same search; refuse a folder that
    holds other files, or tickets of another search or scope, unless --overwrite_output_dir."""
    record = os.path.join(args.output_dir, TICKETS_NAME)
    if args.overwrite_output_dir:
        remove_earlier_tickets(record)
        return {}
    if not os.path.isdir(args.output_dir) or not [n for n in os.listdir(args.output_dir) if not n.startswith(".")]:
        return {}  # hidden entries (the lock) do not count
    fix = "use another --output_dir, or --overwrite_output_dir true to replace them"
    if not os.path.isfile(record):
        raise InputError(f"--output_dir {args.output_dir} is not empty and holds no {TICKETS_NAME}: {fix}.")
    earlier = read_tickets_record(record)
    if os.path.abspath(earlier["search_dir"]) != os.path.abspath(args.search_dir):
        raise InputError(f"{args.output_dir} holds tickets of another search ({earlier['search_dir']}): {fix}.")
    clash = [name for s in args.sparsity if (name := ticket_dir_name(s)) in earlier["tickets"]]
    other_scope = [name for name in clash if earlier["tickets"][name]["scope"] != args.scope]
    if other_scope:
        raise InputError(f"{args.output_dir} holds {other_scope} ranked with another --scope: {fix}.")
    return earlier["tickets"]


def main(argv: list[str] | None = None) -> dict[str, dict]:
    """Write one ticket per sparsity; return their sparsity reports, which `<output_dir>/tickets.json` records
    together with the tickets extracted earlier from the same search."""
    args = parse_args(list(sys.argv[1:] if argv is None else argv))
    read_search_dir(args.search_dir)  # refuse a non-l0 or ticket directory before writing anything
    lock = acquire_lock(args.output_dir)  # one writer per dir: a second extraction into it is refused
    try:
        return extract_tickets(args)
    finally:
        lock.release()


def extract_tickets(args: ExtractTicketArguments) -> dict[str, dict]:
    """`main` under the output dir's lock: the tickets, then `tickets.json` (atomically)."""
    earlier = earlier_tickets(args)
    reports = {}
    for sparsity in args.sparsity:
        name = ticket_dir_name(sparsity)
        report = write_ticket(args.search_dir, os.path.join(args.output_dir, name), sparsity, args.scope)
        logger.info(f"{name}: requested {sparsity:.4f}, actual {report['sparsity']:.4f} ({args.scope})")
        reports[name] = {"requested_sparsity": sparsity, **report}
    record = {"search_dir": args.search_dir, "tickets": {**earlier, **reports}}
    write_json(os.path.join(args.output_dir, TICKETS_NAME), record, indent=2)
    return reports


def script_main() -> None:
    """`main()` as `run_extract_ticket.py` and `python -m hf_srnets.commands.extract_ticket` run it, logging at INFO."""
    logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s", level=logging.INFO)
    main()


if __name__ == "__main__":
    raise SystemExit(run_script(script_main))
