"""The trainkb TUI: paste on the left, ranked matches below it, the entry on the right."""

from __future__ import annotations

import time
from collections.abc import Awaitable
from typing import ClassVar

from textual import events, on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.command import CommandPalette
from textual.containers import Horizontal, Vertical
from textual.driver import Driver
from textual.widgets import ContentSwitcher, Footer, Header, Input, Markdown, OptionList, Static, TextArea, Tree
from textual.worker import get_current_worker

from .._present import diagnosis, entry_diagnosis, view
from ..search import SearchResponse
from ._browse import BrowsePane
from ._entry import EntryView
from ._help import KeysHelp
from ._hints import HINTS, hint_labels
from ._model import ENTRY_SCHEME, KnowledgeBase, fix_blocks, plural
from ._palette import EntryCommands
from ._paste import PasteBox, pasted, read_from
from ._results import ResultsList
from ._triage import TriagePanel

__all__ = ["TrainKBApp"]


class TrainKBApp(App[None]):
    """Search-as-you-paste over the catalogue, with browser-like history between entries."""

    TITLE = "trainkb"
    SUB_TITLE = "paste a traceback, read the fix"
    CSS = """
    #body { height: 1fr; }
    #left { width: 2fr; min-width: 30; }
    #switcher { height: 1fr; }
    #search-pane { height: 1fr; }
    #paste { height: 2fr; }
    #paste.-collapsed { height: 5; min-height: 5; }
    #results { height: 3fr; }
    #detail { width: 3fr; min-width: 20; }
    #body.-narrow #left { width: 34; min-width: 34; }
    #body.-narrow #detail { width: 1fr; }
    #body.-stacked { layout: vertical; }
    #body.-stacked #left { width: 1fr; min-width: 20; height: 1fr; }
    #body.-stacked #detail { width: 1fr; height: 1fr; }
    #too-narrow { display: none; height: 1fr; content-align: center middle; }
    Screen.-too-narrow #body, Screen.-too-narrow Footer { display: none; }
    Screen.-too-narrow #too-narrow { display: block; }
    """
    NARROW = 100  # columns below which the left pane gets a fixed width, the score bars go and the footer tightens
    STACKED = 60  # columns below which the entry pane goes under the paste and matches: beside a fixed-width left
    # pane it would be too narrow to read, and at 34 columns or fewer it had none at all
    TOO_NARROW = 20  # columns below which the panes are hidden behind a note: a few columns left some with none,
    # and Textual's option list raises when asked its height at width 0; the entry pane keeps TOO_NARROW columns
    # (clipped by the screen) in every layout, for the frames a resize draws before the classes follow the new width
    COMMANDS = App.COMMANDS | {EntryCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f1", "toggle_help", "Keys", id="help"),
        Binding("question_mark", "toggle_help", "Keys", show=False, id="help-alt"),
        Binding("ctrl+b", "toggle_browse", "Browse", id="browse"),
        Binding("ctrl+l", "focus_paste", "Paste box", show=False, id="focus-paste"),
        Binding("ctrl+n", "clear_paste", "New paste", id="clear-paste"),
        Binding("escape", "escape", "Paste box", show=False, id="focus-paste-esc"),
        Binding("left_square_bracket,alt+left", "history_back", "Back", id="back"),
        Binding("right_square_bracket,alt+right", "history_forward", "Forward", show=False, id="forward"),
        Binding("c", "copy_fix", "Copy fix", id="copy-fix"),
        *(
            Binding(str(n), f"copy_block({n})", f"Copy fix block {n}", show=False, id=f"copy-block-{n}")
            for n in range(1, 10)
        ),
        Binding("d", "copy_diagnosis", "Copy diagnosis", id="copy-diagnosis"),
        *(  # the key shown beside each of the entry's links follows it: one letter, or two past the 19th link
            Binding(key, f"follow_hint({key!r})", "Follow", show=n == 0, key_display="a-z", id=f"follow-{key}")
            for n, key in enumerate(HINTS)
        ),
        Binding("f", "follow", "Show the links", show=False, id="follow"),
        Binding("o", "open_site", "Open on site", show=False, id="open-site"),
        Binding("ctrl+f", "find", "Find in entry", show=False, id="find"),
        Binding("slash", "find", "Find in entry", show=False, id="find-slash"),
        Binding("ctrl+t", "toggle_theme", "Light/dark", show=False, id="theme"),
    ]

    def get_driver_class(self) -> type[Driver]:
        """Textual's choice, but on Linux a driver that survives input that is not valid UTF-8."""
        chosen = super().get_driver_class()
        if chosen.__module__ == "textual.drivers.linux_driver" and chosen.__name__ == "LinuxDriver":
            from ._driver import TolerantDriver

            return TolerantDriver
        return chosen

    def __init__(self, kb: KnowledgeBase, initial_text: str = "", blink: bool = True) -> None:
        super().__init__()
        self.kb = kb
        self.initial_text = initial_text
        self.blink = blink
        self.history: list[str] = []
        self.picked: list[
            bool
        ] = []  # per history step: opened as a guess (an unconfirmed candidate), not read on its own
        self.position = -1
        self.shown: str | None = None  # the entry in the pane; None while it shows a differential or nothing
        self.links: list[str] = []  # the shown entry's links, in the order of their keys (hint_labels)
        self.hint_typed = ""  # the first letter of a link's two-letter key, waiting for the second
        self.current_response: SearchResponse | None = None
        self._find_at = -1
        self.results_shown_at = 0.0
        self._pasted = False  # the text came from a paste: move on to the matches when they arrive
        self._pending: str | None = None  # a copy asked for while the pane was loading: "fix 2", "diagnosis"

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="body"):
            with Vertical(id="left"), ContentSwitcher(initial="search-pane", id="switcher"):
                with Vertical(id="search-pane"):
                    yield PasteBox(self.initial_text, id="paste")
                    yield TriagePanel(id="triage")
                    yield ResultsList(id="results")
                yield BrowsePane(self.kb, id="browse-pane")
            yield EntryView(id="detail")
        yield Static(f"Widen the window to {self.TOO_NARROW} columns or more.", id="too-narrow")
        yield Footer()

    def on_mount(self) -> None:
        paste = self.query_one("#paste", PasteBox)
        paste.cursor_blink = self.blink
        self.query_one("#filter", Input).cursor_blink = self.blink  # snapshots and tests need a steady cursor
        paste.focus()
        self._fit(self.size.width)
        self.query_one("#results", ResultsList).show(None)
        if self.initial_text.strip():
            self._pasted = True
            self.run_search(self.initial_text)

    async def on_event(self, event: events.Event) -> None:
        """A paste is a new crash to search, whatever has focus: one line pasted into a one-line box (find, the
        Browse filter, the palette's query) stays there; more lines leave Browse or the palette and search. A key
        that does not continue a two-letter link key drops its first letter (Esc only that)."""
        if isinstance(event, events.Key) and not event.is_forwarded and self.hint_typed:
            typed = self.hint_typed + (event.character if event.is_printable and event.character else "\0")
            if not any(key.startswith(typed) for key in hint_labels(len(self.links))):
                self._hint("")
                if event.key == "escape":
                    return
        if isinstance(event, events.Paste) and not event.is_forwarded:
            lines = event.text.strip("\r\n")  # terminals send a pasted line break as CR (tmux, VTE, iTerm2)
            one_line_box = isinstance(self.focused, Input) and "\n" not in lines and "\r" not in lines
            if isinstance(self.screen, CommandPalette) and not one_line_box:
                self.screen.dismiss()
            if self.screen is self.screen_stack[0] and not one_line_box:
                self.query_one("#detail", EntryView).close_find()
                self.query_one("#switcher", ContentSwitcher).current = "search-pane"
                self._take_paste()
                self.query_one("#paste", PasteBox)._forward_event(event)
                return
            event.text = pasted(event.text)  # into a one-line box: without its escapes, as the paste box shows it
        await super().on_event(event)

    def on_resize(self, event: events.Resize) -> None:
        self._fit(event.size.width)

    def _fit(self, width: int) -> None:
        self.screen.set_class(width < self.TOO_NARROW, "-too-narrow")  # the paste and its answer are kept
        narrow = width < self.NARROW
        self.query_one("#body").set_class(narrow, "-narrow").set_class(width < self.STACKED, "-stacked")
        footer = self.query_one(Footer)
        if footer.compact != narrow:  # every key on one line at 80 columns (F1 lists Ctrl+P, the palette)
            footer.compact = narrow
            footer.show_command_palette = not narrow
            footer.refresh(recompose=True)
        results = self.query_one("#results", ResultsList)
        if results.compact_rows != narrow:
            results.compact_rows = narrow
            if self.current_response is not None:
                results.show(self.current_response)

    # --- search -------------------------------------------------------------------------
    def _take_paste(self) -> None:
        """The last paste's answer is gone at once, and focus leaves the box before the next key is read: the
        footer's keys then act (a copy waits for the answer) instead of typing into the paste."""
        self._pasted = True
        self._pending = None
        self._show_entry(None)
        self.current_response = None
        self.query_one("#detail", EntryView).show_searching()
        self.query_one("#paste").remove_class("-collapsed")  # the new paste in full until it is answered
        results = self.query_one("#results", ResultsList)
        results.searching()
        self.screen.set_focus(results, scroll_visible=False)  # now: Widget.focus waits, and a key read with the
        # paste (in the same burst of input) would reach the paste box first

    @on(TextArea.Changed, "#paste")
    def _text_changed(self, event: TextArea.Changed) -> None:
        self.run_search(event.text_area.text)

    @on(events.DescendantFocus, "#paste")
    def _paste_focused(self) -> None:
        self.query_one("#paste").remove_class("-collapsed")

    @work(exclusive=True, thread=True, group="search")
    def run_search(self, text: str) -> None:
        """Search off the UI thread; a newer keystroke cancels (supersedes) an older search."""
        response = self.kb.search(text) if text.strip() else None
        triage = self.kb.triage(text) if text.strip() else None
        if not get_current_worker().is_cancelled:
            self.call_from_thread(self.query_one("#triage", TriagePanel).show, triage)
            self.call_from_thread(self.show_results, response)

    def show_results(self, response: SearchResponse | None) -> None:
        self.results_shown_at = time.perf_counter()
        self.current_response = response
        results = self.query_one("#results", ResultsList)
        results.show(response)
        if response is None:
            self._pending = None  # an empty box: nothing will load
            self.query_one("#detail", EntryView).show_idle()
        matched = bool(response and response.results and response.status == "answered")
        if matched:
            results.highlighted = next(i for i, o in enumerate(results._options) if not o.disabled)
        else:  # no entry opens, so no line of the paste is its evidence
            self.query_one("#paste", PasteBox).clear_mark()
            if response is not None:  # the entry pane says what is known: the differential, or the closest
                self._show_entry(None)
                detail = self.query_one("#detail", EntryView)
                self.run_worker(self._load(detail.show_diagnosis(response)), exclusive=True, group="detail")
        if self._pasted:  # a pasted traceback: the reader wants the fix (or the candidates), not the text
            self._pasted = False  # they pasted, and the footer's keys act on the list
            if matched:
                self.query_one("#paste").add_class("-collapsed")
            elif response is not None:  # nothing answered: the box shows the line the candidates read
                paste = self.query_one("#paste", PasteBox)
                paste.show_line(read_from(paste.text, response))
            if response is not None:
                results.focus()
                results.highlight_first()  # it may have had focus already: a new list highlights nothing

    @on(OptionList.OptionHighlighted, "#results")
    def _result_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option.id:
            self.open_entry(event.option.id, from_results=True)

    @on(OptionList.OptionSelected, "#results")
    def _result_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id:
            self.open_entry(event.option.id, from_results=True)
            self._focus_entry()

    # --- entries and history ------------------------------------------------------------
    def open_entry(self, entry_id: str, record: bool = True, from_results: bool = False) -> None:
        """Show an entry; ``from_results``: picked from the matches, so it is marked as the search ranked it."""
        if entry_id not in self.kb.catalogue.entries:
            self.notify(f"unknown entry {entry_id}", severity="warning")
            return
        verdict = self._verdict(entry_id, from_results)
        if record and (self.position < 0 or self.history[self.position] != entry_id):
            del self.history[self.position + 1 :]
            del self.picked[self.position + 1 :]
            self.history.append(entry_id)
            self.picked.append(verdict == "guess")
            self.position = len(self.history) - 1
        elif record:
            self.picked[self.position] = verdict == "guess"
        related = self.kb.related(entry_id)
        self._show_entry(entry_id, [target for _, target in related])
        self._find_at = -1
        self._highlight_evidence(entry_id)
        detail = self.query_one("#detail", EntryView)
        if detail.showing(entry_id, verdict):  # Enter on the entry on screen: rendering it again blanks it for seconds
            self.workers.cancel_group(self, "detail")
            return
        titles = {e.id: e.title for e in self.kb.catalogue.entries.values()}
        self.run_worker(
            self._load(
                detail.show(
                    *self.kb.header(entry_id),
                    self.kb.markdown(entry_id),
                    related,
                    titles,
                    verdict,
                )
            ),
            exclusive=True,
            group="detail",
        )

    def _show_entry(self, entry_id: str | None, links: list[str] | None = None) -> None:
        """What the entry pane shows, for the keys that act on it (c, d, o, a link's key)."""
        self.shown = entry_id
        self.links = links or []
        self._hint("")

    def _focus_entry(self) -> None:
        """The entry pane takes focus once it changed: the footer's keys act there, and its border says so (the
        links list, where focus may have been, is scrolled out of view by the new entry)."""
        self.query_one("#detail", EntryView).focus(scroll_visible=False)

    def _verdict(self, entry_id: str, from_results: bool = False) -> str | None:
        """Why the current search answered with ``entry_id``; "guess" when it was picked from the matches as only a
        candidate or the closest. Reached any other way (a link, Ctrl+P, history), it is an entry read on its own,
        not a guess at this paste."""
        response = self.current_response
        if response is None or entry_id not in {r.id for r in response.results}:
            return None
        shown = view(response)
        if shown.kind == "answer" and response.results[0].id == entry_id:
            return response.why or "its signature matched"
        return "guess" if from_results else None

    def _highlight_evidence(self, entry_id: str) -> None:
        response = self.current_response
        if response is None:
            return
        paste = self.query_one("#paste", PasteBox)
        for result in response.results:
            if result.id == entry_id and result.evidence:
                paste.highlight_line(result.evidence[0].line)
                return
        paste.clear_mark()

    def jump(self, entry_id: str) -> None:
        """A palette pick: open the entry and put focus on it, where the footer's keys act (the palette would
        hand focus back to the paste box, where `c` types a letter)."""
        self.open_entry(entry_id)
        self.call_after_refresh(self._focus_entry)

    @property
    def current_entry(self) -> str | None:
        """The entry the pane shows (None while it shows a differential or the closest entries)."""
        return self.shown

    @on(Markdown.LinkClicked)
    def _link_clicked(self, event: Markdown.LinkClicked) -> None:
        if event.href.startswith(ENTRY_SCHEME):
            self.open_entry(event.href.removeprefix(ENTRY_SCHEME))
            self._focus_entry()
        elif event.href.startswith("https://"):
            self.open_url(event.href)

    @on(OptionList.OptionSelected, "#related")
    def _follow(self, event: OptionList.OptionSelected) -> None:
        if event.option.id:
            self.open_entry(event.option.id.split("|", 1)[1])
            self._focus_entry()

    @on(Tree.NodeSelected, "#tree")
    def _browse_selected(self, event: Tree.NodeSelected[str]) -> None:
        if event.node.data:
            self.open_entry(event.node.data)

    # Not `action_back`: Textual's own (async) App.action_back pops a screen, and stays usable.
    def action_history_back(self) -> None:
        """The previous entry; from a candidate picked from the differential on screen, that differential; from a
        differential, the last entry read."""
        if self.shown is not None and self._picked_from_diagnosis():
            self.position -= 1  # Forward opens the candidate again
            self._show_diagnosis_again()
            return
        if self.shown is not None and self.position > 0:
            self.position -= 1
        elif self.shown is not None or self.position < 0:
            return
        self.open_entry(self.history[self.position], record=False, from_results=self.picked[self.position])
        self._focus_entry()

    def action_history_forward(self) -> None:
        if self.position < len(self.history) - 1:
            self.position += 1
            self.open_entry(self.history[self.position], record=False, from_results=self.picked[self.position])
            self._focus_entry()

    def _picked_from_diagnosis(self) -> bool:
        """The entry on screen was picked from the candidates (or closest entries) the matches still list."""
        response = self.current_response
        if response is None or self.position < 0 or not self.picked[self.position]:
            return False
        answered = bool(response.results) and response.status == "answered"
        return not answered and self.shown in {r.id for r in response.results}

    def _show_diagnosis_again(self) -> None:
        """Back to the differential (or the closest entries) the candidate was picked from."""
        response = self.current_response
        assert response is not None
        self._show_entry(None)
        self.query_one("#paste", PasteBox).clear_mark()
        detail = self.query_one("#detail", EntryView)
        self.run_worker(self._load(detail.show_diagnosis(response)), exclusive=True, group="detail")
        self.query_one("#results").focus()

    # --- actions ------------------------------------------------------------------------
    def action_toggle_help(self) -> None:
        shown = self.screen.query(KeysHelp)
        if shown:
            shown.remove()
        else:
            self.screen.mount(KeysHelp(id="keys"))

    def action_toggle_browse(self) -> None:
        switcher = self.query_one("#switcher", ContentSwitcher)
        switcher.current = "browse-pane" if switcher.current == "search-pane" else "search-pane"
        target = "#filter" if switcher.current == "browse-pane" else "#paste"
        self.query_one(target).focus()

    def action_clear_paste(self) -> None:
        """Empty the paste box and the matches, ready for the next paste."""
        self.action_focus_paste()
        self.query_one("#paste", PasteBox).start_over()

    def action_escape(self) -> None:
        """Esc closes the keys panel when it is open, else goes back to the paste box."""
        shown = self.screen.query(KeysHelp)
        if shown:
            shown.remove()
        else:
            self.action_focus_paste()

    def action_focus_paste(self) -> None:
        self.query_one("#detail", EntryView).close_find()
        self.query_one("#switcher", ContentSwitcher).current = "search-pane"
        self.query_one("#paste").focus()

    def action_copy_fix(self) -> None:
        self.action_copy_block(1)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Keys that act on the shown entry are hidden while the pane shows none (a key in the footer that does
        nothing would look broken); a letter with no link is off. A copy pressed while the pane loads waits for it."""
        if action == "follow_hint":
            typed = self.hint_typed + str(parameters[0])
            return any(key.startswith(typed) for key in hint_labels(len(self.links)))
        if action in ("copy_fix", "copy_block", "copy_diagnosis") and self.query_one("#detail", EntryView).busy:
            return True  # the copy waits for what is loading (_flush_pending)
        if action == "copy_diagnosis" and self.shown is None:  # a differential or the closest entries: their summary
            return self.current_response is not None and bool(self.current_response.results)
        return self.shown is not None or action not in ("copy_fix", "follow")

    def action_follow_hint(self, letter: str) -> None:
        """Follow the entry's link whose key this letter completes, and read it; the first letter of a two-letter
        key waits for the second."""
        typed = self.hint_typed + letter
        keys = hint_labels(len(self.links))
        if typed in keys:
            self.open_entry(self.links[keys.index(typed)])
            self._focus_entry()
        else:
            self._hint(typed if any(key.startswith(typed) for key in keys) else "")

    def _hint(self, typed: str) -> None:
        self.hint_typed = typed
        self.query_one("#detail", EntryView).hint_typed(typed)
        self.refresh_bindings()

    def action_copy_block(self, n: int) -> None:
        """Copy the n-th code block of the fix (1-based): a fix's blocks are alternatives, not one snippet."""
        if self._wait(str(n), f"fix block {n}" if n > 1 else "fix"):
            return
        entry_id = self._shown_entry()
        if entry_id is None:
            return
        blocks = fix_blocks(self.kb.catalogue.entries[entry_id])
        if not blocks:
            self.notify(f"{entry_id}'s fix has no code block to copy.", severity="warning")
            return
        if n > len(blocks):
            self.notify(f"{entry_id}'s fix has {plural(len(blocks), 'code block')}.", severity="warning")
            return
        code = blocks[n - 1]
        self.copy_to_clipboard(code)
        which = f"block {n} of {len(blocks)}" if len(blocks) > 1 else "code"
        others = "2 copies the other" if len(blocks) == 2 else f"2-{len(blocks)} copy the others"
        more = f"; {others}" if len(blocks) > 1 and n == 1 else ""
        self.notify(f"Copied {entry_id}'s fix {which} ({plural(len(code.splitlines()), 'line')}){more}.")

    def action_copy_diagnosis(self) -> None:
        """A Markdown summary of what the paste is and how to fix it, for an issue tracker or a chat: the entry
        shown, or the differential's candidates (or the closest entry) while the pane shows those."""
        if self._wait("diagnosis", "diagnosis"):
            return
        response = self.current_response
        if self.shown is None and response is not None and response.results:
            shown = view(response)
            self.copy_to_clipboard(diagnosis(response, self._link))
            named = " ".join(row.result.id for row in shown.rows[: shown.leads or 1])
            self.notify(f"Copied a Markdown diagnosis naming {named} to the clipboard.")
            return
        entry_id = self._shown_entry()
        if entry_id is None:
            return
        self.copy_to_clipboard(self._diagnosis(entry_id))
        self.notify(f"Copied a Markdown diagnosis naming {entry_id} to the clipboard.")

    def _wait(self, copy: str, what: str) -> bool:
        """While the pane loads, a copy is kept for when it has loaded (a toast says so); True when it was kept."""
        if not self.query_one("#detail", EntryView).busy:
            return False
        self._pending = copy
        self.notify(f"Still loading: the {what} is copied as soon as it shows.")
        return True

    def _flush_pending(self) -> None:
        """The pane has loaded: run the copy asked for while it was loading."""
        pending, self._pending = self._pending, None
        if pending == "diagnosis":
            self.action_copy_diagnosis()
        elif pending is not None:
            self.action_copy_block(int(pending))

    async def _load(self, loading: Awaitable[None]) -> None:
        """Fill the entry pane (a worker of the "detail" group: a newer one cancels it), then any waiting copy."""
        await loading
        self.refresh_bindings()  # the copy keys offered while it loaded may not apply to what it shows
        self._flush_pending()

    def _shown_entry(self) -> str | None:
        """The entry on screen, which the copy keys act on; None (and a word why) while none is."""
        entry_id = self.query_one("#detail", EntryView).entry_id
        if entry_id is None:
            self.notify("Open an entry first: Enter on a match or candidate.", severity="warning")
        return entry_id

    def _diagnosis(self, entry_id: str) -> str:
        """The search's diagnosis when the entry is one of its results, else the entry read on its own."""
        response = self.current_response
        if response is not None and entry_id in {r.id for r in response.results}:
            return diagnosis(response, self._link, also=entry_id)
        entry = self.kb.catalogue.entries[entry_id]
        return entry_diagnosis(entry.id, entry.title, entry.fix_summary, self._link)

    def _link(self, entry_id: str) -> str | None:
        """The entry's page for a reader elsewhere: the site's web address, never a local file path."""
        url = self.kb.site_url(entry_id)
        return url if url and url.startswith(("https://", "http://")) else None

    def action_follow(self) -> None:
        """Straight to the entry's links, in view with their letters, the first highlighted: Enter follows it."""
        related = self.query_one("#related", OptionList)
        if self.shown is None or not related.option_count:
            self.notify("This entry links to no other entry.", severity="warning")
            return
        related.focus()
        related.highlighted = related.highlighted or 0

    def action_open_site(self) -> None:
        entry_id = self.current_entry
        url = self.kb.site_url(entry_id) if entry_id else None
        if url is None:
            self.notify("No site to open: run `kb site build` or set TRAINKB_SITE_URL.", severity="warning")
            return
        self.open_url(url)

    def action_find(self) -> None:
        if self.current_entry:
            self.query_one("#detail", EntryView).open_find()

    @on(Input.Submitted, "#find")
    def _find_next(self, event: Input.Submitted) -> None:
        found = self.query_one("#detail", EntryView).find(event.value, self._find_at)
        if found < 0:
            self.notify(f"'{event.value}' is not in this entry.", severity="warning")
        self._find_at = found

    def action_toggle_theme(self) -> None:
        self.theme = "textual-light" if self.current_theme.dark else "textual-dark"
