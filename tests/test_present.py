"""One view words every surface: `kb search`, `kb search --json`, the hook, `kb run`, the TUI and the site.

For real pastes (the OOM captures, the two-rank NCCL logs, the README's example, a Django traceback and a
progress bar), each surface renders its own response and must show the view's headline, each result's
label and fix exactly where the view shows them, and the advice line. No surface may spell a headline of
its own: the view's words appear in no other source file.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import sys
import tokenize
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from trainkb._advice import advice_block
from trainkb._present import ADVICE_LEAD, ALSO_RANKED, BANNERS, HEADLINES, LABELS, TITLES, View, diagnosis, view
from trainkb._terminal import printable
from trainkb.catalogue import find_catalogue, load_catalogue
from trainkb.cli import main
from trainkb.search import Evidence, SearchResponse, SearchResult, search
from trainkb.search._search import Tell

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
README_SEARCH = re.findall(r'^\$ kb search "(.+)"$', (ROOT / "README.md").read_text(encoding="utf-8"), re.M)
PASTES: dict[str, str] = {
    **{f"oom/{p.name}": p.read_text(encoding="utf-8") for p in sorted((FIXTURES / "oom").glob("*.txt"))},
    **{
        f"nccl/{p.parent.name}": p.read_text(encoding="utf-8")
        for p in sorted((ROOT / "tests" / "triage" / "fixtures" / "nccl").glob("*/combined.log"))
    },
    **{f"readme/{i}": text for i, text in enumerate(README_SEARCH)},
    "foreign/django": (FIXTURES / "foreign" / "django_operational_error.txt").read_text(encoding="utf-8"),
    "empty/progress": "100%|██████████| 10/10 [00:01<00:00,  9.80it/s]",  # a tqdm bar: no failure in it
}
TOP = 5


@pytest.fixture(scope="module", autouse=True)
def _cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The bundled catalogue's index in a cache of this module's own."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
        yield


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines()]


def _terminal_block(block: str, heading: str, response: SearchResponse) -> None:
    """A block kb prints (`kb search`, the hook, `kb run`): the view's banner, headline, fixes and advice."""
    shown = view(response)
    lines = _lines(block)
    assert f"── {heading}: {shown.banner} ──" in lines
    if shown.headline:
        assert shown.headline in lines
    else:
        assert not set(HEADLINES.values()) & set(lines)
    for row in shown.rows:
        fix = f"fix: {printable(row.result.fix_summary, newlines=False)}"
        assert (fix in lines) == row.shows_fix, (row.result.id, row.label)
    if shown.kind == "answer":
        assert lines[lines.index(f"── {heading}: {shown.banner} ──") + 2].startswith(f"{shown.rows[0].label_text}: ")
    others = [row.result.id for row in shown.rows[shown.leads :]]
    if others and shown.kind in ("answer", "differential"):
        assert f"{ALSO_RANKED}: {' '.join(others)}" in lines
    assert (
        (printable(shown.advice, newlines=False) in lines)
        if shown.advice
        else not any(line.startswith(ADVICE_LEAD) for line in lines)
    )


def test_the_pastes_cover_every_status() -> None:
    kinds = {view(search(text, top=TOP)).kind for text in PASTES.values()}
    assert kinds == set(HEADLINES), kinds
    assert README_SEARCH, "the README's `kb search` example moved"


