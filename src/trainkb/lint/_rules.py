"""Catalogue-wide rules that one file's schema cannot express."""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .._github import workflow_command
from .._markdown import code_blocks
from .._terminal import CONTROL
from ..catalogue import (
    MODELINE,
    SCHEMA_FILE,
    TODO,
    Catalogue,
    Entry,
    ExpectRaises,
    ExpectWarns,
    YamlProblem,
    backtracking_risk,
    dotted,
    mutation_problems,
    nested_quantifier,
    render_schema,
    scoped_flags,
)
from ..search import (
    TellText,
    compile_signature,
    condition_data,
    fired,
    re2_error,
    symptom_families,
    tell_data,
    tell_patterns,
    unreachable_terms,
    utf8,
)
from ._versions import unsourced_version_sentences

__all__ = ["LintFinding", "lint_catalogue", "symptom_family_ids"]

_FILENAME = re.compile(r"^(?P<id>[A-Z]+[0-9]+)-(?P<slug>[a-z0-9]+(?:-[a-z0-9]+)*)\.yaml$")
_PROSE_FIELDS = ("symptom", "root_cause", "fix")
SUMMARY_LIMIT = 120
_CODE_SPAN = re.compile(r"`[^`\n]+`")
# Markdown a one-line summary must not carry once its inline code is removed
_SUMMARY_MARKUP = (
    (re.compile(r"\*\*|__|(?<![\w*])\*(?=\S)|(?<![\w])_(?=[^\s_])[^_]*_(?!\w)"), "emphasis"),
    (re.compile(r"\]\(|!\["), "a link or image"),
    (re.compile(r"<[A-Za-z/!]"), "HTML"),
    (re.compile(r"^\s*(?:#{1,6}\s|>|[-+*]\s|\d+[.)]\s)"), "a heading, quote or list marker"),
    (re.compile(r"`"), "an unclosed code span"),
)


@dataclass(frozen=True)
class LintFinding:
    """One lint finding; ``rule`` is stable and documented in docs/catalogue.md."""

    path: str
    line: int
    col: int
    field: str
    rule: str
    message: str
    file: Path | None = None  # the real file: layers may share a shown ``path``

    def __str__(self) -> str:
        return self.located(self.path)

    def located(self, shown: str) -> str:
        """The finding as a ``path:line:col:`` line on ``shown``."""
        field = f"{self.field}: " if self.field else ""
        return f"{shown}:{self.line}:{self.col}: {field}{self.message} [{self.rule}]"

    def from_here(self) -> str:
        """The real file from the working directory (absolute outside it); the shown path if unknown."""
        if self.file is None:
            return self.path
        absolute = os.path.normpath(os.path.abspath(self.file))
        relative = os.path.relpath(absolute)
        return absolute if relative == os.pardir or relative.startswith(os.pardir + os.sep) else relative

    def as_dict(self) -> dict[str, object]:
        return {
            "path": self.path,
            "line": self.line,
            "col": self.col,
            "field": self.field,
            "rule": self.rule,
            "message": self.message,
        }

    def github(self, file: str | None = None) -> str:
        """The finding as an annotation on ``file`` (default: its shown path)."""
        message = f"{self.field}: {self.message}" if self.field else self.message
        properties = {"file": file or self.path, "line": self.line, "col": self.col, "title": f"kb lint {self.rule}"}
        return workflow_command("error", properties, message)


class _Collector:
    def __init__(self, cat: Catalogue) -> None:
        self.cat = cat
        self.findings: list[LintFinding] = []

    def add(self, entry_id: str, loc: tuple[str | int, ...], rule: str, message: str) -> None:
        _, (line, col) = self.cat.positions[entry_id].position_of(loc)
        file = self.cat.files[entry_id]
        shown = self.cat.display_path(entry_id)
        self.findings.append(LintFinding(shown, line, col, dotted(loc), rule, message, file))

    def add_file(self, path: str, file: Path, rule: str, message: str, line: int = 1) -> None:
        self.findings.append(LintFinding(path, line, 1, "", rule, message, file))


def _from_problem(problem: YamlProblem) -> LintFinding:
    return LintFinding(problem.path, problem.line, problem.col, problem.field, "schema", problem.message, problem.file)


