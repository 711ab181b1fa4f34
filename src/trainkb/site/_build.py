"""`kb site build`: render every page, copy the assets, export the search index.

Output is a pure function of the catalogue, the reports and the templates, except for
one build stamp on the home page (SOURCE_DATE_EPOCH pins it), so a rebuild of unchanged
input changes nothing a static host or a reviewer's diff would notice.
"""

from __future__ import annotations

import ctypes
import errno
import multiprocessing
import os
import re
import shutil
import signal
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from datetime import UTC, datetime
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from ..catalogue import Catalogue, VerificationMatrix
from ._assets import site_dir
from ._export import export_index
from ._inplace import hidden_folder, new_folder, remove_abandoned, remove_abandoned_inside, swap_entries
from ._pages import area_page, check_rows, entry_page, environments, home_page, verification_page
from ._pool import forked_pool
from ._render import pygments_css

__all__ = ["MARKER", "BuildResult", "SiteError", "build_site", "build_stamp"]

MARKER = ".trainkb-site"  # only a folder holding this is ever emptied by a rebuild
_PARALLEL_FROM = 60  # entries; below this, starting worker processes costs more than it saves
_NO_SIBLING = (errno.EACCES, errno.EPERM, errno.EROFS)  # a sibling cannot be made: build inside the folder
_NOT_SWAPPABLE = (errno.EBUSY, errno.EXDEV)  # a mount point cannot be renamed
_JOB: dict[str, Any] = {}  # what forked workers inherit instead of pickling the catalogue


class SiteError(Exception):
    """A build that cannot start (an output folder that is not ours) or cannot finish (a render
    worker died); the old site stays as it was and the CLI exits 2."""


@dataclass(frozen=True)
class BuildResult:
    out: Path
    pages: int
    seconds: float
    in_place: bool = False  # the output folder could not be swapped whole (see ``_inplace``)
    note: str = ""  # one line on why, when ``in_place``


def build_stamp() -> str:
    """UTC build time, or SOURCE_DATE_EPOCH's for reproducible builds."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    moment = datetime.fromtimestamp(int(epoch), UTC) if epoch and epoch.isdigit() else datetime.now(UTC)
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def _prepare(out: Path) -> tuple[Path, str]:
    """Check that ``out`` may be replaced; return the empty folder the new site is built in, and
    why it lies inside ``out`` ("" where it is a sibling that will be swapped in whole).

    The old site stays whole until the new one is complete (see ``_swap_in``), so a killed build
    never leaves a partial site for `kb site serve`; what a killed build left behind goes here.
    """
    if out.exists() and not out.is_dir():
        raise SiteError(f"{out} is not a folder; choose another -o")
    if out.exists() and any(out.iterdir()) and not (out / MARKER).is_file():
        raise SiteError(f"{out} exists and was not made by `kb site build`; choose another -o or empty it")
    target = Path(os.path.realpath(out))
    target.parent.mkdir(parents=True, exist_ok=True)
    why = f"{out} is a mount point" if os.path.ismount(target) else ""
    if not why:
        _remove_abandoned(target)
        try:
            building = _new_sibling(target)
        except OSError as exc:
            if exc.errno not in _NO_SIBLING or not target.is_dir():
                raise
            why = f"the folder holding {out} is not writable"
    if why:
        remove_abandoned_inside(target, MARKER)
        building = hidden_folder(target, "build")
    (building / MARKER).write_text("built by kb site build; the next build replaces this folder\n", encoding="utf-8")
    (building / ".nojekyll").write_text("", encoding="utf-8")
    return building, why


def _new_sibling(target: Path) -> Path:
    """A new empty folder beside ``target``, named for this process (mode as the umask says, like the site's)."""
    return new_folder(target.parent, f".{target.name}.kb-build-")


def _remove_abandoned(target: Path) -> None:
    """Remove the sibling folders of builds of ``target`` whose process is gone (killed mid-build)."""
    remove_abandoned(target.parent, re.compile(re.escape(f".{target.name}.kb-build-") + r"(\d+)-[^/]+"), MARKER)


def _swap_in(building: Path, target: Path, out: Path) -> str:
    """Put the finished site in place of the old one in one step, then remove the old one; where
    ``target`` turns out to be a mount point nothing has moved yet: return why, for an in-place swap."""
    if not target.exists():
        os.rename(building, target)
        return ""
    try:
        exchanged = _exchange(building, target)
        if not exchanged:  # no renameat2: the old site moves aside for a moment
            aside = _new_sibling(target)
            (aside / MARKER).touch()  # what a kill leaves here is the next build's to remove
            try:
                os.rename(target, aside / "old")
            except BaseException:
                shutil.rmtree(aside, ignore_errors=True)
                raise
    except OSError as exc:
        if exc.errno in _NOT_SWAPPABLE:
            return f"{out} is a mount point"
        raise
    if not exchanged:
        os.rename(building, target)
        building = aside
    shutil.rmtree(building)
    return ""


def _exchange(one: Path, other: Path) -> bool:
    """Swap two paths atomically (Linux renameat2 RENAME_EXCHANGE); False where that is not offered."""
    if sys.platform != "linux":
        return False
    renameat2 = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    if renameat2 is None:
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(one), at_fdcwd, os.fsencode(other), rename_exchange) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL):  # the kernel or file system does not offer it
        return False
    raise OSError(code, os.strerror(code), str(other))


