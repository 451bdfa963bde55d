"""SRNetArgumentParser on toy dataclasses: one declaration per option, aliases, config files with overrides."""

import json
from dataclasses import dataclass, field

import pytest

from hf_srnets.arguments.parser import SRNetArgumentParser, dashed_spellings
from hf_srnets.errors import InputError


@dataclass
class Common:
    sparsity: float = field(default=0.5, metadata={"help": "shared by both configs"})
    recorded: str | None = field(default=None, metadata={"cli": False, "help": "not an option"})


@dataclass
class First(Common):
    alpha: float = field(default=2.0, metadata={"help": "α", "aliases": ["--mask_alpha"]})
    names: list[str] = field(default_factory=list, metadata={"help": "a list", "action": "extend"})


@dataclass
class Second(Common):
    rate: float = field(default=0.1, metadata={"help": "a rate"})
    flag: bool = field(default=True, metadata={"help": "a bool"})


@dataclass
class Required:
    model: str = field(metadata={"help": "required"})
    lr: float = field(default=1e-3, metadata={"help": "a float"})


def parser() -> SRNetArgumentParser:
    return SRNetArgumentParser([Required, Common, First, Second])


def test_a_shared_field_is_one_option_and_reaches_every_dataclass():
    p = parser()
    assert [a.dest for a in p._actions].count("sparsity") == 1
    assert "recorded" not in {a.dest for a in p._actions}
    given = p.given_options(["--model", "m", "--sparsity", "0.7", "--rate", "0.2"])
    assert given == {"model": "m", "sparsity": 0.7, "rate": 0.2}  # only what was given, no defaults
    first, second = p.build(First, given), p.build(Second, given)
    assert first.sparsity == second.sparsity == 0.7 and second.rate == 0.2 and first.alpha == 2.0
    assert p.build(Second, {}).sparsity == 0.5  # not given: the dataclass default


def test_aliases_on_the_command_line_and_as_config_keys(tmp_path):
    p = parser()
    assert p.given_options(["--mask_alpha", "3"]) == {"alpha": 3.0}
    assert p.given_options(["--mask-alpha", "4"]) == {"alpha": 4.0}
    config = tmp_path / "c.yaml"
    config.write_text("mask_alpha: 5\nmodel: m\n")
    assert p.build(First, p.given_options([str(config)])).alpha == 5
    assert dashed_spellings(["--mask_alpha"]) == ["--mask_alpha", "--mask-alpha"]


def test_a_config_giving_an_option_under_two_spellings_is_refused(tmp_path):
    """`alpha: 3` and `mask_alpha: 5` in one file: a mapping by option would keep one of them silently."""
    config = tmp_path / "c.yaml"
    config.write_text("model: m\nalpha: 3\nmask_alpha: 5\n")
    with pytest.raises(InputError, match=r"c\.yaml: alpha and mask_alpha are two spellings of the option --alpha"):
        parser().given_options([str(config)])


def test_config_file_values_are_converted_and_flags_override_them(tmp_path):
    p = parser()
    config = tmp_path / "c.yaml"
    config.write_text("model: m\nlr: 1e-4\nsparsity: 0.5\nnames: a\nflag: 'false'\n")  # YAML reads 1e-4 as a str
    given = p.given_options([str(config), "--sparsity", "0.9", "--names", "b", "c"])
    assert given == {"model": "m", "lr": 1e-4, "sparsity": 0.9, "names": ["b", "c"], "flag": False}
    json_config = tmp_path / "c.json"
    json_config.write_text(json.dumps({"model": "m", "names": ["x", "y"], "flag": True}))
    assert p.build(First, p.given_options([str(json_config)])).names == ["x", "y"]


def test_config_errors_name_the_key(tmp_path):
    p = parser()
    config = tmp_path / "c.yaml"
    config.write_text("model: m\nmask_alpah: 3\n")
    with pytest.raises(ValueError, match=r"unknown option.*mask_alpah"):
        p.given_options([str(config)])
    config.write_text("model: m\nlr: fast\n")
    with pytest.raises(ValueError, match="lr: invalid value 'fast'"):
        p.given_options([str(config)])
    config.write_text("- a list\n")
    with pytest.raises(ValueError, match="mapping"):
        p.given_options([str(config)])


def test_unknown_flags_and_missing_required_options_are_refused(capsys):
    p = parser()
    with pytest.raises(InputError, match="unrecognized arguments: --nope 1"):
        p.given_options(["--model", "m", "--nope", "1"])
    with pytest.raises(SystemExit) as exit_info:
        p.build(Required, p.given_options(["--lr", "0.1"]))
    assert exit_info.value.code == 2
    # one line, without argparse's usage line (which lists every option of run_glue_sparse.py)
    assert capsys.readouterr().err.splitlines() == [
        f"error: the following arguments are required: --model (see {p.prog} --help)"
    ]
    assert p.build(Required, p.given_options(["--model", "m"])).lr == 1e-3  # defaults restored after parsing


def test_boolean_complements_still_parse():
    p = parser()
    assert p.given_options(["--no_flag"]) == {"flag": False}
    assert p.given_options(["--flag"]) == {"flag": True}


@pytest.mark.parametrize(
    "name, text, where",
    [
        # line 3 indents a key under a scalar: the scanner stops at its colon, column 9 (2 spaces + "nested")
        ("bad.yaml", "model: m\nlr: 0.1\n  nested: [1, 2\n", r"bad\.yaml line 3, column 9: not valid YAML"),
        ("bad.json", '{"model": "m",\n "lr": 0.1,\n}\n', r"bad\.json line 3, column 1: not valid JSON"),
        ("latin1.yaml", "model: caf\xe9\n", r"latin1\.yaml is not UTF-8"),
    ],
)
def test_a_malformed_config_file_is_an_input_error_naming_file_and_line(tmp_path, name, text, where):
    path = tmp_path / name
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(InputError, match=where):
        parser().given_options([str(path)])


def test_a_missing_config_file_is_named():
    with pytest.raises(InputError, match=r"config file not found: nowhere/run\.yaml"):
        parser().given_options(["nowhere/run.yaml"])


def test_a_command_s_switch_before_its_positional_argument_does_not_swallow_it():
    """`report --check results/x` (argparse's store_true read it so before the commands' arguments were
    dataclasses): a boolean flag followed by a word that is no boolean value leaves the word to the positional."""
    import dataclasses as dc

    from hf_srnets.arguments.parser import parse_command

    @dc.dataclass
    class Args:
        folder: str = dc.field(metadata={"help": "a folder"})
        check: bool = dc.field(default=False, metadata={"help": "a switch"})

    assert parse_command([Args], ["--check", "results/x"], first="folder") == (Args("results/x", True),)
    assert parse_command([Args], ["results/x", "--check"], first="folder") == (Args("results/x", True),)
    assert parse_command([Args], ["--check", "false", "results/x"], first="folder") == (Args("results/x", False),)
    assert parse_command([Args], ["--folder", "y", "--check", "no"], first="folder") == (Args("y", False),)
