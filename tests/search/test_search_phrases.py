"""The alias-phrase lookup passes over no phrase that the alias rule would find as whole words."""

from __future__ import annotations

import random

from helpers import bare_record

from trainkb.search._index import Index, build_data

ALIASES = [
    "`torch.load` weights only fails",
    "(rank 0) NCCL watchdog timeout",
    "grad scaler step skipped again",
    "-- nan loss after warmup",
    "loss goes nan after warmup steps",
    "nan loss after the first epoch",
]


def _index() -> Index:
    records = [bare_record(f"R{number}", title="a record", aliases=[alias]) for number, alias in enumerate(ALIASES)]
    return Index(build_data(records, "phrases"))


def _whole(text: str, phrase: str) -> bool:
    """The alias rule (_score._phrases): the phrase's first occurrence has no letter or digit either side."""
    pos = text.find(phrase)
    return pos >= 0 and not text[pos - 1].isalnum() and not text[pos + len(phrase)].isalnum()


def test_phrase_lookup_keeps_every_phrase_found_as_whole_words() -> None:
    index = _index()
    assert len(index.phrases) == len(ALIASES)
    rng = random.Random(5)
    pieces = [phrase for _entry, phrase, _alias, _count in index.phrases] + ["nan", "loss", "after", "0", "("]
    found = 0
    for _ in range(400):
        parts = rng.choices(pieces, k=rng.randint(1, 5))
        text = " " + "".join(part + rng.choice([" ", "", ", ", ")", "-"]) for part in parts) + " "
        whole = [p for p in index.phrases if _whole(text, p[1])]
        kept = index.phrases_in(text)
        assert [p for p in kept if p in whole] == whole, text
        assert kept == sorted(kept, key=index.phrases.index)
        found += len(whole)
    assert found >= 200  # the texts held whole phrases often, so the comparison above tested the lookup
