"""The README's examples run as shown: each `console` block's command, run here, prints the output
under it. In the shown output a line `...` stands for any number of lines, and `...` inside a line
for any text (a path, a line number that depends on the torch build)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
DISTRIBUTED = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")


def _blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```$", README.read_text(encoding="utf-8"), re.M | re.S)


def _examples() -> list[tuple[str, list[str]]]:
    """(command, the lines shown under it) for every `$ ` line of every console block."""
    examples: list[tuple[str, list[str]]] = []
    for block in _blocks("console"):
        for line in block.rstrip("\n").split("\n"):
            if line.startswith("$ "):
                examples.append((line[2:], []))
            else:
                examples[-1][1].append(line)
    return examples


def _matches(shown: list[str], printed: list[str]) -> bool:
    """Whether ``printed`` fits ``shown``, where a line `...` is any lines and `...` in a line any text."""
    if not shown:
        return not printed
    if shown[0] == "...":
        return any(_matches(shown[1:], printed[i:]) for i in range(len(printed) + 1))
    pattern = ".*".join(re.escape(part) for part in shown[0].split("..."))
    return bool(printed) and re.fullmatch(pattern, printed[0]) is not None and _matches(shown[1:], printed[1:])


@pytest.fixture(scope="module")
def shell(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A PATH on which `kb` and `python` are this interpreter, outside any distributed job."""
    bin_dir = tmp_path_factory.mktemp("bin")
    for name, args in (("kb", f'{sys.executable} -m trainkb "$@"'), ("python", f'{sys.executable} "$@"')):
        wrapper = bin_dir / name
        wrapper.write_text(f"#!/bin/sh\nexec {args}\n")
        wrapper.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in DISTRIBUTED}
    env.update(
        PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
        XDG_CACHE_HOME=str(tmp_path_factory.mktemp("cache")),
        COLUMNS="120",
    )
    return env


def test_the_readme_has_examples_to_run():
    commands = [command.split()[:2] for command, _shown in _examples()]
    assert ["kb", "run"] in commands and ["kb", "search"] in commands


@pytest.mark.parametrize(("command", "shown"), _examples(), ids=[c[:40] for c, _ in _examples()])
def test_example_prints_what_the_readme_shows(shell, tmp_path, command, shown):
    done = subprocess.run(
        ["bash", "-c", command],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=shell,
        cwd=tmp_path,
        timeout=300,
    )
    printed = done.stdout.rstrip("\n").split("\n")
    assert _matches(shown, printed), "the README shows:\n" + "\n".join(shown) + "\n\nit printed:\n" + done.stdout


def test_the_hook_example_prints_the_same_block(shell, tmp_path):
    [hook] = [block for block in _blocks("python") if "trainkb.install()" in block]
    script = tmp_path / "train.py"
    script.write_text(hook + "import torch.distributed as dist\ndist.init_process_group('gloo')\n")
    done = subprocess.run(["python", str(script)], capture_output=True, text=True, env=shell, timeout=300)
    assert done.returncode == 1
    assert done.stderr.index("ValueError: Error initializing torch.distributed") < done.stderr.index(
        "── kb: this failure matches ──\n  D1  init_process_group fails"
    )


def test_the_shown_output_is_matched_strictly():
    assert _matches(["a", "...", "z"], ["a", "b", "c", "z"]) and _matches(["a", "...", "z"], ["a", "z"])
    assert _matches(["line ...: x"], ["line 17: x"])
    assert not _matches(["a", "z"], ["a", "b", "z"]) and not _matches(["line ...: x"], ["line 17: y"])
