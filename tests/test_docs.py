"""The README's and the docs pages' commands and links against the project.

Every `--flag` given to a project script (`run_*.py`, `examples/*.py`, `bench/*.py`, under `python`, `accelerate
launch` or `torchrun`) in a fenced bash block must be an option of that script's own parser, read from its `--help`:
the flags of backslash-continued lines, the flags of shell arrays expanded into the command (`"${COMMON[@]}"`,
defined in any block of any page) and, for `run_sweep.py` and `run_sample_difficulty.py`, the `run_glue_sparse.py`
flags after `--`. Config files and scripts that a command names must exist, and every relative link must lead to an
existing file and, for `#anchor`, to a heading of that file (GitHub's anchor rule). `bash examples/*.sh` lines are
not checked here (the scripts are run by their own tests).

The `--help` texts come from one subprocess that runs every script named in the docs with `--help` (`runpy`, as
`python script.py --help` would), so the package is imported once.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import runpy
import shlex
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest
from prewarmed import SERVER_ENV, run_python

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PROJECT_SCRIPT = re.compile(r"run_\w+\.py|(?:examples|bench)/\w+\.py")
PASS_THROUGH = {"run_sweep.py", "run_sample_difficulty.py"}  # their arguments after `--` are run_glue_sparse.py's
FALLBACK_SCRIPT = "run_glue_sparse.py"  # for shell arrays no script command expands
REPO_FILE = re.compile(r"(?:\./)?((?:examples|recipes|accelerate_configs|bench)/[\w./-]+|run_\w+\.py)")
ARRAY_DEFINITION = re.compile(r"\b([A-Za-z_]\w*)=\((.*?)\)", re.S)
ARRAY_EXPANSION = re.compile(r"\$\{(\w+)\[@\]\}")
BASH_BLOCK = re.compile(r"^```bash\n(.*?)^```", re.S | re.M)
ANY_BLOCK = re.compile(r"^```.*?^```", re.S | re.M)
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
OPERATORS = set(";&|()<>")


@dataclass(frozen=True)
class Invocation:
    """One project script called in a bash block: where, which script, and its flags with where each came from."""

    where: str  # "docs/pruning.md:42"
    script: str  # "run_glue_sparse.py"
    flags: tuple[tuple[str, str], ...]  # (flag, origin): origin "" or "${COMMON[@]}"


def strip_comment(line: str) -> str:
    """`line` without a shell comment: a `#` that starts a word outside quotes, and what follows it."""
    quote = ""
    for i, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line


def bash_blocks(page: Path) -> list[tuple[int, str]]:
    """(line of the block's first line, the block's text without comments) for every fenced bash block."""
    text = page.read_text(encoding="utf-8")
    blocks = []
    for match in BASH_BLOCK.finditer(text):
        body = "\n".join(strip_comment(line) for line in match[1].splitlines())
        blocks.append((text.count("\n", 0, match.start(1)) + 1, body))
    return blocks


def logical_lines(first_line: int, body: str) -> list[tuple[int, str]]:
    """The block's lines with backslash continuations joined, each with the page line where it starts."""
    joined: list[tuple[int, str]] = []
    pending, start = "", first_line
    for offset, line in enumerate(body.splitlines()):
        if not pending:
            start = first_line + offset
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        joined.append((start, pending + line))
        pending = ""
    if pending:
        joined.append((start, pending))
    return joined


