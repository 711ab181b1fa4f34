"""`trainkb.install()`: advice after the traceback, never instead of it."""

from __future__ import annotations

import subprocess
import sys

import pytest
from helpers import record

SIG = """\
signatures:
  - {literal: "is invalid for input of size", type: RuntimeError,
     example: "RuntimeError: shape '[4]' is invalid for input of size 6", names_cause: true}
"""

SCRIPT = """\
import trainkb
trainkb.install()
raise RuntimeError("shape '[4]' is invalid for input of size 6")
"""


def python(code, env):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)


@pytest.fixture
def env(make_catalogue, tmp_path, monkeypatch):
    import os

    cat = make_catalogue({"alpha/D1-sample.yaml": record(extra=SIG)})
    return {**os.environ, "TRAINKB_CATALOGUE": str(cat), "XDG_CACHE_HOME": str(tmp_path / "cache")}


def test_advice_follows_the_unchanged_traceback(env):
    plain = python(SCRIPT.replace("trainkb.install()", "pass"), env)
    hooked = python(SCRIPT, env)
    assert hooked.returncode == plain.returncode == 1
    assert hooked.stderr.startswith(plain.stderr)  # the original traceback, byte for byte, first
    advice = hooked.stderr[len(plain.stderr) :]
    assert "D1  A sample failure for tests" in advice
    assert "fix: Apply the one-line remedy." in advice  # the record's fix_summary, not its fix's first line


def test_silent_when_the_catalogue_cannot_be_loaded(env, tmp_path):
    broken = {**env, "TRAINKB_CATALOGUE": str(tmp_path / "does-not-exist")}
    plain = python(SCRIPT.replace("trainkb.install()", "pass"), broken)
    hooked = python(SCRIPT, broken)
    assert hooked.stderr == plain.stderr
    assert hooked.returncode == 1


def test_threads_are_covered(env):
    code = (
        "import threading, trainkb\ntrainkb.install()\n"
        "def work():\n    raise RuntimeError(\"shape '[4]' is invalid for input of size 6\")\n"
        "t = threading.Thread(target=work)\nt.start()\nt.join()\n"
    )
    proc = python(code, env)
    assert "Exception in thread" in proc.stderr
    assert "D1  A sample failure" in proc.stderr


def test_import_and_install_are_cheap():
    code = (
        "import sys, trainkb\ntrainkb.install()\nheavy = {'torch', 'pydantic', 'rapidfuzz', 'yaml', 'textual'}\n"
        "print(sorted(heavy & set(sys.modules)))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "[]"


def test_keyboard_interrupt_gets_no_advice(env):
    proc = python("import trainkb\ntrainkb.install()\nraise KeyboardInterrupt\n", env)
    assert "trainkb" not in proc.stderr.split("KeyboardInterrupt")[-1]


@pytest.mark.parametrize("top", [0, -1, "a", True])
def test_a_top_that_names_no_entry_is_refused_at_install(top):
    import trainkb

    with pytest.raises(ValueError, match="whole number of 1 or more"):
        trainkb.install(top=top)


def test_uninstall_keeps_a_hook_set_after_trainkbs(env):
    code = (
        "import sys, trainkb\ntrainkb.install()\nprevious = sys.excepthook\n"
        "def mine(*a):\n    print('USER HOOK RAN', file=sys.stderr)\n    previous(*a)\n"
        "sys.excepthook = mine\ntrainkb.uninstall()\nassert sys.excepthook is mine\n"
        "raise RuntimeError(\"shape '[4]' is invalid for input of size 6\")\n"
    )
    proc = python(code, env)
    assert "USER HOOK RAN" in proc.stderr
    assert proc.stderr.count("Traceback (most recent call last)") == 1  # the chain still reaches Python's hook
    assert "D1  A sample failure" not in proc.stderr  # uninstalled: no advice
    again = python(code.replace("trainkb.uninstall()\n", "trainkb.uninstall()\ntrainkb.install()\n"), env)
    assert again.stderr.count("Traceback (most recent call last)") == 1
    assert again.stderr.count("D1  A sample failure") == 1  # installed again: advice once, not twice


def test_uninstall_puts_the_previous_hook_back(env):
    code = (
        "import sys, threading, trainkb\nbefore = sys.excepthook, threading.excepthook\ntrainkb.install()\n"
        "trainkb.uninstall()\nassert (sys.excepthook, threading.excepthook) == before\n"
    )
    assert python(code, env).returncode == 0


def test_ctrl_c_while_advising_prints_no_traceback_of_kbs(env):
    code = (
        "import trainkb, trainkb._advice as a\ntrainkb.install()\n"
        "def interrupted(*args, **kwargs):\n    raise KeyboardInterrupt\n"
        "a.advice_block = interrupted\n"
        "raise RuntimeError(\"shape '[4]' is invalid for input of size 6\")\n"
    )
    proc = python(code, env)
    assert "Error in sys.excepthook" not in proc.stderr and "_hook.py" not in proc.stderr
    assert proc.stderr.endswith("RuntimeError: shape '[4]' is invalid for input of size 6\n")  # the traceback alone
