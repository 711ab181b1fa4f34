"""Builders for small test catalogues."""

from __future__ import annotations

import textwrap

from trainkb.catalogue import MODELINE

AREAS = """\
areas:
  - id: alpha
    title: Alpha
    order: 1
    scope: Things that go wrong first.
    sections:
      - {id: one, title: One}
      - {id: two, title: Two}
  - id: beta
    title: Beta
    order: 2
    scope: Things that go wrong later.
    sections:
      - {id: three, title: Three}
"""


def record(entry_id: str = "D1", area: str = "alpha", section: str = "one", extra: str = "",
           checks: str | None = None, modeline: bool = True) -> str:
    """A valid record; ``extra`` is appended as more top-level YAML."""
    body = textwrap.dedent(f"""\
        id: {entry_id}
        title: A sample failure for tests
        area: {area}
        section: {section}
        tags: [sample]
        aliases: [sample alias]
        symptom: Something prints an error.
        root_cause: Something is wrong.
        fix: Do the right thing.
        fix_summary: Apply the one-line remedy.
        """)
    body += checks if checks is not None else "verification: {status: pending, reason: test record}\n"
    body += textwrap.dedent(extra)
    return (MODELINE + "\n" if modeline else "") + body


def checks_yaml(*checks: dict) -> str:
    """A `checks:` block from dicts with at least code and expect (name/claim filled in)."""
    import copy

    import yaml

    full = []
    for i, check in enumerate(checks):
        item = {"name": f"c{i}", "claim": "It behaves as claimed.", "demonstrates": "failure"}
        item.update(copy.deepcopy(check))  # no shared objects: PyYAML would write anchors, which records refuse
        full.append(item)
    return yaml.safe_dump({"checks": full}, sort_keys=False)


# A real two-rank DDP failure as a terminal shows it (the TUI tests paste it).
TRACEBACK = """\
Epoch 0:  12%|█▏        | 12/100 [00:03<00:22,  3.9it/s]
[rank1]: Traceback (most recent call last):
[rank1]:   File "/home/me/train.py", line 88, in <module>
[rank1]:     loss = model(batch).sum()
[rank1]: RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one.
"""
