"""One `run_extract_ticket.py` run from its parsed arguments (`hf_srnets.arguments.extract_ticket_arguments`),
`run_extract_ticket`: the search checked (`pruning.l0.read_search_dir`), then, holding the output dir's lock, the
tickets extracted earlier into it checked (`earlier_tickets`: the same search and scope, or replaced with
`--overwrite_output_dir`), one ticket per sparsity written (`pruning.l0.write_ticket`) and `tickets.json`
rewritten atomically (`extract_tickets`)."""

from __future__ import annotations

import logging
import os
import shutil

from ..arguments.extract_ticket_arguments import ExtractTicketArguments
from ..errors import InputError
from ..pruning.l0 import read_search_dir, write_ticket
from ..run_files import TICKETS_NAME, read_json_object, write_json
from ..training.output_dir import acquire_lock

logger = logging.getLogger("run_extract_ticket")


def ticket_dir_name(sparsity: float) -> str:
    """The folder of the ticket of `sparsity` under --output_dir: `sparsity_0.30`, or every digit past two."""
    return f"sparsity_{sparsity:.2f}" if round(sparsity, 2) == sparsity else f"sparsity_{sparsity:g}"


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
    check_same_search(args, earlier, fix)
    return earlier["tickets"]


def check_same_search(args: ExtractTicketArguments, earlier: dict, fix: str) -> None:
    """The earlier record (`tickets.json`) comes from `--search_dir`, and its tickets of the requested sparsities
    were ranked with `--scope`; else an `InputError` ending in `fix`."""
    if os.path.abspath(earlier["search_dir"]) != os.path.abspath(args.search_dir):
        raise InputError(f"{args.output_dir} holds tickets of another search ({earlier['search_dir']}): {fix}.")
    clash = [name for s in args.sparsity if (name := ticket_dir_name(s)) in earlier["tickets"]]
    other_scope = [name for name in clash if earlier["tickets"][name]["scope"] != args.scope]
    if other_scope:
        raise InputError(f"{args.output_dir} holds {other_scope} ranked with another --scope: {fix}.")


def run_extract_ticket(args: ExtractTicketArguments) -> dict[str, dict]:
    """Write one ticket per sparsity; return their sparsity reports, which `<output_dir>/tickets.json` records
    together with the tickets extracted earlier from the same search."""
    read_search_dir(args.search_dir)  # refuse a non-l0 or ticket directory before writing anything
    lock = acquire_lock(args.output_dir)  # one writer per dir: a second extraction into it is refused
    try:
        return extract_tickets(args)
    finally:
        lock.release()


def extract_tickets(args: ExtractTicketArguments) -> dict[str, dict]:
    """`run_extract_ticket` under the output dir's lock: the tickets, then `tickets.json` (atomically)."""
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
