"""`kb doctor` reports environment values: one that is not valid UTF-8 must reach the terminal spelled
out, never as a raw C1 byte (0x9b is the 8-bit CSI, which starts an escape sequence)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow  # starts kb doctor (a trial import in a child)


def test_a_raw_c1_byte_in_an_environment_value_is_spelled_out(tmp_path):
    fake = tmp_path / "fake" / "torch"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'torch'\", name='torch')\n")
    env = os.environ | {
        "PYTHONPATH": os.pathsep.join([str(fake.parent), os.environ.get("PYTHONPATH", "")]),
        "TORCH_DISTRIBUTED_DEBUG": os.fsdecode(b"\x9bOFF"),  # the byte 0x9b, as a shell's $'\x9bOFF' sets it
    }
    done = subprocess.run([sys.executable, "-m", "trainkb", "doctor"], capture_output=True, env=env, timeout=120)
    assert b"\x9b" not in done.stdout and b"\xc2\x9b" not in done.stdout
    [line] = [ln for ln in done.stdout.splitlines() if b"distributed_debug" in ln]
    assert line.endswith(rb"TORCH_DISTRIBUTED_DEBUG=\x9bOFF")