def _check_location(out: _Collector, entry: Entry, path: Path) -> None:
    match = _FILENAME.match(path.name)
    if match is None:
        out.add(entry.id, ("id",), "filename", f"file name {path.name!r} must be '<ID>-<slug>.yaml'")
    elif match["id"] != entry.id:
        out.add(entry.id, ("id",), "filename", f"id {entry.id!r} does not match the file name {path.name!r}")
    if path.parent.name != entry.area:
        out.add(entry.id, ("area",), "folder", f"area {entry.area!r} does not match the folder {path.parent.name!r}")


def _check_area(out: _Collector, entry: Entry) -> None:
    area = out.cat.area(entry.area)
    if area is None:
        known = ", ".join(a.id for a in out.cat.areas)
        out.add(entry.id, ("area",), "unknown-area", f"unknown area {entry.area!r} (areas.yaml has: {known})")
    elif entry.section not in {s.id for s in area.sections}:
        known = ", ".join(s.id for s in area.sections)
        out.add(
            entry.id,
            ("section",),
            "unknown-section",
            f"unknown section {entry.section!r} of area {area.id!r} (known: {known})",
        )


def _check_prose(out: _Collector, entry: Entry) -> None:
    for name in _PROSE_FIELDS:
        if not getattr(entry, name).strip():
            out.add(entry.id, (name,), "empty-prose", "must not be empty")


def _check_fix_summary(out: _Collector, entry: Entry) -> None:
    """One line a reader acts on at once: short, single-line, inline code its only markup."""
    summary = entry.fix_summary
    if "\n" in summary.strip() or "\r" in summary:
        out.add(entry.id, ("fix_summary",), "fix-summary", "must be a single line")
    if len(summary) > SUMMARY_LIMIT:
        out.add(entry.id, ("fix_summary",), "fix-summary", f"{len(summary)} characters; keep it to {SUMMARY_LIMIT}")
    bare = _CODE_SPAN.sub("", summary)
    for pattern, what in _SUMMARY_MARKUP:
        if pattern.search(bare):
            out.add(entry.id, ("fix_summary",), "fix-summary", f"no Markdown except inline code (found {what})")
            break


def _check_links(out: _Collector, entry: Entry) -> None:
    seen: set[str] = set()
    for i, link in enumerate(entry.links):
        if link.id == entry.id:
            out.add(entry.id, ("links", i, "id"), "self-link", "an entry must not link to itself")
        elif link.id not in out.cat.entries:
            out.add(entry.id, ("links", i, "id"), "dangling-link", f"links to unknown entry {link.id!r}")
        if link.id in seen:
            out.add(entry.id, ("links", i, "id"), "duplicate-link", f"{link.id} is linked more than once")
        seen.add(link.id)
    for i, check in enumerate(entry.checks):
        for j, other in enumerate(check.also_matches):
            if other not in out.cat.entries:
                out.add(
                    entry.id,
                    ("checks", i, "also_matches", j),
                    "dangling-link",
                    f"also_matches names unknown entry {other!r}",
                )


def _check_signatures(out: _Collector, entry: Entry) -> None:
    """Signatures and excludes: each runs in RE2, cannot freeze the site, matches its example."""
    for field, sigs in (("signatures", entry.signatures), ("excludes", entry.excludes)):
        for i, sig in enumerate(sigs):
            if sig.regex is not None:
                try:
                    re.compile(sig.regex)
                except re.error as exc:
                    out.add(entry.id, (field, i, "regex"), "regex-compile", f"regex does not compile: {exc}")
                    continue
                unsupported = re2_error(sig.regex)
                if unsupported is not None:
                    out.add(
                        entry.id,
                        (field, i, "regex"),
                        "regex-re2",
                        f"search runs signatures with RE2, which cannot run this regex ({unsupported}); "
                        "lookarounds, backreferences and \\Z are not supported",
                    )
                    continue
                risk = backtracking_risk(sig.regex)
                if risk is not None:
                    out.add(entry.id, (field, i, "regex"), "regex-backtracking", f"{risk} can freeze the site's search")
                if scoped_flags(sig.regex):
                    out.add(entry.id, (field, i, "regex"), "regex-browser", _SCOPED_FLAGS)
                matcher = compile_signature(sig.regex)
                matches = matcher is not None and matcher.search(utf8(sig.example)) is not None
            else:
                matches = sig.literal is not None and sig.literal in sig.example
            if not matches:
                out.add(
                    entry.id,
                    (field, i, "example"),
                    "signature-example",
                    f"the {'regex does not match' if sig.regex is not None else 'literal does not occur in'} "
                    "its own example",
                )
            elif field == "signatures" and (missing := unreachable_terms(sig)):  # excludes are never gated
                where = "regex" if sig.regex is not None else "literal"
                out.add(
                    entry.id,
                    (field, i, where),
                    "signature-gate",
                    f"search tries this signature only on text holding the word(s) {', '.join(missing)}, which "
                    "its own example lacks, so it never fires; make every word it requires a whole word of the "
                    "text",
                )
    for i, sig in enumerate(entry.signatures):
        if sig.names_cause is None:
            out.add(
                entry.id,
                ("signatures", i),
                "names-cause",
                "say whether the message alone establishes this entry's root cause: `names_cause: true` when "
                "whoever prints it has this cause, `false` when other root causes print it too",
            )
    for i, sig in enumerate(entry.excludes):
        exclude = compile_signature(sig.regex if sig.regex is not None else re.escape(sig.literal or ""))
        own = [s.example for s in entry.signatures if exclude is not None and exclude.search(utf8(s.example))]
        if own:
            out.add(
                entry.id,
                ("excludes", i),
                "exclude-own-signature",
                f"the exclude matches this entry's own signature example {own[0]!r}: it would rule the entry out "
                "wherever it applies",
            )