@pytest.mark.parametrize("name", sorted(PASTES))
def test_kb_search_text_and_json(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    text = PASTES[name]
    response = search(text, top=TOP)
    main(["search", "--top", str(TOP), text])
    _terminal_block(capsys.readouterr().out, "kb search", response)
    main(["search", "--top", str(TOP), "--json", text])
    data = json.loads(capsys.readouterr().out)
    data.pop("triage", None)  # two ranks speak in the NCCL logs: `kb triage`'s part, not the view's
    assert data.pop("input")["cut"] is False  # how much of the input was read: the command's part, not the view's
    assert data == json.loads(json.dumps(response.to_json()))  # the contract carries no wording


@pytest.mark.parametrize("name", sorted(PASTES))
def test_the_hook(name: str) -> None:
    """What the excepthook writes (trainkb._hook calls advice_block so): nothing for an unknown failure."""
    text = PASTES[name]
    block = advice_block(text, top=3, output=text)
    response = search(text, top=3, output=text)
    if response.status == "unknown":
        assert block == ""
    else:
        _terminal_block(block, "kb", response)


@pytest.mark.skipif(sys.platform == "win32", reason="kb run watches through a pseudo-terminal")
@pytest.mark.parametrize("name", ["oom/m1_activations.txt", "nccl/sigkill-n2-r0", "nccl/nan-n2-r0", "foreign/django"])
def test_kb_run(name: str, tmp_path: Path) -> None:
    """`kb run` around a command that prints the paste and fails: the block after the command's output."""
    paste = tmp_path / "paste.txt"
    paste.write_text(PASTES[name], encoding="utf-8")
    script = f"import sys; sys.stdout.write(open({str(paste)!r}).read()); sys.exit(1)"
    proc = subprocess.run(
        [sys.executable, "-m", "trainkb", "run", "--", sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    text = PASTES[name]
    _terminal_block(proc.stderr, f"kb run: {sys.executable} exited with status 1", search(text, top=3, output=text))


async def test_the_tui_results_list() -> None:
    """The TUI's Matches list: the headline first, each row's label, a fix under a row only where the view has one."""
    from textual.app import App, ComposeResult

    from trainkb.tui._results import ResultsList

    class Matches(App[None]):
        def compose(self) -> ComposeResult:
            yield ResultsList(id="results")

    async with Matches().run_test(size=(120, 40)) as pilot:
        results = pilot.app.query_one(ResultsList)
        for name, text in PASTES.items():
            response = search(text, top=TOP)
            shown = view(response)
            results.show(response)
            prompts = [str(results.get_option_at_index(i).prompt) for i in range(results.option_count)]
            rows = prompts[1:] if shown.headline else prompts
            if shown.headline:
                assert prompts[0] == shown.headline, name
            for row, prompt in zip(shown.rows, rows, strict=False):
                assert prompt.startswith(row.result.id) and f" {row.label_text} " in prompt, (name, prompt)
                assert ("\n      fix: " in prompt) == row.shows_fix, (name, row.result.id)
            # the advice, its `code` shown as code (no backticks)
            assert rows[len(shown.rows) :] == ([shown.advice.replace("`", "")] if shown.advice else []), name


@pytest.fixture(scope="module")
def site_views(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """The site's view of each paste: engine.js answers, present.js words it from the index's words (one Node run
    over the bundled catalogue's index for the module: the tests below only read it)."""
    from trainkb.site import export_index

    index_js = tmp_path_factory.mktemp("site") / "search-index.js"
    index_js.write_text(export_index(load_catalogue(find_catalogue())), encoding="utf-8")
    static = ROOT / "site" / "static"
    driver = f"""
    const fs = require("fs"), vm = require("vm");
    globalThis.window = globalThis;
    vm.runInThisContext(fs.readFileSync({json.dumps(str(index_js))}, "utf8"));
    const engine = new (require({json.dumps(str(static / "engine.js"))}).Engine)(window.TRAINKB_INDEX.search);
    const present = require({json.dumps(str(static / "present.js"))});
    const pastes = JSON.parse(fs.readFileSync(0, "utf8")), out = {{}};
    for (const [name, text] of Object.entries(pastes)) {{
      const response = engine.search(text, {TOP}, 1), v = present.view(response, window.TRAINKB_INDEX.present);
      out[name] = {{response: response,
                   view: {{kind: v.kind, headline: v.headline, title: v.title, leads: v.leads, advice: v.advice,
                          rows: v.rows.map(r => [r.result.id, r.label, r.label_text, r.shows_fix])}},
                   diagnosis: present.diagnosis(response, window.TRAINKB_INDEX.present, id => null)}};
    }}
    process.stdout.write(JSON.stringify(out));
    """
    proc = subprocess.run(
        ["node", "-e", driver], input=json.dumps(PASTES), capture_output=True, text=True, timeout=300, check=True
    )
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def _as_site(shown: View) -> dict[str, object]:
    return {
        "kind": shown.kind,
        "headline": shown.headline,
        "title": shown.title,
        "leads": shown.leads,
        "advice": shown.advice,
        "rows": [[r.result.id, r.label, r.label_text, r.shows_fix] for r in shown.rows],
    }


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js (`node` on PATH)")
def test_the_site_words_each_paste_as_kb_does(site_views: dict[str, dict[str, Any]]) -> None:
    """present.js words the browser engine's answer as the view words the same answer (whether the two engines
    answer alike is tests/site/test_node_parity.py's question)."""
    site = site_views
    kinds = set()
    for name in PASTES:
        response = _response(site[name]["response"])
        assert site[name]["view"] == _as_site(view(response)), name
        kinds.add(view(response).kind)
    assert kinds == set(HEADLINES), kinds


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js (`node` on PATH)")
def test_the_site_copies_the_diagnosis_kb_copies(site_views: dict[str, dict[str, Any]]) -> None:
    """The Markdown "copy diagnosis" puts on the clipboard: present.js writes what trainkb._present.diagnosis
    writes for the same answer, a differential's evidence line and every candidate's sign, fix and link included."""
    site = site_views
    differentials = 0
    for name in PASTES:
        response = _response(site[name]["response"])
        copied = diagnosis(response, lambda _: None)
        assert site[name]["diagnosis"] == copied, name
        shown = view(response)
        if shown.kind != "differential":
            continue
        differentials += 1
        assert copied.startswith(f"trainkb: {shown.headline}\n- Evidence, line "), name
        for row in shown.rows[: shown.leads]:
            result = row.result
            assert f"**{result.id}: {result.title}** (candidate)" in copied, name
            assert result.tell is not None and result.tell.says in copied, name
            assert f"- Fix: {result.fix_summary}" in copied and f"`kb show {result.id}`" in copied, name
    assert differentials, "no paste gives a differential"


def _response(data: dict[str, Any]) -> SearchResponse:
    """The browser engine's answer as the dataclass the view reads."""
    results = [
        SearchResult(
            r["id"],
            r["title"],
            r["area"],
            r["score"],
            r["confidence"],
            [Evidence(e["line"], e["text"], e["signature"], None, via=e["via"]) for e in r["evidence"]],
            fix_summary=r["fix_summary"],
            tell=Tell(r["tell"]["says"], r["tell"]["fired"]) if r["tell"] else None,
        )
        for r in data["results"]
    ]
    return SearchResponse(
        data["query_kind"],
        data["abstained"],
        results,
        data["advice"],
        None,
        data["status"],
        data["why"],
        data["candidates"],
    )


# what the view alone may spell, and the wordings the surfaces used before it
WORDS = [
    *{w for w in BANNERS.values()},
    *{w for w in HEADLINES.values() if w},
    TITLES["closest"],
    LABELS["closest"],
    ALSO_RANKED,
    ADVICE_LEAD,
    "several causes print this line",
    "no entry explains this",
    "other entries, unconfirmed",
]


def _string_literals(path: Path) -> list[str]:
    """The string literals of a source file (not its comments): Python's by its tokenizer, JavaScript's by a regex."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".py":
        tokens = tokenize.generate_tokens(io.StringIO(text).readline)
        return [t.string for t in tokens if t.type in (tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", -1))]
    text = re.sub(r"/\*.*?\*/|//[^\n]*", "", text, flags=re.S)
    return re.findall(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'', text)


def test_no_surface_spells_a_headline_of_its_own() -> None:
    sources = [p for p in (ROOT / "src" / "trainkb").rglob("*.py") if p.name != "_present.py"]
    sources += sorted((ROOT / "site" / "static").glob("*.js"))
    sources += sorted((ROOT / "site" / "templates").glob("*"))
    found = []
    for path in sources:
        literals = _string_literals(path) if path.suffix in (".py", ".js") else [path.read_text(encoding="utf-8")]
        for literal in literals:
            plain = literal.replace("\\u2014", "—").casefold()
            found += [f"{path.relative_to(ROOT)}: {word!r}" for word in WORDS if word.casefold() in plain]
    assert not found, "\n".join(found)


def test_a_diagnosis_names_the_result_the_reader_opened() -> None:
    """`d` on a result ranked after the answer: the summary keeps the answer and adds that one, marked unconfirmed."""
    response = search(PASTES["readme/0"], top=TOP)
    shown = view(response)
    assert shown.kind == "answer" and len(shown.rows) > 1
    other = shown.rows[1].result
    plain = diagnosis(response, lambda _: None)
    assert f"**{other.id}:" not in plain
    opened = diagnosis(response, lambda i: f"https://kb.example.org/{i}/", also=other.id)
    assert f"**{shown.rows[0].result.id}: " in opened
    assert f"**{other.id}: {other.title}** ({LABELS['closest']})" in opened
    assert f"- Entry: https://kb.example.org/{other.id}/" in opened


def test_a_diagnosis_quotes_the_answers_sign_once() -> None:
    """When the answer's why already quotes the sign seen in the paste, the summary does not repeat it."""
    response = search((ROOT / "tests/fixtures/oom/nccl_timeout.txt").read_text(encoding="utf-8"), top=TOP)
    top = response.results[0]
    assert response.status == "answered" and top.tell and top.tell.fired and top.tell.says in (response.why or "")
    copied = diagnosis(response, lambda _: None)
    assert copied.count(top.tell.says) == 1 and "In the paste:" not in copied
