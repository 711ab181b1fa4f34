"""Terminal input that is not valid UTF-8 (a key typed on a Latin-1 terminal, a pasted log in another
encoding). Textual's Linux driver decodes what it reads strictly, so the first such byte kills its
input thread: a traceback on the screen, the UI gone, exit status 0. This driver decodes the same
input with each bad byte read as U+FFFD, as `kb search` reads a paste."""

from __future__ import annotations

import codecs
from collections.abc import Callable
from encodings.utf_8 import IncrementalDecoder as Utf8Decoder

from textual.drivers import linux_driver

__all__ = ["TolerantDriver"]


class _ReplacingUtf8(Utf8Decoder):
    def __init__(self, errors: str = "replace") -> None:
        super().__init__(errors)


def _decoder(encoding: str) -> Callable[..., codecs.IncrementalDecoder]:
    if codecs.lookup(encoding).name == "utf-8":
        return _ReplacingUtf8
    return codecs.getincrementaldecoder(encoding)


class TolerantDriver(linux_driver.LinuxDriver):
    """Textual's Linux driver, whose input thread takes its decoder from ``_decoder`` (the driver looks
    ``getincrementaldecoder`` up in its module when the thread starts)."""

    def run_input_thread(self) -> None:
        vars(linux_driver)["getincrementaldecoder"] = _decoder
        super().run_input_thread()
