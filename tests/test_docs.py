"""The README and docs/ say what is true of this repository: the catalogue's figures, which checks
skip where, links that resolve, and nothing a clone lacks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import record

from trainkb.catalogue import load_catalogue, load_verification
from trainkb.site import build_site

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md")), ROOT / "reports" / "README.md"]
EXTRA = {"transformers", "accelerate", "peft", "trl", "diffusers", "lightning", "tokenizers", "huggingface_hub"}


@pytest.fixture(scope="module")
def catalogue():  # type: ignore[no-untyped-def]
    return load_catalogue(ROOT / "catalogue")


def _figure(text: str, pattern: str) -> int:
    match = re.search(pattern, text)
    assert match, pattern
    return int(match[1])


def test_docs_readme_figures_are_the_catalogues(catalogue, make_catalogue, tmp_path):
    text = " ".join((DOCS / "README.md").read_text(encoding="utf-8").split())
    entries = list(catalogue.entries.values())
    assert _figure(text, r"\*\*(\d+) entries\*\*") == len(entries)
    assert _figure(text, r"\*\*(\d+) areas\*\*") == len(catalogue.areas)
    assert _figure(text, r"\*\*(\d+) checks\*\*") == sum(len(e.checks) for e in entries)
    assert _figure(text, r"\((\d+) of them with a declared mutation\)") == sum(
        1 for e in entries for c in e.checks if c.mutation
    )
    assert _figure(text, r"(\d+) entries carry no check") == sum(1 for e in entries if not e.checks)
    # a site has a page per entry and per area, and four more: home, verification, search and 404
    small = load_catalogue(make_catalogue({"alpha/D1-x.yaml": record(), "beta/D2-x.yaml": record("D2", "beta")}))
    built = build_site(small, load_verification([]), tmp_path / "site")
    assert built.pages == len(small.entries) + len(small.areas) + 4
    assert _figure(text, r"\*\*(\d+) pages\*\*") == len(entries) + len(catalogue.areas) + 4


def _skip_list(text: str, lead: str) -> tuple[int, list[str]]:
    """(checks, entry ids) of the bullet that starts with ``lead`` in docs/checks.md."""
    bullet = " ".join(text[text.index(lead) :].split("\n- ")[0].split())
    return _figure(bullet, r"the (\d+) checks"), re.findall(r"\b[A-Z]{1,2}\d+\b", bullet.split(":", 1)[1])


def test_checks_page_lists_what_skips_where(catalogue):
    text = (DOCS / "checks.md").read_text(encoding="utf-8")
    gpu = [(e.id, c) for e in catalogue.ordered() for c in e.checks if c.requires.cuda or c.requires.min_gpus]
    cpu = [(e.id, c) for e in catalogue.ordered() for c in e.checks if (e.id, c) not in gpu]
    needs = [(i, c, set(c.requires.packages)) for i, c in cpu]
    deepspeed = [(i, c) for i, c, pk in needs if "deepspeed" in pk]
    extra = [(i, c) for i, c, pk in needs if EXTRA & pk and "deepspeed" not in pk]
    numpy = [(i, c) for i, c, pk in needs if pk == {"numpy"}]
    other = [(i, c) for i, c, pk in needs if pk and not EXTRA & pk and pk != {"numpy"} and "deepspeed" not in pk]
    for lead, expected in (
        ("**Without the `checks` extra**", extra),
        ("**Without NumPy**", numpy),
        ("**Without torchvision or OpenCV**", other),
        ("**Without DeepSpeed**", deepspeed),
        ("**Without a GPU**", gpu),
    ):
        count, ids = _skip_list(text, lead)
        assert (count, ids) == (len(expected), list(dict.fromkeys(i for i, _ in expected))), lead
    assert {p for _, c in other for p in c.requires.packages} <= {"torchvision", "cv2", "PIL", "numpy", "pip"}


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = page.read_text(encoding="utf-8")
    text = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    return {_slug(h) for h in re.findall(r"^#+ (.+)$", text, re.M)} | set(re.findall(r'<a id="([^"]+)">', text))


def test_every_link_in_the_readme_and_docs_resolves():
    for page in PAGES:
        text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            resolved = (page.parent / path).resolve() if path else page
            assert resolved.exists(), f"{page.name}: {target}"
            if anchor:
                assert anchor in _anchors(resolved), f"{page.name}: {target}"


def test_the_readme_is_a_short_tour():
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) < 200


def test_nothing_speaks_of_what_a_clone_lacks_or_of_how_it_was_made():
    texts = [*PAGES, *sorted((ROOT / "benchmarks").glob("*.md"))]
    words = re.compile(r"\.\./shared/|\bissue \d+\b|\bthis session\b|\bsession \d\b|\bhelpers?\b|\$REPO_URL", re.I)
    for page in texts:
        found = words.findall(page.read_text(encoding="utf-8"))
        assert not found, f"{page.relative_to(ROOT)}: {found}"


def test_the_documented_check_report_has_the_fields_kb_writes():
    """docs/json.md's `kb check --json` example holds every top-level field a run writes (mutants aside),
    and the text below it says what `stopped` means."""
    import json

    from trainkb.check import CheckSession

    section = (DOCS / "json.md").read_text(encoding="utf-8").split("## `kb check --json`", 1)[1]
    example = json.loads(section.split("```json\n", 1)[1].split("```", 1)[0])
    written = CheckSession(results=[], env={"name": "cpu-torch2.13.0"}, mutants=None, wall=0.0).report()
    assert list(example) == list(written)
    assert example["stopped"] is None and "`stopped` is `null`" in section
