"""Version-bounded sentences carry their evidence: a claim a reader can test names where it was tested.

A sentence of a record's prose that names torch, Python, a library, NCCL or CUDA with a version
number ("torch 2.6 and later default to ...", "pip >= 24.1 refuses ...") states a fact that changes
between releases, and such facts were the ones independent reads found wrong most often. The
sentence itself must say where the fact comes from: a check of the catalogue (``check NAME``), a
URL, an ``owner/repo#N`` issue or pull request, or a source file given by path or line
(``transformers/trainer.py:1234``). Fenced code is code, not a claim.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .._markdown import code_blocks

__all__ = ["unsourced_version_sentences"]

# a project or tool this catalogue's prose states versions of, followed by the version it states
_VERSIONED = re.compile(
    r"\b(?:torch|PyTorch|Python|transformers|accelerate|peft|NCCL|CUDA|cuDNN|DeepSpeed|Lightning|pip|NumPy|"
    r"Triton|datasets|bitsandbytes|driver|TRL|diffusers|safetensors|setuptools|huggingface_hub|torchvision|"
    r"xformers|flash[-_]attn|apex)\s*(?:>=|≥|<=|≤|<|>|==)?\s*v?\d+(?:\.\d+)+",
    re.IGNORECASE,
)
# a name may sit on the next line of a folded block: any run of whitespace stands for the space
_CHECK_NAME = re.compile(
    r"\bchecks?\s+[`']?(?P<names>[a-z0-9][a-z0-9-]*(?:[`']?(?:,|\s+and)\s+[`']?[a-z0-9][a-z0-9-]*)*)"
)
_ELSEWHERE = re.compile(
    r"https?://\S+"  # a page
    r"|\b[\w.-]+/[\w.-]+#\d+\b"  # owner/repo#N
    r"|\b[\w.-]+(?:/[\w.-]+)+\.(?:py|pyx|cpp|cu|cc|h|hpp|c)\b"  # a source file by path
    r"|\b[\w.-]+\.(?:py|pyx|cpp|cu|cc|h|hpp|c):\d+"  # ... or by line
)
# a sentence ends at . ; ! ? before a capital, a code span, a bracket, a quote or a digit; a blank line
# or a list item also ends one
_SENTENCE_END = re.compile(r"(?<=[.;!?])\s+(?=[A-Z`(\"'*0-9])|\n\s*\n|\n\s*(?:[-*]|\d+\.)\s")


def _without_code(prose: str) -> str:
    """``prose`` with its code blocks blanked, found as the fix-code rule finds them."""
    lines = prose.split("\n")
    for token in code_blocks(prose):
        if token.map:
            start, end = token.map
            lines[start:end] = [""] * (end - start)
    return "\n".join(lines)


def _cited_checks(sentence: str) -> list[str]:
    """The check names a sentence cites (``check NAME``, ``checks A, B and C``), known or not."""
    return [
        name.strip(" `'")
        for match in _CHECK_NAME.finditer(sentence)
        for name in re.split(r",|\s+and\s+", match["names"])
        if name.strip(" `'")
    ]


def unsourced_version_sentences(prose: str, checks: frozenset[str]) -> Iterator[str]:
    """The sentences of ``prose`` that state a version and name no evidence (``checks``: every check name)."""
    for sentence in _SENTENCE_END.split(_without_code(prose)):
        if not _VERSIONED.search(sentence) or _ELSEWHERE.search(sentence):
            continue
        if not any(name in checks for name in _cited_checks(sentence)):
            yield " ".join(sentence.split())