_SCOPED_FLAGS = (
    "a flag group such as (?i:...), (?-i:...) or (?s:...) does not compile in the site's JavaScript search; "
    "matching already ignores case, so drop (?i:...), and spell (?s:.) as [\\s\\S]"
)


def _regex_problem(pattern: str) -> tuple[str, str] | None:
    """(rule, message) when ``pattern`` cannot run in search, in the browser, or safely; None when it can."""
    try:
        re.compile(pattern)
    except re.error as exc:
        return "regex-compile", f"regex does not compile: {exc}"
    unsupported = re2_error(pattern)
    if unsupported is not None:
        return "regex-re2", f"search runs tells with RE2, which cannot run this regex ({unsupported})"
    risk = backtracking_risk(pattern)
    if risk is not None:
        return "regex-backtracking", f"{risk} can freeze the site's search"
    if scoped_flags(pattern):
        return "regex-browser", _SCOPED_FLAGS
    return None


def _check_tell_patterns(out: _Collector, entry: Entry) -> None:
    """Every regex of a tell runs in RE2 and names the groups its comparison or series reads."""
    for i, tell in enumerate(entry.tells):
        for j, condition in enumerate(tell.when):
            for kind, pattern in tell_patterns({"when": [condition_data(condition)]}):
                loc: tuple[str | int, ...] = ("tells", i, "when", j, kind)
                problem = _regex_problem(pattern)
                if problem is not None:
                    out.add(entry.id, loc, *problem)
                    continue
                groups = set(re.compile(pattern).groupindex)
                if kind == "rises" and "value" not in groups:
                    out.add(entry.id, loc, "tell-groups", "a rising series reads the named group `value`")
                if kind == "compare" and condition.compare is not None:
                    wanted = [condition.compare.left]
                    if isinstance(condition.compare.right, str):
                        wanted.append(condition.compare.right)
                    missing = [g for g in wanted if g not in groups]
                    if missing:
                        out.add(entry.id, loc, "tell-groups", f"the regex has no named group {', '.join(missing)}")


def _expectations(entry: Entry) -> Iterator[tuple[tuple[str | int, ...], str, str]]:
    """Each check's expected exception or warning: where it sits, its class name and its message pattern."""
    for i, check in enumerate(entry.checks):
        expect = check.expect
        if isinstance(expect, ExpectRaises):
            yield ("checks", i, "expect", "raises"), expect.raises.type, expect.raises.match
        elif isinstance(expect, ExpectWarns):
            yield ("checks", i, "expect", "warns"), expect.warns.category, expect.warns.match


def _check_expect_patterns(out: _Collector, entry: Entry) -> None:
    """A check's expected-message pattern runs under RE2 in `kb check`; one RE2 refuses would make the
    check an error, and one that backtracks exponentially hangs whoever runs it with Python's re
    (``pytest.raises(match=...)``, a reader trying it out), so both are refused here."""
    for where, _, pattern in _expectations(entry):
        loc = (*where, "match")
        unsupported = re2_error(pattern)
        if unsupported is not None:
            out.add(
                entry.id,
                loc,
                "expect-regex",
                f"kb check matches expected messages with RE2, which cannot run this regex ({unsupported}); "
                "lookarounds, backreferences and \\Z are not supported",
            )
        elif nested_quantifier(pattern):
            out.add(
                entry.id,
                loc,
                "expect-regex",
                "a repeat over a part that can match in several ways (such as (a+)+, (xx?)+ or (a|aa)+) takes "
                "exponential time in Python's re on a message a few dozen characters long",
            )


