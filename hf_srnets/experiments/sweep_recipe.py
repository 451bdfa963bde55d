"""The schema of a sweep recipe (`run_sweep.py recipe.yaml`): its keys and their types, checked before any run.

A recipe is a mapping of `RECIPE_FIELDS`; `common` and each entry of `methods` map run_glue_sparse.py options to
values, and a method may also hold `METHOD_FIELDS` (`sparsities`, narrowing the grid for it). An unknown key (with
the nearest valid name), a repeated key, a value of the wrong type, or an option the sweep sets itself (`sparsity`,
`seed`, `output_dir`) is an `InputError` naming the file and the key, raised before any run starts; the run options
are checked by the run's own parser (`hf_srnets.arguments`), so a misspelt option of the fourth method does not wait for
the first three methods' runs to be found.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..arguments.glue_sparse_arguments import build_parser
from ..arguments.parser import SRNetArgumentParser, load_config_file, unknown_key_error
from ..errors import InputError
from ..run_files import check_file_name


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# what a value must be -> its test
KINDS = {
    "a string": lambda value: isinstance(value, str),
    "a number": _is_number,
    "an integer": _is_integer,
    "true or false": lambda value: isinstance(value, bool),
    "a mapping": lambda value: isinstance(value, dict),
}


@dataclass(frozen=True)
class RecipeField:
    """A key of a recipe: the kind of its value (`KINDS`), or of each item when `many` (a string, a number or an
    integer); an example value."""

    kind: str
    example: str
    many: bool = False

    def words(self) -> str:
        """What the value must be, in words: `a list of numbers, e.g. [0.3, 0.5]`."""
        what = f"a list of {self.kind.removeprefix('an ').removeprefix('a ')}s" if self.many else self.kind
        return f"{what}, e.g. {self.example}"


RECIPE_FIELDS = {
    "output_dir": RecipeField("a string", "outputs/sweep_mnli"),
    "sparsities": RecipeField("a number", "[0.3, 0.5, 0.7]", many=True),
    "seeds": RecipeField("an integer", "[1, 2, 3]", many=True),
    "metrics": RecipeField("a string", "[eval_mnli_accuracy, eval_hans_accuracy]", many=True),
    "common": RecipeField("a mapping", "{task: mnli, do_train: true}"),
    "methods": RecipeField("a mapping", "{full_ce: {pruning: none, loss: ce}}"),
    "reference": RecipeField("a string", "full_ce"),
    "baseline": RecipeField("a string", "full_ce"),
    "checkpoint_steps": RecipeField("an integer", "500"),
    "keep_checkpoints": RecipeField("true or false", "true"),
}
OPTIONAL = ("reference", "baseline", "checkpoint_steps", "keep_checkpoints")  # null: not given
# a method's own keys besides run options; `argv` (run_glue_sparse.py arguments as given) is a recipe-free sweep's
METHOD_FIELDS = {
    "sparsities": RecipeField("a number", "[0.5]", many=True),
    "argv": RecipeField("a string", '["--task", "mnli"]', many=True),
}
OPTIONS_HELP = "see run_glue_sparse.py --help for the options"
SET_BY_SWEEP = {"sparsity": "sparsities", "seed": "seeds", "output_dir": "output_dir"}


def check_value(value: Any, field: RecipeField, where: str) -> None:
    """`InputError` `<where>: <value> is not <kind>, e.g. ...` unless `value` is of the field's kind (a list of
    them when `field.many`)."""
    test = KINDS[field.kind]
    if not field.many:
        if not test(value):
            raise InputError(f"{where}: {value!r} is not {field.words()}")
        return
    if not isinstance(value, list):
        raise InputError(f"{where}: {value!r} is not {field.words()}")
    bad = [item for item in value if not test(item)]
    if bad:
        raise InputError(f"{where}: {bad[0]!r} is not {field.kind}; give {field.words()}")


def check_run_options(options: dict[Any, Any], where: str, parser: SRNetArgumentParser) -> None:
    """A mapping of run_glue_sparse.py options (`common`, a method's): known keys, none the sweep sets, values of
    their option's type (a string holding `{seed}`, `{output_dir}`, `{sparsity}` or `$VAR` is checked by the run,
    once filled)."""
    for key in options:
        if key in SET_BY_SWEEP:
            raise InputError(
                f"{where}: {key} is set by the sweep for every run; give the recipe's {SET_BY_SWEEP[key]!r} instead"
            )
    filled_later = {k for k, v in options.items() if isinstance(v, str) and ("$" in v or "{" in v)}
    for key in filled_later:
        check_placeholders(options[key], f"{where}.{key}")
    parser.config_values({k: v for k, v in options.items() if k not in filled_later}, where, OPTIONS_HELP)
    for key in filled_later:  # its key still has to be an option
        parser.config_values({key: None}, where, OPTIONS_HELP)


PLACEHOLDERS = ("seed", "output_dir", "sparsity")  # what `sweep_runs.expand` fills in


def check_placeholders(value: str, where: str) -> None:
    """Before any run: every `{name}` of a recipe value is one the sweep fills in (a misspelt `{Seed}` or an unknown
    `{lr}` was found only once earlier runs had trained, issue 70)."""
    known = ", ".join(f"{{{p}}}" for p in PLACEHOLDERS)
    for name in re.findall(r"\{([A-Za-z_]\w*)\}", value):  # a word in braces (JSON text in a value is no name)
        if name not in PLACEHOLDERS:
            raise InputError(
                f"{where}: {{{name}}} is no placeholder of a sweep (it fills in {known}): correct it, or write the "
                "value out"
            )


def check_methods(methods: dict[Any, Any], where: str, parser: SRNetArgumentParser) -> None:
    """Each method: a name -> a mapping of its own keys (`METHOD_FIELDS`) and run options."""
    for name, method in methods.items():
        if not isinstance(name, str):
            raise InputError(f"{where}: method name {name!r} is not a string; name it, e.g. full_ce")
        check_file_name(f"{where}: method name", name, "methods: {{{name}: {{loss: ce}}}}")  # its runs' folder
        place = f"{where}.{name}"
        if not isinstance(method, dict):
            raise InputError(f"{place}: {method!r} is not a mapping of run_glue_sparse.py options, e.g. {{loss: ce}}")
        for key, field in METHOD_FIELDS.items():
            if key in method:
                check_value(method[key], field, f"{place}.{key}")
        check_run_options({k: v for k, v in method.items() if k not in METHOD_FIELDS}, place, parser)


def check_recipe(recipe: Any, path: str) -> None:
    """`InputError` naming `path` and the key for anything of the recipe that is not of its schema (module doc)."""
    if not isinstance(recipe, dict):
        raise InputError(f"{path} must hold a recipe (a mapping); see the docstring of run_sweep.py")
    for key, value in recipe.items():
        if key not in RECIPE_FIELDS:
            raise unknown_key_error(path, key, RECIPE_FIELDS)
        if value is None and key in OPTIONAL:
            continue
        check_value(value, RECIPE_FIELDS[key], f"{path}: {key}")
    parser = build_parser()
    if isinstance(recipe.get("common"), dict):
        check_run_options(recipe["common"], f"{path}: common", parser)
    if isinstance(recipe.get("methods"), dict):
        check_methods(recipe["methods"], f"{path}: methods", parser)


def load_recipe(path: str) -> dict[str, Any]:
    """The recipe file's content, checked against its schema (`check_recipe`); repeated keys are refused."""
    recipe = load_config_file(path)
    check_recipe(recipe, path)
    return recipe