def _environment(templates: Path) -> Environment:
    return Environment(
        loader=FileSystemLoader(str(templates)),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


class _Writer:
    """Renders templates into ``out`` with the context every page shares."""

    def __init__(self, env: Environment, out: Path, shared: dict[str, Any]) -> None:
        self.env, self.out, self.shared, self.pages = env, out, shared, 0

    def page(self, template: str, rel: str, context: dict[str, Any]) -> None:
        path = self.out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        html = self.env.get_template(template).render({**self.shared, **context})
        path.write_text(html, encoding="utf-8", newline="\n")
        self.pages += 1


def _normalise_base(base_url: str) -> str:
    return "/" + base_url.strip("/") + "/" if base_url.strip("/") else "/"


def _entry_chunk(ids: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Render some entry pages; return their check rows for the verification page."""
    cat, ver, envs, writer = _JOB["cat"], _JOB["ver"], _JOB["envs"], _JOB["writer"]
    rows = {}
    for entry_id in ids:
        entry = cat.entries[entry_id]
        rows[entry_id] = check_rows(entry, ver, envs)
        writer.page("entry.html.j2", f"{entry_id}/index.html", entry_page(cat, entry, ver, envs, rows[entry_id]))
    return rows


def _workers(count: int) -> int:
    if count < _PARALLEL_FROM or "fork" not in multiprocessing.get_all_start_methods():
        return 1
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(cpus, 8))


def _death_of(workers: Sequence[BaseProcess], pages: int) -> str:
    """One line on the render worker that died: the first killed by a signal other than the SIGTERM
    the pool sends the survivors (the OOM killer's is SIGKILL), else the first that ended at all."""
    ended: list[tuple[int | None, int]] = []
    for worker in workers:
        code = worker.exitcode
        if code:
            ended.append((worker.pid, code))
    killed = [(pid, code) for pid, code in ended if code < 0 and code != -signal.SIGTERM]
    what = "a render worker died"
    if killed or ended:
        pid, code = (killed or ended)[0]
        what = f"render worker {pid} died ({f'signal {-code}' if code < 0 else f'status {code}'})"
    return (
        f"{what} while rendering the {pages} entry pages: out of memory? "
        "the site was left as it was; rebuild (with more free memory if it recurs)"
    )


def _write_index(cat: Catalogue, static: Path) -> None:
    static.mkdir(parents=True, exist_ok=True)
    (static / "search-index.js").write_text(export_index(cat), encoding="utf-8", newline="\n")


def build_site(
    cat: Catalogue,
    ver: VerificationMatrix,
    out: Path,
    base_url: str = "/",
    stamp: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> BuildResult:
    """Write the whole site to ``out``; ``base_url`` is the path the site is served under;
    ``progress`` hears each step (the CLI shows it on a terminal)."""
    say = progress or (lambda _step: None)
    started = time.perf_counter()
    building, why = _prepare(out)
    target = Path(os.path.realpath(out))
    try:
        pages = _render(cat, ver, building, base_url, stamp, say)
        if not why:
            why = _swap_in(building, target, out)
        if why:
            swap_entries(building, target, MARKER)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    if why:
        shutil.rmtree(building, ignore_errors=True)
    note = f"built in place: {why}, so the swap is not atomic" if why else ""
    return BuildResult(out, pages, time.perf_counter() - started, in_place=bool(why), note=note)


def _render(
    cat: Catalogue, ver: VerificationMatrix, out: Path, base_url: str, stamp: str | None, say: Callable[[str], None]
) -> int:
    """Write every page, the assets and the search index into ``out``; return the number of pages."""
    assets = site_dir()
    envs = environments(ver)
    base = _normalise_base(base_url)
    writer = _Writer(
        _environment(assets / "templates"), out, {"areas": cat.areas, "base": base, "stamp": stamp or build_stamp()}
    )
    ids = [e.id for e in cat.ordered()]
    _JOB.update(cat=cat, ver=ver, envs=envs, writer=writer)
    static = out / "static"
    workers = _workers(len(ids))
    say(f"rendering {len(ids)} entry pages and the search index")
    try:
        if workers == 1:
            checks = _entry_chunk(ids)
            _write_index(cat, static)
        else:  # entry pages in forked workers; the index and the other pages meanwhile here
            with forked_pool(workers) as pool:
                futures = [pool.submit(_entry_chunk, ids[i::workers]) for i in range(workers)]
                # a fork pool starts all its workers in the first submit and keeps them in `_processes`;
                # active_children() would already have forgotten a worker that died before this line
                started = list(pool._processes.values())
                _write_index(cat, static)
                try:
                    checks = {k: v for f in futures for k, v in f.result().items()}
                except BrokenProcessPool:
                    # the pool's manager thread reaps the workers as it breaks the pool: read their exit codes
                    # after it has, or a worker it is reaping at that instant reads as still running
                    pool.shutdown(wait=True)
                    raise SiteError(_death_of(started, len(ids))) from None
    finally:
        _JOB.clear()
    say("home, area and verification pages")
    writer.page("home.html.j2", "index.html", home_page(cat, ver, envs))
    for area in cat.areas:
        writer.page("area.html.j2", f"{area.id}/index.html", area_page(cat, area.id))
    writer.page("verification.html.j2", "verification/index.html", verification_page(cat, ver, envs, checks))
    writer.page("search.html.j2", "search/index.html", {"root": "../"})
    writer.page("404.html.j2", "404.html", {"root": base})
    shutil.copytree(assets / "static", static, dirs_exist_ok=True)
    (static / "pygments.css").write_text(pygments_css(), encoding="utf-8", newline="\n")
    return writer.pages + len(ids) * (workers > 1)