# A class as kb check names it: a bare name (ValueError) or a dotted path (torch.cuda.OutOfMemoryError).
_CLASS_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*", re.ASCII)


def _check_expect_types(out: _Collector, entry: Entry) -> None:
    """An expected exception or warning class is one class name: `kb check` compares it with the names
    of the raised class's bases, so `A|B` or `ValueError, TypeError` can never match and fails for ever."""
    for where, name, _ in _expectations(entry):
        loc = (*where, "type" if where[-1] == "raises" else "category")
        if _CLASS_NAME.fullmatch(name) is None:
            out.add(
                entry.id,
                loc,
                "expect-type",
                f"{name!r} is not a class name; give one class, bare (ValueError) or dotted "
                "(torch.cuda.OutOfMemoryError): a subclass of it also satisfies the check",
            )


# Packages a check may import only when it declares them under `requires: {packages: [...]}`: where
# one is missing, kb check then skips the check instead of reporting a ModuleNotFoundError as its verdict.
_OPTIONAL_PACKAGES = frozenset(
    {
        "accelerate", "apex", "bitsandbytes", "cv2", "datasets", "deepspeed", "diffusers", "fairscale",
        "flash_attn", "huggingface_hub", "lightning", "numpy", "peft", "PIL", "pytorch_lightning",
        "safetensors", "timm", "tokenizers", "torchao", "torchaudio", "torchvision", "transformers", "triton",
        "trl", "xformers",
    }
)  # fmt: skip
# what installing a declared package always installs too (its own required dependencies)
_PULLED_IN = {
    "tokenizers": {"transformers"},
    "huggingface_hub": {"transformers", "accelerate", "peft", "diffusers", "datasets"},
    "safetensors": {"transformers", "accelerate", "peft", "diffusers"},
    # torch itself does not require numpy (`pip install torch` leaves it out); these libraries do
    "numpy": {
        "transformers", "accelerate", "peft", "diffusers", "datasets", "torchvision", "lightning",
        "pytorch_lightning", "cv2", "timm", "bitsandbytes", "trl", "torchaudio",
    },
}  # fmt: skip
_IMPORT_GUARDS = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}


def _guarded(handlers: list[ast.ExceptHandler]) -> bool:
    """A try whose handler catches a failed import: the check copes without the package."""
    for handler in handlers:
        kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        if handler.type is None or any(isinstance(k, ast.Name) and k.id in _IMPORT_GUARDS for k in kinds):
            return True
    return False


def _imported(node: ast.AST) -> list[tuple[str, int]]:
    """(top-level package, line) of each absolute import outside a try that catches its failure."""
    found: list[tuple[str, int]] = []
    if isinstance(node, ast.Import):
        found += [(alias.name.split(".")[0], node.lineno) for alias in node.names]
    elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        found.append((node.module.split(".")[0], node.lineno))
    for child in ast.iter_child_nodes(node):
        if not (isinstance(node, ast.Try) and child in node.body and _guarded(node.handlers)):
            found += _imported(child)
    return found


def _check_requires(out: _Collector, entry: Entry) -> None:
    """A check that imports an optional package declares it, so kb check skips it where it is missing."""
    for i, check in enumerate(entry.checks):
        try:
            tree = ast.parse(check.code)
        except SyntaxError:
            continue  # kb check reports code that does not compile
        declared = set(check.requires.packages)
        missing: dict[str, int] = {}
        for package, line in _imported(tree):
            covered = package in declared or bool(_PULLED_IN.get(package, set()) & declared)
            if package in _OPTIONAL_PACKAGES and not covered:
                missing.setdefault(package, line)
        for package, line in missing.items():
            out.add(
                entry.id,
                ("checks", i, "requires"),
                "check-requires",
                f"the code imports {package} (its line {line}) but `requires: {{packages: [...]}}` does not name "
                "it: where it is missing the check would fail with ModuleNotFoundError instead of being skipped",
            )


