"""Signature drift: a check's own error output must lead search to its own entry.

A `raises`/`warns` check captures what torch really printed. If search does not rank the
check's entry first for that text, the entry's signatures no longer describe the torch it
claims to cover — the catalogue has drifted, and the run fails. A message that several root
causes print (docs/search.md: "ambiguous", or a `names_cause: false` signature) only needs to
rank its entry first, or to name it among the candidates of a differential: search is never
confident on it alone.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..catalogue import Catalogue, CheckStatus
from ._runner import CheckResult

__all__ = ["apply_drift_check"]


def apply_drift_check(results: list[CheckResult], cat: Catalogue, root: Path | list[Path]) -> list[CheckResult]:
    """Results with passing raises/warns checks turned into failures where search disagrees."""
    from ..search import search

    checks = {(e.id, c.name): c for e in cat.entries.values() for c in e.checks}
    out = []
    for result in results:
        check = checks.get((result.entry, result.check))
        if (
            result.status != CheckStatus.PASSED
            or result.expect not in {"raises", "warns"}
            or not result.evidence
            or not check
        ):
            out.append(result)
            continue
        response = search(result.evidence[0], top=3, catalogue=root)
        accepted = {result.entry, *check.also_matches}
        top = response.results[0].id if response.results else None
        # a message several root causes print (ambiguous in public reports, or `names_cause: false`) cannot make
        # search confident; ranking first is what it can do (the entry's first signature line decides, even when an
        # alias of the same words is listed before it)
        matched = [e for e in response.results[0].evidence if e.via == "signature"] if response.results else []
        generic = bool(matched) and (matched[0].ambiguous or not matched[0].names_cause)
        # a differential weighs the symptom's causes against each other: naming this entry among them is right
        candidates = (
            {r.id for r in response.results[: response.candidates]} if response.status == "differential" else set()
        )
        if (top in accepted and (not response.abstained or generic)) or accepted & candidates:
            out.append(result)
            continue
        ranked = ", ".join(f"{r.id} ({r.score:.0f})" for r in response.results) or "nothing"
        why = "search abstained" if response.abstained else f"search ranked {top} first"
        out.append(
            replace(
                result,
                status=CheckStatus.FAILED,
                message=f"signature drift: {why} for this check's own output (top 3: {ranked}); "
                f"update {result.entry}'s signatures or list the other id in also_matches",
            )
        )
    return out
