"""The normalisation table: variable parts masked, class and API names kept."""

from __future__ import annotations

import pytest

from trainkb.search import normalize
from trainkb.search._normalize import stem, terms


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
