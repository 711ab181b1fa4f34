"""The detail pane: the fix first (title, one-line fix, Fix), then the rest of the entry."""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Input, Markdown, OptionList, Static
from textual.widgets.option_list import Option

from .._present import view
from .._terminal import printable
from ..catalogue import Entry
from ..search import SearchResponse
from ._code import EntryMarkdown
from ._hints import hint_labels

__all__ = ["EntryView", "candidate_lines", "diagnosis_markdown", "inline_code"]

SYMPTOM_CHARS = 160  # of the symptom line quoted at the top of a differential
FOLLOW = "Follow: press a link's key (or ↑↓ and Enter)"
EMPTY = "Nothing selected yet: paste above, or Ctrl+P to jump to an entry."


def _md(text: str) -> str:
    """One line of record or paste text for Markdown: printable, with Markdown's own markers escaped."""
    out = printable(text, newlines=False)
    for char in "\\*_[]<>#|":
        out = out.replace(char, "\\" + char)
    return out


def candidate_lines(response: SearchResponse) -> list[tuple[Text, Text, Text]]:
    """A differential's candidates as (id and title, the sign that decides, the fix): three short fields each,
    so that ANSWER.max_candidates of them fit the pane at 120×40 without scrolling."""
    out = []
    shown = view(response)
    for row in shown.rows[: shown.leads] if shown.kind == "differential" else []:
        result = row.result
        sign = result.tell.says if result.tell else "no sign of its own in the output: compare its symptom"
        seen = "seen: " if result.tell and result.tell.fired else "look for: "
        head = Text.assemble((result.id, "bold"), " · ", inline_code(printable(result.title, newlines=False)))
        tell = Text.assemble((seen, "italic"), inline_code(printable(sign, newlines=False)))
        fix = (
            Text.assemble(("Fix: ", "bold"), inline_code(printable(result.fix_summary, newlines=False)))
            if row.shows_fix
            else Text()
        )
        out.append((head, tell, fix))
    return out


def diagnosis_markdown(response: SearchResponse) -> str:
    """What the entry pane's document shows when no single entry answers: the closest entries (a differential's
    candidates are widgets of their own, ``candidate_lines``)."""
    if response.status == "differential":
        return ""
    closest = "\n".join(f"- **{r.id}** · {_md(r.title)}" for r in response.results[:5])
    return f"{closest}\n\nEnter on one in the list opens it." if closest else ""


def inline_code(text: str, code_style: str = "bold") -> Text:
    """A one-line field with its `inline code` styled and the backticks dropped."""
    out = Text()
    for i, part in enumerate(text.split("`")):
        out.append(part, style=code_style if i % 2 else "")
    return out


