"""Every plugin registry refuses a second class under a taken name with the same words, keeps the first, and takes
the same class twice without complaint (`hf_srnets.registry.register`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from hf_srnets.attack.base import ATTACK_RECIPES, AttackRecipe, register_attack_recipe
from hf_srnets.evaluation.base import EVALUATORS, Evaluator, register_evaluator
from hf_srnets.losses import LOSSES, DebiasingLoss, register_loss
from hf_srnets.objectives import OBJECTIVES, StepObjective, register_objective
from hf_srnets.pruning import (
    PRUNING_ALIASES,
    PRUNING_METHODS,
    MaskedLinear,
    PruningConfig,
    PruningMethod,
    register_pruning_method,
    unregister_pruning_method,
)
from hf_srnets.registry import register

NAME = "toy_duplicate"


@dataclass(frozen=True)
class Registry:
    kind: str  # the words of the error message
    base: type
    register: Callable[[type], type]
    registry: dict
    attributes: tuple[tuple[str, object], ...] = ()


REGISTRIES = [
    Registry(
        "pruning method",
        PruningMethod,
        register_pruning_method,
        PRUNING_METHODS,
        (("config_class", PruningConfig), ("layer_class", MaskedLinear)),
    ),
    Registry("step objective", StepObjective, register_objective, OBJECTIVES),
    Registry("loss", DebiasingLoss, register_loss, LOSSES),
    Registry("evaluator", Evaluator, register_evaluator, EVALUATORS),
    Registry("attack recipe", AttackRecipe, register_attack_recipe, ATTACK_RECIPES),
]

ARTICLES = {"pruning method": "A", "step objective": "A", "loss": "A", "evaluator": "An", "attack recipe": "An"}


def plugin(registry: Registry, qualname: str, name: str = NAME, **more: object) -> type:
    """A subclass of the registry's base class named `name`, as if defined in a module `toy_plugins`."""
    namespace = {"name": name, "__module__": "toy_plugins", "__qualname__": qualname, **dict(registry.attributes)}
    return type(qualname, (registry.base,), {**namespace, **more})


def unregister(registry: Registry, name: str = NAME) -> None:
    if registry.register is register_pruning_method:
        if name in PRUNING_METHODS:
            unregister_pruning_method(name)
    else:
        registry.registry.pop(name, None)


@pytest.mark.parametrize("registry", REGISTRIES, ids=[r.kind for r in REGISTRIES])
def test_every_registry_refuses_a_duplicate_with_the_same_words_and_takes_the_same_class_twice(registry):
    assert NAME not in registry.registry
    first, second = plugin(registry, "First"), plugin(registry, "Second")
    try:
        assert registry.register(first) is first
        assert registry.register(first) is first  # a module imported twice: nothing changes
        with pytest.raises(ValueError) as err:
            registry.register(second)
        assert str(err.value) == (
            f"{ARTICLES[registry.kind]} {registry.kind} named 'toy_duplicate' is already registered "
            "(toy_plugins.First); give this one another name."
        )
        assert registry.registry[NAME] is first  # the first one stays
    finally:
        unregister(registry)
    assert NAME not in registry.registry


def test_a_pruning_method_whose_alias_is_taken_is_refused_whole():
    pruning = REGISTRIES[0]
    imp_holder = PRUNING_METHODS[PRUNING_ALIASES["imp"][0]]
    toy = plugin(pruning, "Toy", aliases={"toy_alias": {}, "imp": {}})
    try:
        with pytest.raises(ValueError) as err:
            register_pruning_method(toy)
        expected = f"A pruning method named 'imp' is already registered ({imp_holder.__module__}."
        assert str(err.value).startswith(expected)
        assert NAME not in PRUNING_METHODS and "toy_alias" not in PRUNING_ALIASES  # nothing half-registered
        with pytest.raises(ValueError, match=r"named 'none' is already registered \(no pruning, --pruning none\)"):
            register_pruning_method(plugin(pruning, "NoneToy", name="none"))
        with_alias = plugin(pruning, "Aliased", aliases={"toy_alias": {"sparsity": 0.3}})
        assert register_pruning_method(with_alias) is with_alias
        assert register_pruning_method(with_alias) is with_alias
        assert PRUNING_ALIASES["toy_alias"] == (NAME, {"sparsity": 0.3})
    finally:
        unregister(pruning)
    assert "toy_alias" not in PRUNING_ALIASES


def test_register_keeps_the_first_and_names_a_reserved_holder_as_given():
    registry = {"taken": "reserved for the tests"}
    item = object()
    assert register(registry, "free", item, "thing") is item and registry["free"] is item
    with pytest.raises(ValueError, match=r"^A thing named 'taken' is already registered \(reserved for the tests\);"):
        register(registry, "taken", item, "thing")
    assert registry == {"taken": "reserved for the tests", "free": item}
