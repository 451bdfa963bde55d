"""Part-of-speech tags for TextFooler's part-of-speech constraint (TextAttack's `PartOfSpeech`).

TextAttack's `PartOfSpeech` tags with NLTK's averaged perceptron by default (`tagger_type="nltk"`,
`nltk.pos_tag(..., tagset="universal")`). The tagger is chosen by name (`POS_TAGGERS`, `--pos_tagger`), never
silently: "nltk" is TextAttack's and needs NLTK with its `averaged_perceptron_tagger` and `universal_tagset` data
(not on PyPI: `python -m nltk.downloader averaged_perceptron_tagger averaged_perceptron_tagger_eng
universal_tagset`); without them it is refused with that advice. "coarse" is an offline fallback, `coarse_pos`:
closed-class word lists (determiners, pronouns, prepositions, conjunctions, auxiliaries, numbers) and suffix rules
("-ly" ADV; "-ing", "-ed", "-ize" VERB; "-ous", "-ful", "-able", "-ive", "-less", "-ic", "-al" ADJ; "-tion",
"-ness", "-ment", "-ity", "-ism", "-er", "-s" NOUN); any other open-class word is "X", which matches every tag.
The fallback rejects only swaps whose tags it is sure differ, so it is weaker than a real tagger; the name of the
tagger used is recorded with the results.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from ..errors import InputError

logger = logging.getLogger(__name__)

PosTagger = Callable[[Sequence[str]], list[str]]

_CLOSED = {
    "DET": "a an the this that these those each every some any no all both either neither another",
    "PRON": "i me my mine you your yours he him his she her hers it its we us our ours they them their theirs "
    "myself yourself himself herself itself ourselves themselves who whom whose what which",
    "ADP": "of in on at by for with about against between into through during before after above below to from "
    "up down over under near among within without across toward towards upon",
    "CONJ": "and or but nor so yet because although though while if unless whereas",
    "VERB": "is are was were be been being am do does did have has had can could will would shall should may "
    "might must",
    "ADV": "not very too also just only never always often still already again ever here there now then",
    "NUM": "one two three four five six seven eight nine ten hundred thousand million",
}
CLOSED_CLASS: dict[str, str] = {word: tag for tag, words in _CLOSED.items() for word in words.split()}
SUFFIXES: tuple[tuple[str, str], ...] = (
    ("ly", "ADV"),
    ("ing", "VERB"),
    ("ed", "VERB"),
    ("ize", "VERB"),
    ("ous", "ADJ"),
    ("ful", "ADJ"),
    ("able", "ADJ"),
    ("ible", "ADJ"),
    ("ive", "ADJ"),
    ("less", "ADJ"),
    ("ic", "ADJ"),
    ("al", "ADJ"),
    ("tion", "NOUN"),
    ("ness", "NOUN"),
    ("ment", "NOUN"),
    ("ity", "NOUN"),
    ("ism", "NOUN"),
    ("er", "NOUN"),
    ("s", "NOUN"),
)


def coarse_pos(words: Sequence[str]) -> list[str]:
    """Universal-tagset guesses from word lists and suffixes; "X" when unsure (see the module docstring)."""
    tags = []
    for word in words:
        low = word.lower()
        if low.isdigit():
            tags.append("NUM")
        elif low in CLOSED_CLASS:
            tags.append(CLOSED_CLASS[low])
        else:
            tag = next((t for suffix, t in SUFFIXES if len(low) > len(suffix) + 2 and low.endswith(suffix)), "X")
            tags.append(tag)
    return tags


def _nltk_tagger() -> PosTagger | None:
    try:
        import nltk

        nltk.pos_tag(["test"], tagset="universal")
    except (ImportError, LookupError):
        return None
    return lambda words: [tag for _, tag in nltk.pos_tag(list(words), tagset="universal")]


POS_TAGGERS: dict[str, str] = {
    "nltk": "NLTK averaged perceptron, universal tagset (TextAttack's default)",
    "coarse": "hf_srnets coarse_pos fallback (word lists and suffixes; 'X' matches any tag)",
}


def load_pos_tagger(name: str = "nltk") -> PosTagger:
    """The tagger named `name` (`POS_TAGGERS`); "nltk" without its data is refused with what to do."""
    if name == "coarse":
        return coarse_pos
    if name != "nltk":
        raise InputError(f"unknown POS tagger {name!r}; choose one of {sorted(POS_TAGGERS)}")
    tagger = _nltk_tagger()
    if tagger is None:
        raise InputError(
            "POS tagger 'nltk' (TextAttack's) is not available: install nltk and its data (python -m nltk.downloader "
            "averaged_perceptron_tagger averaged_perceptron_tagger_eng universal_tagset), or choose the weaker "
            "offline fallback explicitly with --pos_tagger coarse (recorded with the results)"
        )
    return tagger


def pos_tagger_name(tagger: PosTagger | str | None) -> str:
    """The recorded name of a tagger given by name, as a function, or None (the default, "nltk")."""
    if tagger is None or isinstance(tagger, str):
        return tagger or "nltk"
    if tagger is coarse_pos:
        return "coarse"
    return f"custom:{getattr(tagger, '__qualname__', type(tagger).__name__)}"


def compatible_pos(a: str, b: str, allow_verb_noun_swap: bool = True) -> bool:
    """TextAttack's rule (`PartOfSpeech._can_replace_pos`): equal tags, or NOUN/VERB when allowed. An unknown tag
    ("X") is a tag like any other: a wildcard would let 89% of TextFooler's first candidates pass where TextAttack
    lets 44% (measured with the coarse tagger, `results/textattack_side_by_side`)."""
    if a == b:
        return True
    return allow_verb_noun_swap and {a, b} <= {"NOUN", "VERB"}