class EntryView(VerticalScroll):
    DEFAULT_CSS = """
    EntryView { border: round $foreground 25%; padding: 0 1; }
    EntryView:focus, EntryView:focus-within { border: heavy $border; border-title-color: $border; }
    EntryView:focus, EntryView:focus-within { border-title-style: bold; }
    EntryView.-guess { border-title-color: $warning; }
    EntryView MarkdownH2, EntryView MarkdownH3 { color: $text; background: $boost; text-style: bold; }
    EntryView #find { display: none; }
    EntryView #find.visible { display: block; }
    EntryView #title { text-style: bold; color: $text; }
    EntryView #aka { color: $text-muted; height: 1; text-wrap: nowrap; text-overflow: ellipsis; }
    EntryView #summary { background: $success 15%; border-left: thick $success; padding: 0 1; margin: 1 0 0 0; }
    EntryView #summary.-hidden, EntryView #aka.-hidden { display: none; }
    EntryView #summary.-guess { background: $warning 15%; border-left: thick $warning; }
    EntryView #doc { margin: 0; }
    EntryView #related { height: auto; max-height: 12; border: none; }
    EntryView #related:focus { border-left: heavy $border; }
    EntryView #candidates { height: auto; display: none; }
    EntryView #candidates.-shown { display: block; }
    EntryView .candidate { height: auto; }
    EntryView .candidate-head { height: 1; text-wrap: nowrap; text-overflow: ellipsis; background: $boost; }
    EntryView .candidate-head { margin: 1 0 0 0; }
    EntryView .candidate:first-of-type .candidate-head { margin: 0; }
    EntryView .candidate-tell { color: $text-muted; }
    """

    def compose(self) -> ComposeResult:
        yield Input(placeholder="find in entry (Enter: next, Esc: close)", id="find")
        yield Static(EMPTY, id="title")
        yield Static("", id="aka", classes="-hidden")
        yield Static("", id="summary", classes="-hidden")
        yield Vertical(id="candidates")
        yield EntryMarkdown("", id="doc", open_links=False)
        yield OptionList(id="related")

    entry_id: str | None = None  # whose fix and body are on screen (what the copy keys act on); None: no entry
    verdict: str | None = None  # why search answered with it, as its header says
    busy = False  # a search or an entry's render is under way, and the pane says so

    def on_mount(self) -> None:
        self.border_title = "Entry"

    def _busy(self, border_title: str, headline: str) -> None:
        """Say what is under way and hide all of what was shown: the pane never shows one entry's title over
        another's body (a Markdown body takes seconds to mount on a loaded machine)."""
        self.entry_id = None
        self.busy = True
        self.border_title = border_title
        self.remove_class("-guess")
        self.query_one("#title", Static).update(Text(headline, style="italic"))
        for part in ("#aka", "#summary"):
            self.query_one(part).add_class("-hidden")
        self.query_one("#candidates").remove_class("-shown")
        for part in ("#doc", "#related"):
            self.query_one(part).display = False
        self.scroll_home(animate=False)

    def _ready(self, entry_id: str | None) -> None:
        """The new content is all in place: show its body (called inside one batch update with the header)."""
        self.entry_id = entry_id
        self.busy = False
        self.query_one("#doc").display = True
        related = self.query_one("#related", OptionList)
        related.display = related.option_count > 0  # an empty list would be a Tab stop that shows nothing
        self.scroll_home(animate=False)

    def show_searching(self) -> None:
        """A paste was taken: the last answer is gone until this one's is ready."""
        self._busy("Searching…", "Searching the catalogue for this paste…")

    def show_idle(self) -> None:
        """Nothing to search (an empty paste): back to the first screen's words, unless an entry is shown; a
        differential or the closest entries belong to the paste that is gone, so they go with it."""
        if self.busy or self.entry_id is None:
            self._busy("Entry", EMPTY)
            self.query_one("#title", Static).update(EMPTY)
            self.busy = False

    async def show(
        self,
        entry: Entry,
        where: str,
        aliases: str,
        markdown: str,
        related: list[tuple[str, str]],
        titles: dict[str, str],
        verdict: str | None = None,
    ) -> None:
        """An entry, fix first. ``verdict``: why search answered with it; "guess" when it was only a
        candidate or the closest entry (the fix is then marked as unconfirmed)."""
        self._busy(f"Loading {entry.id}…", f"Loading {entry.id}…")
        await self._candidates([])
        await self.query_one("#doc", Markdown).update(markdown)  # mounted while hidden: no layout per block
        with self.app.batch_update():
            self._header(entry, where, aliases, verdict)
            self._related(related, titles)
            self._ready(entry.id)

    def showing(self, entry_id: str, verdict: str | None) -> bool:
        """The entry is on screen, fully loaded, with this verdict: nothing to render."""
        return not self.busy and self.entry_id == entry_id and self.verdict == verdict

    def _header(self, entry: Entry, where: str, aliases: str, verdict: str | None) -> None:
        self.verdict = verdict
        guess = verdict == "guess"
        self.border_title = f"{entry.id} · unconfirmed candidate" if guess else entry.id
        self.set_class(guess, "-guess")
        title = inline_code(f"{entry.id} — {entry.title}")
        if guess:
            title = Text.assemble(("UNCONFIRMED ", "bold reverse"), " ", title)
        self.query_one("#title", Static).update(title)
        aka = self.query_one("#aka", Static)
        aka.update(Text(f"{where} · also: {aliases}" if aliases else where))
        aka.set_class(False, "-hidden")
        summary = self.query_one("#summary", Static)
        fix = Text.assemble(("Fix: ", "bold"), inline_code(entry.fix_summary))
        if guess:
            fix = Text.assemble(("Unconfirmed: one candidate among several; check its symptom first. ", "bold"), fix)
        elif verdict:
            fix.append_text(Text.assemble("\n", ("Why this entry: ", "bold"), inline_code(printable(verdict))))
        summary.update(fix)
        summary.set_class(guess, "-guess")
        summary.set_class(False, "-hidden")

    def _related(self, related: list[tuple[str, str]], titles: dict[str, str]) -> None:
        options = self.query_one("#related", OptionList)
        options.clear_options()
        widths = [max((len(part) for part in parts), default=0) + 1 for parts in zip(*related, strict=True)]
        keys = hint_labels(len(related))
        width = max((len(key) for key in keys), default=1)
        for index, (relation, target) in enumerate(related):
            hint = keys[index] if index < len(keys) else ""
            options.add_option(
                Option(
                    Text.assemble(
                        (hint, "bold reverse"),
                        " " * (width - len(hint) + 1),
                        (relation.ljust(widths[0]), "italic"),
                        (target.ljust(widths[1]), "bold"),
                        " ",
                        inline_code(titles.get(target, "")),
                    ),
                    id=f"{relation}|{target}",
                )
            )
        options.border_title = FOLLOW if related else ""

    def hint_typed(self, typed: str) -> None:
        """The first letter of a two-letter key was pressed: the links' title says the second one follows."""
        options = self.query_one("#related", OptionList)
        if options.option_count:
            options.border_title = f"{typed}… then the second letter (Esc cancels)" if typed else FOLLOW

    async def show_diagnosis(self, response: SearchResponse) -> None:
        """No single entry answers: the differential (candidates, what decides, each fix) or the closest entries."""
        shown = view(response)
        differential = shown.kind == "differential"
        self._busy(shown.title, "Reading the closest entries…")
        await self._candidates(candidate_lines(response) if differential else [])
        await self.query_one("#doc", Markdown).update(diagnosis_markdown(response))
        with self.app.batch_update():
            self._diagnosis_header(response)
            self.query_one("#related", OptionList).clear_options()
            self.query_one("#related", OptionList).border_title = ""
            self._ready(None)
            self.query_one("#candidates").set_class(differential, "-shown")

    def _diagnosis_header(self, response: SearchResponse) -> None:
        shown = view(response)
        differential = shown.kind == "differential"
        self.border_title = shown.title
        self.remove_class("-guess")
        self.query_one("#title", Static).update(Text(shown.headline or ""))
        aka = self.query_one("#aka", Static)
        symptom = printable(response.symptom or "", newlines=False)[:SYMPTOM_CHARS]
        aka.update(Text(symptom))
        aka.set_class(not symptom, "-hidden")
        summary = self.query_one("#summary", Static)
        advice = shown.advice or ""
        summary.update(inline_code(printable(advice, newlines=False)))
        summary.set_class(True, "-guess")
        summary.set_class(differential or not advice, "-hidden")  # a differential's advice is in its candidates

    async def _candidates(self, lines: list[tuple[Text, Text, Text]]) -> None:
        """Fill the list of a differential's candidates (none: empty it), each as its head, sign and fix lines."""
        box = self.query_one("#candidates", Vertical)
        await box.remove_children()
        if lines:
            await box.mount_all(
                Vertical(
                    Static(head, classes="candidate-head"),
                    Static(tell, classes="candidate-tell"),
                    Static(fix, classes="candidate-fix"),
                    classes="candidate",
                )
                for head, tell, fix in lines
            )

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """Tab onto the links (below the fold) brings them into view."""
        self.call_after_refresh(self.scroll_to_widget, event.widget, animate=False)

    def open_find(self) -> None:
        box = self.query_one("#find", Input)
        box.add_class("visible")
        box.focus()

    def close_find(self) -> None:
        self.query_one("#find", Input).remove_class("visible")

    def find(self, needle: str, after: int = -1) -> int:
        """Scroll to the next Markdown block containing ``needle``; its index, or -1."""
        needle = needle.lower().strip()
        blocks = list(self.query_one("#doc", Markdown).children)
        if not needle:
            return -1
        order = list(range(after + 1, len(blocks))) + list(range(0, after + 1))
        for index in order:
            source = getattr(blocks[index], "source", None) or str(getattr(blocks[index], "_content", ""))
            if needle in source.lower():
                self.scroll_to_widget(blocks[index], animate=False, top=True)
                return index
        return -1