def _check_fix_code(out: _Collector, entry: Entry) -> None:
    """A ```python block of a fix compiles: readers (and the TUI's copy key) take it as it stands."""
    fences = [t for t in code_blocks(entry.fix) if t.type == "fence"]
    for number, token in enumerate(t for t in fences if t.info.split()[:1] == ["python"]):
        try:
            compile(token.content, f"{entry.id} fix", "exec")
        except SyntaxError as exc:
            start = token.map[0] + 1 if token.map else 0
            out.add(
                entry.id,
                ("fix",),
                "fix-code",
                f"python block {number + 1} (from line {start} of the fix) does not compile: {exc.msg} "
                f"(its line {exc.lineno})",
            )


def _check_families(out: _Collector, entries: list[Entry], owned: set[str]) -> None:
    """Each family member has a tell; each tell fires on its own example and on none of a sibling's
    (its tells' examples and its signatures' examples, the bare symptom line among them).

    Families span every layer; only ``owned`` entries (the layers' own, or all) are reported."""
    by_id = {entry.id: entry for entry in entries}
    for entry in entries:
        if entry.id not in owned:
            continue
        for i, tell in enumerate(entry.tells):
            if not fired(tell_data(tell), TellText(tell.example.split("\n"))):
                out.add(entry.id, ("tells", i, "example"), "tell-example", "the tell does not fire on its own example")
    for family in symptom_families(entries):
        for member in family:
            if member not in owned:
                continue
            entry = by_id[member]
            if not entry.tells:
                others = ", ".join(m for m in family if m != member)
                out.add(
                    member,
                    ("signatures",),
                    "family-tell",
                    f"{member} shares a symptom line with {others}: add a tell that singles it out",
                )
            for i, tell in enumerate(entry.tells):
                plain = tell_data(tell)
                for other in family:
                    if other == member:
                        continue
                    examples = [t.example for t in by_id[other].tells] + [s.example for s in by_id[other].signatures]
                    hit = next((e for e in examples if fired(plain, TellText(e.split("\n")))), None)
                    if hit is not None:
                        out.add(
                            member,
                            ("tells", i),
                            "tell-sibling",
                            f"the tell also fires on {other}'s example {hit[:80]!r}: it does not single out {member}",
                        )


def symptom_family_ids(cat: Catalogue) -> list[list[str]]:
    """The catalogue's symptom families (entries printing the same line), for `kb lint --families`."""
    return symptom_families(cat.ordered())


def _strings(value: object, here: tuple[str | int, ...]) -> list[tuple[tuple[str | int, ...], str]]:
    if isinstance(value, str):
        return [(here, value)]
    if isinstance(value, dict):
        return [found for key, item in value.items() for found in _strings(item, (*here, key))]
    if isinstance(value, list):
        return [found for index, item in enumerate(value) for found in _strings(item, (*here, index))]
    return []


def _check_version_evidence(out: _Collector, entry: Entry, checks: frozenset[str]) -> None:
    """A sentence stating a version names its evidence in the same sentence (see ``_versions``)."""
    fields: list[tuple[tuple[str | int, ...], str]] = [((name,), getattr(entry, name)) for name in _PROSE_FIELDS]
    fields += [(("links", i, "why"), link.why) for i, link in enumerate(entry.links)]
    for loc, prose in fields:
        for sentence in unsourced_version_sentences(prose, checks):
            out.add(
                entry.id,
                loc,
                "version-evidence",
                f"states a version without its evidence: {sentence[:100]!r}; cite a check (`check NAME`), "
                "a URL, owner/repo#N or a source file in the same sentence, or drop the version",
            )


def _check_todos(out: _Collector, entry: Entry) -> None:
    for loc, text in _strings(out.cat.positions[entry.id].data, ()):
        if TODO in text:
            out.add(entry.id, loc, "todo", "still says TODO: write this part")


def _check_override(out: _Collector, entry: Entry) -> None:
    if entry.overrides is None:
        return
    if entry.overrides != entry.id:
        out.add(
            entry.id,
            ("overrides",),
            "override",
            f"overrides must name this record's own id {entry.id!r}, not {entry.overrides!r}",
        )
    elif entry.id not in out.cat.overridden:
        out.add(
            entry.id, ("overrides",), "override", f"no catalogue below this one has {entry.id!r}; remove `overrides`"
        )


def _check_control(out: _Collector, entry: Entry) -> None:
    """Escape sequences in a record would reach every terminal that prints it (kb list, show, search)."""
    for loc, text in _strings(entry.model_dump(exclude_defaults=True), ()):
        match = CONTROL.search(text)
        if match:
            out.add(
                entry.id,
                loc,
                "control-character",
                f"contains the control character U+{ord(match.group()):04X}; records hold plain text "
                "(terminals obey escape sequences)",
            )


