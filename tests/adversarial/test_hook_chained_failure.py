"""A `sys.excepthook` set before `trainkb.install()` that itself raises: Python's "Error in sys.excepthook:"
report named trainkb's frame as part of the user's hook failure, and trainkb's advice was lost."""

from __future__ import annotations

import os
import subprocess
import sys

D8 = "Expected to have finished reduction in the prior iteration before starting a new one"
BROKEN_HOOK = """\
import sys
def broken(*_):
    raise ValueError("hook broke")
sys.excepthook = broken
"""
RAISE = f"raise RuntimeError({D8!r})\n"


def _python(code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)


def test_a_failing_earlier_hook_is_shown_as_python_shows_it_and_the_advice_follows():
    plain = _python(BROKEN_HOOK + "\n" + RAISE)  # "\n" for "import trainkb; …": the same line numbers
    hooked = _python(BROKEN_HOOK + "import trainkb; trainkb.install()\n" + RAISE)
    assert plain.returncode == hooked.returncode == 1
    assert plain.stderr.startswith("Error in sys.excepthook:\n")
    assert hooked.stderr.startswith(plain.stderr), hooked.stderr  # Python's report, byte for byte, first
    assert "trainkb" not in hooked.stderr[: len(plain.stderr)]
    advice = hooked.stderr[len(plain.stderr) :]
    assert advice.startswith("── kb: this failure matches ──\n") and "  D8  " in advice


def test_an_earlier_hook_that_exits_keeps_its_status_after_the_advice():
    code = "import sys\nsys.excepthook = lambda *_: sys.exit(5)\nimport trainkb; trainkb.install()\n" + RAISE
    proc = _python(code)
    assert proc.returncode == 5
    assert proc.stderr.startswith("── kb: this failure matches ──\n") and "Error in sys.excepthook" not in proc.stderr


def test_ctrl_c_in_an_earlier_hook_gets_no_advice():
    code = (
        "import sys\ndef stop(*_):\n    raise KeyboardInterrupt\nsys.excepthook = stop\n"
        "import trainkb; trainkb.install()\n" + RAISE
    )
    proc = _python(code)
    assert proc.stderr.startswith("Error in sys.excepthook:\n") and "KeyboardInterrupt" in proc.stderr
    assert "── kb" not in proc.stderr and "_hook.py" not in proc.stderr
