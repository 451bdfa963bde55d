"""`SRNetArgumentParser`: an `HfArgumentParser` over dataclasses that share options, each declared once.

Several dataclasses may hold a field of the same name (every pruning method's config holds the common
`PruningConfig` fields): the option is added once, by the first dataclass that has it, and its value reaches every
dataclass that has the field. A field with `metadata={"cli": False}` (what a config records, not what a user sets)
is not an option. `metadata={"aliases": ["--old_name"]}` keeps an old spelling, on the command line and as a key of
a config file.

Values are collected as a dict of the options *given* (a config file's keys, then the command line's flags, which
override them) and the dataclasses are built from it with the semantics of `HfArgumentParser.parse_dict` (what
`parse_yaml_file`/`parse_json_file` call): a field not given keeps its dataclass default.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import difflib
import json
import sys
import types
import typing
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NoReturn, get_type_hints

import yaml
from transformers import HfArgumentParser
from transformers.hf_argparser import string_to_bool

from ..errors import DuplicateJsonKeyError, InputError, check_input_file, unique_json_object

CONFIG_SUFFIXES = (".json", ".yaml", ".yml")


def is_cli_field(field: dataclasses.Field) -> bool:
    """Whether a dataclass field is a command-line option (not `init=False`, not `metadata={"cli": False}`)."""
    return field.init and field.metadata.get("cli", True)


def cli_field_names(dtype: type) -> set[str]:
    """The names of the fields of `dtype` that are command-line options."""
    return {f.name for f in dataclasses.fields(dtype) if is_cli_field(f)}


def dashed_spellings(aliases: str | Iterable[str]) -> list[str]:
    """`["--mask_alpha"]` -> `["--mask_alpha", "--mask-alpha"]`."""
    spellings: list[str] = []
    for alias in [aliases] if isinstance(aliases, str) else aliases:
        dashed = "--" + alias.removeprefix("--").replace("_", "-")
        spellings += [alias] + ([dashed] if alias.startswith("--") and dashed != alias else [])
    return list(dict.fromkeys(spellings))


class DuplicateKeyError(yaml.constructor.ConstructorError):
    """A key given twice in one mapping of a YAML file (YAML would silently keep the last value)."""

    def __init__(self, key: Any, first_line: int, node: yaml.Node) -> None:
        super().__init__(None, None, f"duplicate key {key!r}", node.start_mark)
        self.key, self.first_line, self.line = key, first_line, node.start_mark.line + 1


class UniqueKeyLoader(yaml.SafeLoader):
    """`yaml.SafeLoader` that refuses a key repeated in one mapping (`DuplicateKeyError`); merge keys (`<<`) still
    let the mapping's own keys override the merged ones."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        first_lines: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                if key in first_lines:
                    raise DuplicateKeyError(key, first_lines[key], key_node)
                first_lines[key] = key_node.start_mark.line + 1
            except TypeError:  # an unhashable key: SafeLoader's own error says so
                continue
        return super().construct_mapping(node, deep=deep)


