"""The record format: pydantic models for one catalogue entry and for areas.yaml.

Every model forbids unknown keys, because a misspelt key that silently vanishes is
data lost. Cross-record rules (dangling links, id/filename agreement, regexes that
match their examples) live in the linter; these models only judge one file.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)

from ._locate import AREA_FILE

__all__ = [
    "AREA_FILE",
    "ENTRY_ID_PATTERN",
    "RELATION_LABELS",
    "Area",
    "AreasFile",
    "Check",
    "Entry",
    "ExpectHangs",
    "ExpectRaises",
    "ExpectWarns",
    "ExternalPointer",
    "Link",
    "Mutation",
    "Reference",
    "Relation",
    "Requires",
    "Section",
    "Signature",
    "Tell",
    "TellCompare",
    "TellCondition",
    "Verification",
    "VersionNote",
]

# A prefix of capitals (one per area or section; a team layer brings its own) and a number.
ENTRY_ID_PATTERN = r"^[A-Z]{1,4}[1-9][0-9]{0,3}$"
SLUG_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"

Relation = Literal["see-also", "cause-of", "caused-by", "pairs-with", "contrast"]
# how a link reads to a person (`kb show`, the TUI's Markdown, the site): "Causes: D3 — ..."
RELATION_LABELS: dict[Relation, str] = {
    "see-also": "See also",
    "cause-of": "Causes",
    "caused-by": "Caused by",
    "pairs-with": "Pairs with",
    "contrast": "Contrast with",
}
NonEmpty = Annotated[str, Field(min_length=1)]
Slug = Annotated[str, Field(pattern=SLUG_PATTERN, max_length=60)]
EntryId = Annotated[str, Field(pattern=ENTRY_ID_PATTERN)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=False)


class Signature(_Strict):
    """Something the failure prints: a literal substring or a regex, plus a real example line."""

    literal: str | None = Field(default=None, min_length=3, description="Exact substring of the output.")
    regex: str | None = Field(default=None, min_length=3, description="Python regex searched in the output.")
    type: str | None = Field(
        default=None,
        description="Exception or warning class that carries the text, e.g. RuntimeError or "
        "torch.distributed.DistBackendError.",
    )
    kind: Literal["exception", "warning", "log", "shell"] = Field(
        default="exception",
        description="exception: a raised error's message; warning: a Python warning; log: a log "
        "line (NCCL, launcher); shell: what the shell or kernel prints (Killed, Bus error).",
    )
    example: NonEmpty = Field(description="A line copied from real output; lint checks the signature matches it.")
    note: str | None = Field(default=None, description="Where this wording comes from, e.g. 'torch < 2.0'.")
    names_cause: bool | None = Field(
        default=None,
        description="true: whoever prints this message has this entry's root cause, so its fix applies; false: "
        "several root causes print it and this entry explains only some of them. Search ranks by both, but only a "
        "cause-naming signature makes an answer medium or high. Required on signatures (lint), unused on excludes.",
    )

    @model_validator(mode="after")
    def _one_matcher(self) -> Signature:
        if (self.literal is None) == (self.regex is None):
            raise ValueError("give exactly one of 'literal' or 'regex'")
        return self


class TellCompare(_Strict):
    """A numeric test on the first line ``match`` matches: ``left op times * right``; sizes read as bytes."""

    match: NonEmpty = Field(description="RE2 regex with named groups, searched line by line.")
    left: NonEmpty = Field(description="Named group of `match` on the left of the comparison.")
    op: Literal[">", ">=", "<", "<="]
    right: str | float = Field(description="Named group of `match`, or a number.")
    times: float = Field(default=1.0, gt=0, description="Factor applied to the right-hand value.")


class TellCondition(_Strict):
    """One condition of a tell; exactly one of its keys is given."""

    line: str | None = Field(default=None, min_length=3, description="Some line of the output matches this regex.")
    no_line: str | None = Field(default=None, min_length=3, description="No line of the output matches this regex.")
    compare: TellCompare | None = None
    rises: str | None = Field(
        default=None,
        min_length=3,
        description="Regex with a named group `value`: the values of matching lines, in order, rise "
        "(at least three, the last at least 10% above the first, twice as many rises as falls).",
    )

    @model_validator(mode="after")
    def _one_kind(self) -> TellCondition:
        given = [k for k in ("line", "no_line", "compare", "rises") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of 'line', 'no_line', 'compare' or 'rises'")
        return self


class Tell(_Strict):
    """What singles this entry out among the entries that print the same symptom line."""

    says: Annotated[str, Field(min_length=8, max_length=200)] = Field(
        description="The sign a person looks for, and what it means, in one sentence."
    )
    when: list[TellCondition] = Field(min_length=1, description="Every condition must hold for the tell to fire.")
    source: NonEmpty = Field(
        description="Where the example comes from: a public thread's URL, `check:<name>` of this entry's "
        "check, or the repository path of a committed capture."
    )
    example: NonEmpty = Field(description="Real output the tell fires on; lint runs each tell on it and its siblings'.")


class Link(_Strict):
    """A typed cross-reference to another entry; backlinks are computed, never written."""

    id: EntryId
    relation: Relation
    why: NonEmpty = Field(description="One line: why a reader of this entry should follow the link.")


class ExternalPointer(_Strict):
    """A topic outside the catalogue (a guide, a skill) that the entry defers to."""

    text: NonEmpty
    url: str | None = None


class Reference(_Strict):
    title: NonEmpty
    url: NonEmpty


class Requires(_Strict):
    """What a check needs; an unmet requirement makes the check `skipped` with the reason."""

    torch: str | None = Field(default=None, description="PEP 440 specifier, e.g. '>=2.4'.")
    cuda: bool = False
    min_gpus: int = Field(default=0, ge=0)
    processes: int = Field(default=1, ge=1, le=8, description="Ranks launched with torch.distributed env vars.")
    packages: list[NonEmpty] = Field(default_factory=list, description="Importable module names.")
    platform: list[Literal["linux", "darwin", "win32"]] | None = None

    @field_validator("torch")
    @classmethod
    def _valid_specifier(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                SpecifierSet(value)
            except InvalidSpecifier as exc:
                raise ValueError(f"not a PEP 440 version specifier: {value!r}") from exc
        return value


class _Matcher(_Strict):
    match: NonEmpty = Field(description="Python regex searched in the message.")

    @field_validator("match")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"regex does not compile: {exc}") from exc
        return value


class RaisesSpec(_Matcher):
    type: NonEmpty = Field(description="Exception class name; a subclass also satisfies it.")


class WarnsSpec(_Matcher):
    category: NonEmpty = Field(description="Warning class name; a subclass also satisfies it.")


class HangsSpec(_Strict):
    seconds: float = Field(gt=0, le=120, description="The snippet must still run after this long.")


class ExpectRaises(_Strict):
    raises: RaisesSpec


class ExpectWarns(_Strict):
    warns: WarnsSpec


class ExpectHangs(_Strict):
    hangs: HangsSpec


_EXPECT_TAGS: dict[type[BaseModel], str] = {ExpectRaises: "raises", ExpectWarns: "warns", ExpectHangs: "hangs"}


def _expect_tag(value: Any) -> str | None:
    if isinstance(value, str):
        return "ok"
    if isinstance(value, dict) and len(value) == 1:
        return str(next(iter(value)))
    if isinstance(value, BaseModel):
        return _EXPECT_TAGS.get(type(value))
    return None


Expectation = Annotated[
    Annotated[Literal["ok"], Tag("ok")]
    | Annotated[ExpectRaises, Tag("raises")]
    | Annotated[ExpectWarns, Tag("warns")]
    | Annotated[ExpectHangs, Tag("hangs")],
    Discriminator(
        _expect_tag,
        custom_error_type="expectation",
        custom_error_message="expect must be 'ok' or one of {raises: ...}, {warns: ...}, {hangs: ...}",
    ),
]


class Mutation(_Strict):
    """A counterfactual: an edit of the check's code that removes the behaviour its claim is about.

    `kb check --mutants` runs the edited code and requires the expectation to fail; a mutant that
    still passes shows the check does not depend on its claim.
    """

    find: NonEmpty = Field(description="Substring of `code`, occurring exactly once, that the edit replaces.")
    replace: str = Field(
        description="What replaces it: the torch call swapped, the configuration flipped, "
        "the fix dropped. Never an edit of an assert or of a line that only prints."
    )
    why: NonEmpty = Field(description="A few words: what the edit removes, e.g. 'no scaler.unscale_'.")


class Check(_Strict):
    """A runnable snippet that proves one claim against the installed torch."""

    name: Slug
    claim: NonEmpty = Field(description="One sentence: what this check proves.")
    demonstrates: Literal["failure", "fix"]
    code: NonEmpty = Field(description="Python run as __main__ in a fresh temp dir.")
    expect: Expectation
    requires: Requires = Field(default_factory=Requires)
    timeout: float | None = Field(default=None, gt=0, le=600, description="Seconds; default 60.")
    also_matches: list[EntryId] = Field(
        default_factory=list,
        description="Other entries that search may rank first for this check's output.",
    )
    mutation: Mutation | None = Field(
        default=None,
        description="The counterfactual edit `kb check --mutants` runs; its expectation must then fail.",
    )


class Verification(_Strict):
    """Why an entry carries no checks: the reader sees manual vs pending."""

    status: Literal["manual", "pending"]
    reason: NonEmpty


class VersionNote(_Strict):
    """Where current torch (or a library) differs from older releases or from the source material."""

    torch: str | None = Field(default=None, min_length=1, description="torch version or range, e.g. '>=2.4'.")
    library: str | None = Field(
        default=None, min_length=1, description="Another library and its version, e.g. 'transformers>=5.0'."
    )
    note: NonEmpty

    @model_validator(mode="after")
    def _one_subject(self) -> VersionNote:
        if (self.torch is None) == (self.library is None):
            raise ValueError("give exactly one of 'torch' or 'library'")
        return self

    @property
    def subject(self) -> str:
        return f"torch {self.torch}" if self.torch is not None else str(self.library)


class Entry(_Strict):
    """One failure mode: Symptom, Root cause, Fix, with signatures, links and checks."""

    id: EntryId
    overrides: EntryId | None = Field(
        default=None,
        description="In a layered catalogue: this record replaces the lower layer's record of the same id "
        "(write the record's own id). Without it an id already used below is a lint error.",
    )
    title: Annotated[str, Field(min_length=8, max_length=160)]
    area: Slug
    section: Slug
    tags: list[Slug] = Field(min_length=1)
    aliases: list[NonEmpty] = Field(default_factory=list)
    symptom: str
    root_cause: str
    fix: str
    fix_summary: str = Field(
        min_length=8,
        max_length=120,
        description="One imperative line a reader can act on at once; inline code only, no other Markdown.",
    )
    signatures: list[Signature] = Field(default_factory=list)
    excludes: list[Signature] = Field(
        default_factory=list,
        description="Output that rules this entry out although its signatures match: a message only a "
        "different failure prints (search then ranks the entry low).",
    )
    tells: list[Tell] = Field(
        default_factory=list,
        description="Conditions on the rest of the output that single this entry out among the entries "
        "printing the same symptom line (its family); search answers with the one whose tell fires.",
    )
    links: list[Link] = Field(default_factory=list)
    external: list[ExternalPointer] = Field(default_factory=list)
    references: list[Reference] = Field(default_factory=list)
    version_notes: list[VersionNote] = Field(default_factory=list)
    checks: list[Check] = Field(default_factory=list)
    verification: Verification | None = None

    @model_validator(mode="after")
    def _checks_or_reason(self) -> Entry:
        if not self.checks and self.verification is None:
            raise ValueError(
                "an entry without checks must say why: add verification: {status: manual|pending, reason: ...}"
            )
        if self.checks and self.verification is not None:
            raise ValueError("verification is only for entries without checks; remove it or the checks")
        names = [c.name for c in self.checks]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"check names must be unique within an entry: {', '.join(dupes)}")
        return self


class Section(_Strict):
    id: Slug
    title: NonEmpty


class Area(_Strict):
    id: Slug
    title: NonEmpty
    order: int = Field(ge=0)
    scope: NonEmpty = Field(description="One paragraph: what this area covers.")
    sections: list[Section] = Field(min_length=1)


class AreasFile(_Strict):
    areas: list[Area] = Field(min_length=1)
