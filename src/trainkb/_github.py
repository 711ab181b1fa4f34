"""GitHub Actions workflow commands (``::error file=...::message``), escaped by GitHub's rules.

A value is data, never a second command: ``%``, CR and LF are escaped everywhere, and ``:``
and ``,`` in properties too, so a file name holding a newline cannot forge another line. Other
control characters (an escape sequence in a record's key) are spelled out, as plain output does.
"""

from __future__ import annotations

import re

from ._terminal import spelled

__all__ = ["inert", "workflow_command"]

# The runner reads a line as a command when it starts with `::` once leading whitespace is trimmed
# (actions/runner, src/Runner.Common/ActionCommand.cs, TryParseV2: `message.TrimStart()`).
_COMMAND_START = re.compile(r"^(\s*)::", re.MULTILINE)


def _data(text: str) -> str:
    return spelled(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def workflow_command(command: str, properties: dict[str, object], message: str) -> str:
    """One ``::command key=value,...::message`` line."""
    props = ",".join(f"{key}={_property(str(value))}" for key, value in properties.items())
    return f"::{command} {props}::{_data(message)}"


def inert(text: str) -> str:
    """``text`` (what a snippet printed) with each line that a runner would read as a command made
    plain: its leading ``::`` is written ``\\::``. For human-readable output only; JSON stays as printed."""
    return _COMMAND_START.sub(r"\1\\::", text)
