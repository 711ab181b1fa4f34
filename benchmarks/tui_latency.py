"""TUI responsiveness: launch to first paint, and paste to results (typical traceback, 10 MB log).

First paint is measured from process state "nothing imported" (textual and the catalogue are
imported inside the timer) to the first completed screen refresh under Textual's headless driver.

usage: python benchmarks/tui_latency.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

TRACEBACK = """\
[rank1]: Traceback (most recent call last):
[rank1]:   File "/home/me/train.py", line 88, in <module>
[rank1]:     loss.backward()
[rank1]: RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. \
This error indicates that your module has parameters that were not used in producing loss.
"""


async def _first_paint() -> float:
    started = time.perf_counter()
    from trainkb.tui import KnowledgeBase, TrainKBApp

    app = TrainKBApp(KnowledgeBase.load(), blink=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        return time.perf_counter() - started


async def _paste_to_results(text: str, repeat: int) -> list[float]:
    from trainkb.tui import KnowledgeBase, TrainKBApp

    app = TrainKBApp(KnowledgeBase.load(), blink=False)
    times = []
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        for i in range(repeat):
            box = app.query_one("#paste")
            box.load_text("")
            await app.workers.wait_for_complete()
            started = time.perf_counter()
            box.load_text(text + f"\n# run {i}\n")
            await app.workers.wait_for_complete()
            await pilot.pause()
            times.append(app.results_shown_at - started)  # results listed; the entry renders after
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    paint = asyncio.run(_first_paint())
    print(f"launch to first paint (imports, catalogue, index, first frame): {paint * 1000:.0f} ms")
    typical = asyncio.run(_paste_to_results(TRACEBACK, args.repeat))
    print(
        f"paste to results, typical traceback: median {statistics.median(typical) * 1000:.0f} ms "
        f"(n={len(typical)}, max {max(typical) * 1000:.0f} ms)"
    )
    from trainkb.search import paste_tail

    log = ("step 1 loss 0.5 lr 1e-4 " * 40 + "\n") * 11_000 + TRACEBACK
    kept, _dropped = paste_tail(log)  # what the paste box holds after a 10 MB paste
    big = asyncio.run(_paste_to_results(kept, max(1, args.repeat // 2)))
    print(
        f"paste to results, 10 MB log ({len(log) / 1e6:.1f} MB pasted, tail kept): "
        f"median {statistics.median(big) * 1000:.0f} ms"
    )


if __name__ == "__main__":
    main()
