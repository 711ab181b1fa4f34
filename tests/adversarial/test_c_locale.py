"""A C locale without Python's UTF-8 mode (stdout ``ascii`` with ``surrogateescape``) still gets the answer.

Python gives such a stream ``surrogateescape``, which raises on any character outside ASCII, so the
box-drawing rule of the first line used to cost the whole output.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

D8 = "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one"


def test_search_in_a_c_locale_prints_the_answer(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONIOENCODING",) and not k.startswith("LC_")}
    env.update(LC_ALL="C", LANG="C", PYTHONUTF8="0", PYTHONCOERCECLOCALE="0", XDG_CACHE_HOME=str(tmp_path))
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parents[2] / "src"), env.get("PYTHONPATH", "")])
    probe = [sys.executable, "-c", "import sys; print(sys.stdout.encoding, sys.stdout.errors)"]
    assert subprocess.run(probe, env=env, capture_output=True, text=True).stdout.split() == ["ascii", "surrogateescape"]
    done = subprocess.run([sys.executable, "-m", "trainkb", "search", D8], env=env, capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert b"cannot write the output" not in done.stderr
    assert b"D8" in done.stdout and b"\\u2500" in done.stdout  # the rule, escaped, not lost
