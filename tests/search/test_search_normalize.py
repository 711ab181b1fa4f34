"""The normalisation table: variable parts masked, class and API names kept."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from trainkb.search import MASKS, normalize
from trainkb.search._normalize import stem, terms
from trainkb.search._policy import WORDS


@pytest.mark.parametrize(
    ("raw", "masked"),
    [
        ("DataLoader worker (pid 5123) is killed", "dataloader worker (pid <num>) is killed"),
        ("at 0x7f3a2b1c9d40 in libc", "at <hex> in libc"),
        ("got input size torch.Size([1, 256, 1, 1])", "got input size <shape>"),
        ("shape [4, 10] vs (2, 3)", "shape <shape> vs <shape>"),
        ("Tried to allocate 128.00 MiB", "tried to allocate <size>"),
        ('File "/home/u/proj/train.py", line 50', 'file "<path>", line <num>'),
        ("bind to 10.0.0.1:29500 failed", "bind to <addr> failed"),
        ("[Rank 3] Watchdog", "[rank <num>] watchdog"),
        ("port: 29500, useIpv6", "port <num>, useipv6"),
        ("RuntimeError:   CUDA  error", "runtimeerror: cuda error"),
        ("sm_86 fp16 bf16 cuda:0", "sm_86 fp16 bf16 cuda:<num>"),
        ("see https://pytorch.org/docs/x.html", "see <url>"),
    ],
)
def test_masks(raw: str, masked: str) -> None:
    assert normalize(raw) == masked


def test_terms_split_identifiers_and_drop_stopwords() -> None:
    words = terms("the find_unused_parameters flag was shuffled")
    assert "find_unused_parameters" in words and stem("unused") in words and "the" not in words
    assert "shuffl" in words


def _every_mask(line: str) -> str:
    """The masks applied one after another with no gate: what ``normalize`` must equal."""
    for placeholder, pattern in MASKS:
        line = pattern.sub(placeholder, line)
    return " ".join(line.split()).lower()


def _terms_unskipped(text: str) -> list[str]:
    """``terms`` with the url and path masks run over the whole text: what the word-wise run must equal."""
    for _placeholder, pattern in MASKS[:2]:
        text = pattern.sub(" ", text)
    out: list[str] = []
    for word in re.findall(r"[a-z][a-z0-9_]*[a-z0-9]|[a-z]", text.lower()):
        if word not in WORDS.stop:
            out.append(stem(word))
            if "_" in word:
                parts = [part for part in word.split("_") if len(part) >= WORDS.part_min_chars]
                out.extend(stem(part) for part in parts if part not in WORDS.stop)
    return out


def _pastes() -> list[str]:
    root = Path(__file__).resolve().parents[2] / "benchmarks"
    texts = [json.loads(line)["text"] for path in sorted(root.glob("*.jsonl")) for line in path.open() if line.strip()]
    return texts + [line for text in texts for line in text.splitlines()]


def test_gates_and_word_wise_masks_change_nothing() -> None:
    """Skipping a mask whose gate fails, and masking paths word by word, give the same text and terms."""
    rng = random.Random(3)
    pieces = [*"ab_cdeFXyz019./\\:-~@+ \t\n\x0b\x1c\u00a0\u2028Σİ\u212a[](),=", "py", "json", ".pt", "://"]
    pieces += ["http", "file", "C:", "rank", "pid", "0x", "torch.Size([", "localhost:", "[::", "KB", "  "]
    made = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 40))) for _ in range(5_000)]
    for text in [*_pastes(), *made]:
        assert normalize(text) == _every_mask(text), text
        assert terms(text) == _terms_unskipped(text), text