def shell_words(line: str, where: str) -> list[str]:
    """`line` split as the shell splits it, control operators (`;`, `&&`, `|`, parentheses) as words of their own."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError as err:
        raise AssertionError(f"{where}: cannot split the command as the shell would ({err}): {line}") from None


def commands(words: list[str]) -> list[list[str]]:
    """`words` cut at control operators into simple commands."""
    found: list[list[str]] = [[]]
    for word in words:
        if set(word) <= OPERATORS:
            found.append([])
        else:
            found[-1].append(word)
    return [command for command in found if command]


def shell_arrays() -> dict[str, list[list[str]]]:
    """Every shell array any bash block defines, by name: the words of each definition (a name defined twice, as
    the quickstart's SIZE, keeps both)."""
    arrays: dict[str, list[list[str]]] = {}
    for page in PAGES:
        for line, body in bash_blocks(page):
            for match in ARRAY_DEFINITION.finditer(body):
                where = f"{page.relative_to(ROOT)}:{line + body.count(chr(10), 0, match.start())}"
                arrays.setdefault(match[1], []).append(shell_words(match[2], where))
    return arrays


def flags_of(words: list[str], arrays: dict[str, list[list[str]]], origin: str = "") -> list[tuple[str, str]]:
    """The `--flags` among `words`, with the flags of every expanded array (recursively) and where each came from.

    An expansion of an array that no block defines is returned as the flag `${NAME[@]}` (an error to report)."""
    flags: list[tuple[str, str]] = []
    for word in words:
        expansion = ARRAY_EXPANSION.fullmatch(word)
        if expansion:
            name = expansion[1]
            if name not in arrays:
                flags.append((word, origin))
            for definition in arrays.get(name, []):
                flags += flags_of(definition, arrays, origin or word)
            continue
        word = word.strip("[]")  # `[--seeds 1,2]`: an optional argument in a usage line
        if word.startswith("--") and len(word) > 2:
            flags.append((word.split("=", 1)[0], origin))
    return flags


def documented_commands() -> list[tuple[str, list[str]]]:
    """(page:line, words) of every simple command in the bash blocks of the README and the docs pages."""
    found = []
    for page in PAGES:
        for first_line, body in bash_blocks(page):
            for line, text in logical_lines(first_line, body):
                where = f"{page.relative_to(ROOT)}:{line}"
                found += [(where, command) for command in commands(shell_words(text, where))]
    return found


def invocations(arrays: dict[str, list[list[str]]]) -> list[Invocation]:
    """Every call of a project script in the bash blocks of the README and the docs pages."""
    return [call for where, command in documented_commands() for call in _script_calls(command, where, arrays)]


def _script_calls(command: list[str], where: str, arrays: dict[str, list[list[str]]]) -> list[Invocation]:
    """The script calls of one simple command: the script's own flags, and run_glue_sparse.py's after a `--`."""
    position = next((i for i, word in enumerate(command) if PROJECT_SCRIPT.fullmatch(word.removeprefix("./"))), None)
    if position is None or command[0] == "bash":
        return []
    script, args = command[position].removeprefix("./"), command[position + 1 :]
    if script in PASS_THROUGH and "--" in args:
        own, run = args[: args.index("--")], args[args.index("--") + 1 :]
        return [
            Invocation(where, script, tuple(flags_of(own, arrays))),
            Invocation(where, FALLBACK_SCRIPT, tuple(flags_of(run, arrays))),
        ]
    return [Invocation(where, script, tuple(flags_of(args, arrays)))]


def arrays_no_command_expands(arrays: dict[str, list[list[str]]], calls: list[Invocation]) -> list[str]:
    """Names of the arrays whose flags no script call has checked (directly or through another array)."""
    reached = {origin for call in calls for _, origin in call.flags}
    reached_names = {ARRAY_EXPANSION.fullmatch(origin)[1] for origin in reached if origin}
    for name in list(reached_names):
        stack = [name]
        while stack:
            for definition in arrays.get(stack.pop(), []):
                for word in definition:
                    inner = ARRAY_EXPANSION.fullmatch(word)
                    if inner and inner[1] not in reached_names:
                        reached_names.add(inner[1])
                        stack.append(inner[1])
    return sorted(set(arrays) - reached_names)


def option_strings(help_text: str) -> set[str]:
    """The `--options` argparse lists in a help text: the option lines (two spaces, then `-`), up to the help."""
    options = set()
    for line in help_text.splitlines():
        if line.startswith("  -"):
            invocation = re.split(r"\s{2,}", line.strip())[0]
            options.update(re.findall(r"(?<![\w-])--[\w-]+", invocation))
    return options


def collect_help_texts(scripts: list[str]) -> dict[str, str]:
    """`script --help` of every script, run in this process with `runpy` as `python script --help` runs it.

    A script that does not exit with status 0 gets `ERROR: ...` instead of its help."""
    os.chdir(ROOT)
    sys.path.insert(0, str(ROOT))
    warnings.simplefilter("ignore")
    texts = {}
    for script in scripts:
        saved_argv, saved_path = list(sys.argv), list(sys.path)
        sys.argv = [script, "--help"]
        sys.path.insert(0, str((ROOT / script).parent))
        out, err = io.StringIO(), io.StringIO()
        status: object = 0
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                runpy.run_path(str(ROOT / script), run_name="__main__")
        except SystemExit as exit_:
            status = exit_.code or 0
        except Exception as exc:  # a script that cannot even print its help
            status = repr(exc)
        finally:
            sys.argv, sys.path[:] = saved_argv, saved_path
        texts[script] = out.getvalue() if status == 0 else f"ERROR: exit {status}: {err.getvalue()[-2000:]}"
    return texts


@pytest.fixture(scope="module")
def arrays() -> dict[str, list[list[str]]]:
    return shell_arrays()


@pytest.fixture(scope="module")
def calls(arrays) -> list[Invocation]:
    return invocations(arrays)


@pytest.fixture(scope="module")
def options(calls) -> dict[str, set[str]]:
    """Each called script's options, from its `--help`, all scripts in one subprocess."""
    scripts = sorted({call.script for call in calls} | {FALLBACK_SCRIPT})
    env = {**os.environ, **SERVER_ENV, "OMP_NUM_THREADS": "1", "COLUMNS": "120"}
    result = run_python(__file__, *scripts, cwd=ROOT, env=env, timeout=600)
    assert result.returncode == 0, f"collecting the scripts' --help failed:\n{result.stderr[-3000:]}"
    texts = json.loads(result.stdout)
    failed = {script: text for script, text in texts.items() if text.startswith("ERROR")}
    assert not failed, f"--help failed: {failed}"
    return {script: option_strings(text) for script, text in texts.items()}


@pytest.mark.slow
def test_every_flag_in_the_docs_is_an_option_of_its_script(arrays, calls, options):
    unknown = [
        f"{call.where}: {call.script} has no option {flag}" + (f" (from {origin})" if origin else "")
        for call in calls
        for flag, origin in call.flags
        if flag not in options[call.script]
    ]
    unknown += [
        f"shell array {name}: {FALLBACK_SCRIPT} has no option {flag}"
        for name in arrays_no_command_expands(arrays, calls)
        for definition in arrays[name]
        for flag, _ in flags_of(definition, arrays)
        if flag not in options[FALLBACK_SCRIPT]
    ]
    assert not unknown, "flags in the docs that the scripts do not accept:\n" + "\n".join(unknown)


def test_the_docs_commands_name_files_that_exist():
    """Scripts (`run_*.py`, `examples/...`, `bench/...`, `bash examples/*.sh` too) and config files
    (`recipes/...`, `accelerate_configs/...`) named as words of a command."""
    missing = sorted(
        f"{where}: {match[1]}"
        for where, command in documented_commands()
        for match in map(REPO_FILE.fullmatch, command)
        if match and not (ROOT / match[1]).exists()
    )
    assert not missing, "files named by the docs' commands that do not exist:\n" + "\n".join(missing)


def test_the_check_reads_the_quickstart_as_the_shell_does(arrays, calls):
    """The README's quickstart as read by hand: its three script calls, with the flags of COMMON and SIZE (both
    definitions) in the two run_glue_sparse.py calls, and the continued line's `--overwrite_output_dir`."""
    readme = [call for call in calls if call.where.startswith("README.md:")]
    bias = next(call for call in readme if call.script == "run_bias_model.py" and "--train_file" in dict(call.flags))
    assert [flag for flag, _ in bias.flags] == [
        "--task", "--data_dir", "--train_file", "--vectors", "--C", "--output_dir", "--overwrite_output_dir",
    ]  # fmt: skip
    runs = [call for call in readme if call.script == "run_glue_sparse.py" and "--seed" in dict(call.flags)]
    assert len(runs) == 2
    flags = dict(runs[1].flags)
    assert flags["--max_train_samples"] == flags["--per_device_train_batch_size"] == "${COMMON[@]}"
    assert [flag for flag, _ in runs[1].flags].count("--max_train_samples") == 2  # both SIZE definitions
    assert {"--sparsity", "--threshold_update_interval", "--output_dir"} <= set(flags)
    assert any(call.script == "examples/quickstart_table.py" for call in readme)
    assert arrays_no_command_expands(arrays, calls) == []


def test_an_unknown_flag_and_an_undefined_array_are_reported():
    arrays = {"COMMON": [["--task", "mnli", "${SIZE[@]}"]], "SIZE": [["--max_train_samples", "8"]]}
    words = shell_words('python run_sweep.py --seeds 1 -- "${COMMON[@]}" "${NONE[@]}" --bogus=1; echo', "x")
    calls = [call for command in commands(words) for call in _script_calls(command, "x", arrays)]
    assert [(call.script, call.flags) for call in calls] == [
        ("run_sweep.py", (("--seeds", ""),)),
        (
            "run_glue_sparse.py",
            (
                ("--task", "${COMMON[@]}"),
                ("--max_train_samples", "${COMMON[@]}"),
                ("${NONE[@]}", ""),
                ("--bogus", ""),
            ),
        ),
    ]


def github_anchor(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lowercase, punctuation other than `-` and `_` dropped, spaces -> `-`."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors of a page's headings (outside code blocks); a repeated heading gets `-1`, `-2`, ... as on GitHub."""
    text = ANY_BLOCK.sub("", page.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    found = set()
    for heading in re.findall(r"^#{1,6} (.+)$", text, re.M):
        anchor = github_anchor(heading)
        found.add(f"{anchor}-{seen[anchor]}" if anchor in seen else anchor)
        seen[anchor] = seen.get(anchor, 0) + 1
    return found


def test_every_relative_link_leads_to_a_file_and_heading():
    """In the README, docs/ and the results' pages."""
    broken = []
    for page in [*PAGES, *sorted((ROOT / "results").glob("**/*.md"))]:
        text = page.read_text(encoding="utf-8")
        # code blocks and inline code hold no links: blank them, keeping line numbers
        text = ANY_BLOCK.sub(lambda m: "\n" * m[0].count("\n"), text)
        text = re.sub(r"`[^`\n]*`", "", text)
        for match in LINK.finditer(text):
            target = match[1]
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            resolved = (page.parent / path).resolve() if path else page
            where = f"{page.relative_to(ROOT)}:{text.count(chr(10), 0, match.start()) + 1}"
            if not resolved.exists():
                broken.append(f"{where}: {target} (no such file)")
            elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
                broken.append(f"{where}: {target} (no heading with that anchor)")
    assert not broken, "broken links:\n" + "\n".join(broken)


def test_the_readme_and_the_index_link_every_docs_page():
    for index in (ROOT / "README.md", ROOT / "docs" / "README.md"):
        text = index.read_text(encoding="utf-8")
        targets = {(index.parent / link.partition("#")[0]).resolve() for link in LINK.findall(text)}
        unlinked = [page.name for page in PAGES[1:] if page != index and page.resolve() not in targets]
        assert not unlinked, f"{index.relative_to(ROOT)} does not link {unlinked}"


def test_github_anchor_follows_githubs_rule():
    # anchors as GitHub renders them for this repository's headings
    assert github_anchor("Full scale (GPU), the paper's settings") == "full-scale-gpu-the-papers-settings"
    assert github_anchor("The `evaluate` modules") == "the-evaluate-modules"
    assert github_anchor("run_bias_model.py: the bias model (p_b)") == "run_bias_modelpy-the-bias-model-p_b"


if __name__ == "__main__":
    print(json.dumps(collect_help_texts(sys.argv[1:])))