def parse_command(
    dtypes: Sequence[type],
    argv: list[str] | None = None,
    *,
    first: str | None = None,
    description: str | None = None,
) -> tuple[Any, ...]:
    """Every command's parse: its dataclasses from `argv` (default: the command line) with `SRNetArgumentParser`,
    each checked by its own `__post_init__`.

    `first` names the option a command also takes as a positional argument (a folder or file, anywhere among the
    flags: `report results/x --check`); without it a leading `.json`/`.yaml` file is a config file whose options
    later flags override. An unknown option is one `InputError` line; `--help` shows `description` (the command's
    docstring) above the options."""
    parser = SRNetArgumentParser(dtypes, description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    argv = list(sys.argv[1:] if argv is None else argv)
    if first is not None:
        option = parser._option_string_actions[f"--{first}"]
        parser.add_argument(first, nargs="?", metavar=first.upper(), help=f"the same as --{first}")
        option.required = False  # given either way; `build` refuses it missing
        argv = bare_switches_made_explicit(parser, argv)
    given = parser.given_options(argv, config_file=first is None)
    return tuple(parser.build(dtype, given) for dtype in dtypes)


BOOLEAN_WORDS = {"yes", "no", "true", "false", "t", "f", "y", "n", "1", "0"}  # what `string_to_bool` reads


def bare_switches_made_explicit(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """`argv` with `true` after each boolean flag followed by a word that is no boolean (`--check results/x`), so
    the word stays the positional argument instead of being read as the flag's value (as argparse's `store_true`
    flags of these commands read it before they were dataclasses)."""
    switches = {s for a in parser._actions if a.type is string_to_bool for s in a.option_strings}
    out: list[str] = []
    for i, word in enumerate(argv):
        out.append(word)
        following = argv[i + 1] if i + 1 < len(argv) else None
        if word in switches and following is not None and not following.startswith("-"):
            if following.lower() not in BOOLEAN_WORDS:
                out.append("true")
    return out


def load_config_file(path: str | Path) -> Any:
    """The content of a `.json` (by its suffix) or YAML file (`yaml.safe_load` semantics); a missing, non-UTF-8 or
    malformed file, or a key repeated in one mapping, raises `InputError` naming the file and the line of the error."""
    check_input_file(path, "config file")
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise InputError(f"{path} is not UTF-8 ({err}): save the config file as UTF-8") from None
    try:
        if str(path).endswith(".json"):
            return json.loads(text, object_pairs_hook=unique_json_object)
        return yaml.load(text, Loader=UniqueKeyLoader)  # a SafeLoader subclass
    except DuplicateJsonKeyError as err:
        raise InputError(f"{path}: key {err.key!r} is given twice in one object; keep one of them") from None
    except DuplicateKeyError as err:
        raise InputError(
            f"{path} line {err.line}: key {err.key!r} is given twice (first at line {err.first_line}), and only the "
            "last value would count; keep one of them"
        ) from None
    except json.JSONDecodeError as err:
        raise InputError(f"{path} line {err.lineno}, column {err.colno}: not valid JSON: {err.msg}") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise InputError(f"{path}{where}: not valid YAML: {problem}") from None


def unknown_key_error(where: str, key: Any, known: Iterable[str], what: str = "key", listing: str = "") -> InputError:
    """`<where>: unknown key 'referense' (did you mean 'reference'?); the keys are ...`: the nearest known name
    (`difflib.get_close_matches`), then `listing`, else the known names."""
    known = sorted(set(known))
    near = difflib.get_close_matches(str(key), known, n=1)
    hint = f" (did you mean {near[0]!r}?)" if near else ""
    listing = listing or f"the {what}s are {', '.join(known)}"
    return InputError(f"{where}: unknown {what} {str(key)!r}{hint}; {listing}")


# a config value that is not a string (YAML/JSON's own types), for the options of these types: what it must be
_TYPE_WORDS: dict[Any, str] = {
    int: "an integer",
    float: "a number",
    str: "a string",
    string_to_bool: "true or false",
}


def _has_type(option_type: Any, value: Any) -> bool:
    """Whether a config value that is not a string suits an option of `option_type` (other types: not checked)."""
    if option_type is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if option_type is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if option_type is string_to_bool:
        return isinstance(value, int) and value in (0, 1)
    return True


def takes_one_value(annotation: Any) -> bool:
    """Whether a field of this annotation holds one value (`float`, `str | None`), not a list or a mapping (`dict |
    str`, as `TrainingArguments.accelerator_config`, takes a mapping from a config file)."""
    parts = typing.get_args(annotation) if typing.get_origin(annotation) in (typing.Union, types.UnionType) else ()
    containers = (list, dict, tuple, set)
    return not any(part in containers or typing.get_origin(part) in containers for part in parts or (annotation,))


class SRNetArgumentParser(HfArgumentParser):
    """`HfArgumentParser` where an option shared by several dataclasses is declared (and parsed) once."""

    def __init__(self, dataclass_types: Iterable[type], **kwargs: Any) -> None:
        self._declared: set[str] = set()
        self._field_types: dict[str, Any] = {}  # option dest -> the field's annotation (before argparse narrows it)
        super().__init__(list(dataclass_types), **kwargs)

    def error(self, message: str) -> NoReturn:
        """argparse's refusal (a bad value, a missing option) as one line `error: ...`, status 2, without the usage
        line, which would list every option."""
        self.exit(2, f"error: {message} (see {self.prog} --help)\n")

    def _add_dataclass_arguments(self, dtype: type) -> None:
        """Add the options of `dtype` that no earlier dataclass added (see `HfArgumentParser`)."""
        group = self.add_argument_group(dtype._argument_group_name) if hasattr(dtype, "_argument_group_name") else self
        hints = get_type_hints(dtype)
        for field in dataclasses.fields(dtype):
            if not is_cli_field(field) or field.name in self._declared:
                continue
            self._declared.add(field.name)
            self._field_types[field.name] = hints[field.name]
            option = copy.copy(field)  # HfArgumentParser narrows `type`; `cli` is ours, not argparse's
            option.type = hints[field.name]
            metadata = {k: v for k, v in field.metadata.items() if k != "cli"}
            if "aliases" in metadata:  # `--old_name` also as `--old-name`, as HfArgumentParser spells field names
                metadata["aliases"] = dashed_spellings(metadata["aliases"])
            option.metadata = types.MappingProxyType(metadata)
            self._parse_dataclass_field(group, option)

    def _actions_by_key(self) -> dict[str, argparse.Action]:
        """Every spelling of an option without its dashes (`mask_alpha`, `mask-alpha`, `alpha`) -> its action.

        `--no_<flag>` complements of boolean options are left out: a config file sets `<flag>: false`."""
        keys: dict[str, argparse.Action] = {}
        for action in self._actions:
            if action.dest == "help" or isinstance(action, argparse._StoreFalseAction):
                continue
            for option in action.option_strings:
                keys[option.lstrip("-")] = action
        return keys

    def given_on_command_line(self, argv: list[str]) -> dict[str, Any]:
        """The options given in `argv` (parsed and converted by argparse), without any default.

        Unknown arguments raise `InputError` (a `ValueError`, as `HfArgumentParser.parse_args_into_dataclasses`
        raises)."""
        saved = [(action, action.default, action.required) for action in self._actions]
        try:
            for action in self._actions:
                action.default, action.required = argparse.SUPPRESS, False
            namespace, remaining = self.parse_known_args(args=argv)
        finally:
            for action, default, required in saved:
                action.default, action.required = default, required
        if remaining:
            raise InputError(f"unrecognized arguments: {' '.join(remaining)} (see --help for the options)")
        return vars(namespace)

    def read_config_file(self, path: str | Path) -> dict[str, Any]:
        """A `.json`/`.yaml` config as option values (`config_values`). A missing or malformed file, a repeated key,
        an unknown key or a value of the wrong type raises `InputError` naming the file (and line or key)."""
        config = load_config_file(path)
        if not isinstance(config, dict):
            raise InputError(f"{path} must hold a mapping of argument names to values")
        return self.config_values(config, str(path))

    def config_values(
        self, config: dict[Any, Any], where: str, options_help: str = "see --help for the options"
    ) -> dict[str, Any]:
        """Config keys by any spelling of an option (aliases too) -> values by option `dest`: string values converted
        as on the command line (`"1e-4"`, `"true"`), a single value of a list option as a list. An unknown key
        (with the nearest option's name) or a value of the wrong type (a list for a one-value option, `1.5` for an
        integer) or two spellings of one option raise `InputError` starting with `where`, naming the key (and, for an
        unknown one, `options_help`)."""
        actions = self._actions_by_key()
        spelled: dict[str, str] = {}
        for key in config:
            if str(key) not in actions:
                raise unknown_key_error(where, key, actions, "option", options_help)
            first = spelled.setdefault(actions[str(key)].dest, str(key))
            if first != str(key):  # an alias and the name, or two aliases: the dict would keep one silently
                raise InputError(
                    f"{where}: {first} and {key} are two spellings of the option {actions[str(key)].option_strings[0]}:"
                    " give it once"
                )
        return {actions[str(k)].dest: self._convert(actions[str(k)], v, f"{where}: {k}") for k, v in config.items()}

    def _convert(self, action: argparse.Action, value: Any, where: str) -> Any:
        """A config-file value as argparse would hold it after reading the same value from the command line."""
        if value is None:
            return None
        if action.nargs in ("+", "*") or isinstance(action, argparse._ExtendAction):
            items = value if isinstance(value, list) else [value]
            return [self._convert_one(action, v, where, one_value=True) for v in items]
        return self._convert_one(action, value, where, one_value=takes_one_value(self._field_types.get(action.dest)))

    def _convert_one(self, action: argparse.Action, value: Any, where: str, one_value: bool) -> Any:
        """One value: a string through the option's type, any other value checked against it; a list or mapping
        refused where the option takes `one_value` of a plain type."""
        words = _TYPE_WORDS.get(action.type) if action.choices is None else "one of " + str(list(action.choices))
        if one_value and words and isinstance(value, (list, tuple, dict, set)):
            kind = "a mapping" if isinstance(value, dict) else "a list"
            raise InputError(f"{where}: {value!r} is {kind}, but the option takes one value: {words}")
        if isinstance(value, str) and action.type is not None:
            try:
                value = action.type(value)
            except (TypeError, ValueError, argparse.ArgumentTypeError) as err:
                raise InputError(f"{where}: invalid value {value!r} ({err})") from None
        elif not isinstance(value, str) and not _has_type(action.type, value):
            raise InputError(f"{where}: {value!r} is not {words}")
        elif action.type is string_to_bool and not isinstance(value, bool):
            value = string_to_bool(str(value))  # 1/0, as `--flag 1` on the command line
        if action.choices is not None and value not in action.choices:
            raise InputError(f"{where}: {value!r} is not one of {list(action.choices)}")
        return value

    def given_options(self, argv: list[str], config_file: bool = True) -> dict[str, Any]:
        """The options a run was given: a leading `.json`/`.yaml` file's (with `config_file`), then the command
        line's (which win)."""
        values: dict[str, Any] = {}
        if config_file and argv and argv[0].endswith(CONFIG_SUFFIXES):
            values = self.read_config_file(argv[0])
            argv = argv[1:]
        values.update(self.given_on_command_line(argv))
        return values

    def build(self, dtype: type, values: dict[str, Any], **overrides: Any) -> Any:
        """`dtype` from the given option values it has fields for (`parse_dict` semantics) and `overrides`."""
        fields = {f.name: f for f in dataclasses.fields(dtype) if f.init}
        inputs = {k: v for k, v in values.items() if k in fields and is_cli_field(fields[k])}
        inputs.update(overrides)
        missing = [
            name
            for name, f in fields.items()
            if name not in inputs and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        ]
        if missing:
            self.error(f"the following arguments are required: {', '.join(f'--{m}' for m in missing)}")
        return dtype(**inputs)
