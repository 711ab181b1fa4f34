"""`kb lint`: the catalogue-wide rules one record's schema cannot express.

Above both the catalogue and search in the layers: several rules ask search how it will read a
record (families, tells, signatures that can never match), so the rules cannot live in either.
"""

from __future__ import annotations

from ._rules import LintFinding, lint_catalogue, symptom_family_ids

__all__ = ["LintFinding", "lint_catalogue", "symptom_family_ids"]
