"""GitHub Actions workflow commands (``::error file=...::message``), escaped by GitHub's rules.

A value is data, never a second command: ``%``, CR and LF are escaped everywhere, and ``:``
and ``,`` in properties too, so a file name holding a newline cannot forge another line. Other
control characters (an escape sequence in a record's key) are spelled out, as plain output does.
"""

from __future__ import annotations

from ._terminal import spelled

__all__ = ["workflow_command"]


def _data(text: str) -> str:
    return spelled(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def workflow_command(command: str, properties: dict[str, object], message: str) -> str:
    """One ``::command key=value,...::message`` line."""
    props = ",".join(f"{key}={_property(str(value))}" for key, value in properties.items())
    return f"::{command} {props}::{_data(message)}"