def _check_mutations(out: _Collector, entry: Entry) -> None:
    for i, check in enumerate(entry.checks):
        for problem in mutation_problems(check):
            out.add(entry.id, ("checks", i, "mutation"), "mutation", problem)


def _check_urls(out: _Collector, entry: Entry) -> None:
    for i, ref in enumerate(entry.references):
        if not ref.url.startswith("https://"):
            out.add(entry.id, ("references", i, "url"), "reference-https", f"reference URL must be https: {ref.url}")
    for i, ext in enumerate(entry.external):
        if ext.url is not None and not ext.url.startswith("https://"):
            out.add(entry.id, ("external", i, "url"), "reference-https", f"external URL must be https: {ext.url}")


def _check_modeline(out: _Collector, entry: Entry, path: Path) -> None:
    first = path.read_text(encoding="utf-8").split("\n", 1)[0].strip()
    if first.startswith("\ufeff"):  # YAML reads past it, but the modeline is then not what the file starts with
        message = f"the file starts with a byte order mark (U+FEFF); save it as UTF-8 without one, {MODELINE!r} first"
        out.add_file(out.cat.display_path(entry.id), out.cat.files[entry.id], "modeline", message)
    elif first != MODELINE:
        out.add_file(
            out.cat.display_path(entry.id), out.cat.files[entry.id], "modeline", f"first line must be {MODELINE!r}"
        )


def _check_schema_file(out: _Collector) -> None:
    """A whole catalogue must carry a current schema.json; a layer may leave it out (it only helps
    editors). Over layers only the layers' own files are judged."""
    layered = bool(out.cat.layers)
    roots = [root for _name, root in out.cat.layers[1:]] if layered else [out.cat.root]
    for root in roots:
        schema_path = root / SCHEMA_FILE
        shown = f"{root.name}/{SCHEMA_FILE}"
        if not schema_path.is_file():
            if not layered:
                out.add_file(shown, schema_path, "schema-stale", f"schema.json is missing; run `kb schema -o {shown}`")
        elif (
            schema_path.stat().st_size != len(render_schema().encode())
            or schema_path.read_text(encoding="utf-8") != render_schema()
        ):
            out.add_file(shown, schema_path, "schema-stale", f"schema.json is out of date; run `kb schema -o {shown}`")


def lint_catalogue(cat: Catalogue) -> list[LintFinding]:
    """Every finding for the catalogue, load problems first, in a stable order.

    Over layers, the findings are the layers' own: their records, and how they fit the base
    (collisions, links, areas). The base is linted on its own, by whoever maintains it.
    """
    out = _Collector(cat)
    layered = bool(cat.layers)
    out.findings += [_from_problem(p) for p in cat.problems[cat.base_problems if layered else 0 :]]
    out.findings += [
        LintFinding(path, line, col, "", rule, message, file)
        for path, line, col, rule, message, file in cat.layer_findings
    ]
    for entry_id, paths in sorted(cat.duplicates.items()) if not layered else []:
        for path in paths[1:]:
            first = cat.display_path(entry_id)
            out.add_file(
                str(path.relative_to(cat.root.parent)),
                path,
                "duplicate-id",
                f"id {entry_id!r} is already used by {first}",
            )
    checks = frozenset(check.name for entry in cat.ordered() for check in entry.checks)
    for entry in cat.ordered():
        if layered and entry.id not in cat.origin:
            continue
        path = cat.files[entry.id]
        _check_location(out, entry, path)
        _check_area(out, entry)
        _check_prose(out, entry)
        _check_fix_summary(out, entry)
        _check_links(out, entry)
        _check_signatures(out, entry)
        _check_tell_patterns(out, entry)
        _check_expect_patterns(out, entry)
        _check_expect_types(out, entry)
        _check_requires(out, entry)
        _check_fix_code(out, entry)
        _check_mutations(out, entry)
        _check_urls(out, entry)
        _check_control(out, entry)
        _check_modeline(out, entry, path)
        _check_override(out, entry)
        _check_todos(out, entry)
        _check_version_evidence(out, entry, checks)
    _check_families(out, cat.ordered(), {e.id for e in cat.ordered() if not layered or e.id in cat.origin})
    _check_schema_file(out)
    return sorted(out.findings, key=lambda f: (f.path, f.line, f.col, f.rule))
