"""One refusal of duplicates for every registry of plugins (pruning methods, step objectives, losses, evaluators,
attack recipes): a registry is a plain dict, name -> the registered thing, filled by its `register_*` decorator
through `register`.

Registering the same object again (a module imported twice, a test that registers in a fixture) changes nothing;
another object under a taken name is refused with one message whatever the registry, naming what holds the name.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import TypeVar

T = TypeVar("T")


def describe(item: object) -> str:
    """`module.QualifiedName` of a class or function (what a user greps for), a string as it is (a reserved name's
    reason), `repr` of anything else."""
    if isinstance(item, str):
        return item
    qualname = getattr(item, "__qualname__", None)
    module = getattr(item, "__module__", None)
    if isinstance(qualname, str) and isinstance(module, str):
        return f"{module}.{qualname}"
    return repr(item)


def register(registry: MutableMapping[str, T], name: str, item: T, kind: str) -> T:
    """Put `item` in `registry` under `name` and return it; a no-op if `item` itself is there already.

    Raises `ValueError` if another object holds `name`: "A <kind> named '<name>' is already registered (<it>);
    give this one another name." `kind` is what the registry holds, in words
    ("pruning method", "loss", ...).
    """
    if name in registry:
        existing = registry[name]
        if existing is item:
            return item
        article = "An" if kind[:1].lower() in "aeiou" else "A"
        raise ValueError(
            f"{article} {kind} named {name!r} is already registered ({describe(existing)}); give this one another name."
        )
    registry[name] = item
    return item
