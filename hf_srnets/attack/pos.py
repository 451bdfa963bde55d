"""Part-of-speech tags for TextFooler's part-of-speech constraint (TextAttack's `PartOfSpeech`).

TextAttack tags with flair's universal POS model (or NLTK's averaged perceptron): neither is installable offline
here (flair's model downloads at run time and flair needs transformers < 5; NLTK's tagger data is not on PyPI).
`load_pos_tagger()` therefore uses NLTK's `pos_tag(tagset="universal")` when NLTK and its
`averaged_perceptron_tagger` data happen to be installed, else the documented fallback `coarse_pos`: closed-class
word lists (determiners, pronouns, prepositions, conjunctions, auxiliaries, numbers) and suffix rules
("-ly" ADV; "-ing", "-ed", "-ize" VERB; "-ous", "-ful", "-able", "-ive", "-less", "-ic", "-al" ADJ; "-tion",
"-ness", "-ment", "-ity", "-ism", "-er", "-s" NOUN); any other open-class word is "X", which matches every tag.
The fallback rejects only swaps whose tags it is sure differ, so it is weaker than a real tagger.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

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


def load_pos_tagger() -> PosTagger:
    """NLTK's universal tagger if it and its data are installed, else `coarse_pos` (logged once)."""
    tagger = _nltk_tagger()
    if tagger is None:
        logger.warning("NLTK's POS tagger is not available: the POS constraint uses the coarse fallback tagger")
        return coarse_pos
    return tagger


def compatible_pos(a: str, b: str, allow_verb_noun_swap: bool = True) -> bool:
    """TextAttack's rule: equal tags, or NOUN/VERB when allowed; "X" (unknown) is compatible with any tag."""
    if "X" in (a, b) or a == b:
        return True
    return allow_verb_noun_swap and {a, b} <= {"NOUN", "VERB"}
