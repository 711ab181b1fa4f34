"""What `kb` reads when it is not given what it expects: a device as the log, a folder that is no
catalogue, a paste piped into `kb` alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import pytest

KB = [sys.executable, "-m", "trainkb"]
OOM = (
    b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.10 GiB\n"
)
RANKS = b"[rank1]: RuntimeError: NCCL communicator was aborted on rank 1.\n[rank0]: hello\n"


def _kb(*args: str, data: bytes | None = None, stdin: int | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*KB, *args], input=data, stdin=stdin, capture_output=True, timeout=60)


@pytest.mark.parametrize(
    "command", [["triage", "/dev/zero"], ["new", "--from", "/dev/zero", "--area", "runtime-errors", "--dry-run"]]
)
def test_a_device_named_as_the_log_is_refused_not_read_for_ever(command):
    """`kb new --from /dev/zero` read 4 MB of NULs and printed a skeleton record; both refuse it alike."""
    proc = _kb(*command)
    assert proc.returncode == 2, proc.stdout
    assert proc.stdout == b""
    assert proc.stderr.decode() == (
        "kb: error: not a log file or folder (a device or socket): /dev/zero; pipe the output in with '-'\n"
    )


def test_a_pipe_named_as_the_log_is_read_to_its_end(tmp_path):
    """`kb triage <(torchrun …)` names a pipe: read it as stdin is."""
    fifo = tmp_path / "log"
    os.mkfifo(fifo)

    def feed() -> None:
        with open(fifo, "wb") as writer:
            writer.write(RANKS)

    thread = threading.Thread(target=feed)
    thread.start()
    proc = _kb("triage", "--no-match", "--json", str(fifo))
    thread.join()
    assert proc.returncode == 0, proc.stderr
    assert _kb("triage", "--no-match", "--json", "-", data=RANKS).stdout == proc.stdout


def test_a_folder_without_a_catalogue_is_a_usage_error_not_no_match(tmp_path):
    (tmp_path / "hosts").write_text("127.0.0.1 localhost\n")
    proc = _kb("search", OOM.decode(), str(tmp_path))
    assert proc.returncode == 2
    assert proc.stderr.decode().startswith("kb: error: not a catalogue folder") and proc.stdout == b""


def test_a_paste_piped_into_kb_alone_is_searched_as_kb_search_does():
    alone = _kb(data=OOM)
    searched = _kb("search", "-", data=OOM)
    assert alone.stdout == searched.stdout and alone.returncode == searched.returncode
    assert b"usage: kb" not in alone.stdout and b"OutOfMemoryError" in alone.stdout


def test_kb_alone_with_nothing_piped_prints_help_or_asks_for_text():
    nothing = _kb(stdin=subprocess.DEVNULL)
    assert nothing.returncode == 0 and b"usage: kb" in nothing.stdout
    empty = _kb(data=b"")  # piped in, and empty: saying "pipe it in" would be wrong
    assert empty.returncode == 2 and empty.stderr.decode().startswith("kb: error: the input is empty")


@pytest.mark.parametrize(
    "command", [[], ["search"], ["search", "-"], ["triage"], ["triage", "-"], ["new", "--dry-run", "--from", "-"]]
)
def test_a_closed_stdin_is_one_line_and_a_usage_error(command):
    """`kb <&-`: Python's sys.stdin is None; that must read as a usage error, not an AttributeError."""
    script = 'exec "$@" <&-'
    proc = subprocess.run(["bash", "-c", script, "kb", *KB, *command], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("kb: error: standard input is closed") and proc.stderr.count("\n") == 1


@pytest.mark.parametrize("command", [["search", "-"], ["search"], ["triage", "-"]])
def test_a_device_as_stdin_is_refused_not_read_for_ever(command):
    """`kb triage /dev/zero` is refused and points at '-'; `kb triage - < /dev/zero` must be refused too."""
    with open("/dev/zero", "rb") as zero:
        proc = _kb(*command, stdin=zero.fileno())
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.decode().startswith("kb: error: standard input is a device") and proc.stderr.count(b"\n") == 1


def test_dev_null_as_stdin_is_empty_text_not_a_device():
    proc = _kb("search", "-", stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and proc.stderr.decode().startswith("kb: error: give the text to search")


def test_a_file_name_given_as_the_text_is_pointed_at_stdin_not_read(tmp_path):
    """`kb search crash.log` searches the words of the name; the advice says how to search the file."""
    (tmp_path / "crash.log").write_bytes(OOM)
    env = {**os.environ, "PYTHONPATH": os.path.abspath("src")}
    run = [*KB, "search", "crash.log"]
    text = subprocess.run(run, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    hint = "`crash.log` is a file here; to search what it holds: `kb search - < crash.log`."
    assert text.returncode == 1 and hint in text.stdout
    assert "OutOfMemoryError" not in text.stdout  # the file was not searched
    data = subprocess.run([*run, "--json"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert json.loads(data.stdout)["advice"].startswith(hint)
    (tmp_path / "crash.log").unlink()
    gone = subprocess.run([*run, "--json"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert "is a file here" not in json.loads(gone.stdout)["advice"]


def test_unquoted_words_are_one_text_and_a_last_folder_is_still_the_catalogue(tmp_path):
    """`kb search CUDA out of memory` read "of memory" as a catalogue (or gave argparse's error): the words are
    one text; a folder typed last names the catalogue as before, and one that is not a catalogue says to quote."""
    line = "Expected to have finished reduction in the prior iteration"
    words = _kb("search", "--json", *line.split())
    assert words.returncode in (0, 1), words.stderr
    quoted = _kb("search", "--json", line)
    assert json.loads(words.stdout) == json.loads(quoted.stdout)
    folder = _kb("search", "RuntimeError", str(tmp_path))
    assert folder.returncode == 2
    assert folder.stderr.decode().startswith("kb: error: not a catalogue folder")
    assert "quote them" in folder.stderr.decode()


def test_an_argument_that_is_not_utf8_gives_json_that_is():
    """Bad bytes in the argument came out as lone surrogates that no UTF-8 reader can take."""
    line = b"\xed\xa0\x80Expected to have finished reduction in the prior iteration before starting a new one"
    done = subprocess.run([*KB, "search", "--json", line], capture_output=True, timeout=120)
    assert done.returncode in (0, 1), done.stderr
    data = json.loads(done.stdout.decode("utf-8"))
    json.dumps(data, ensure_ascii=False).encode("utf-8")  # no lone surrogate anywhere
    assert any("\ufffd" in e["text"] for r in data["results"] for e in r["evidence"])


def test_a_fifo_named_as_the_text_gets_the_hint_a_file_gets(tmp_path):
    """`kb search ff` (a FIFO) searched the two letters, as `kb search /dev/stdin < log` did its name."""
    fifo = tmp_path / "ff"
    os.mkfifo(fifo)
    done = _kb("search", str(fifo))
    assert done.returncode == 1
    assert f"kb search - < {fifo}" in done.stdout.decode()


def test_a_utf16_log_is_read_as_text(tmp_path):
    """Windows PowerShell 5's `>` writes UTF-16 with a byte-order mark: read as UTF-8, no line matched."""
    line = "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one\n"
    data = line.encode("utf-16")  # the mark, then little-endian on this machine
    searched = _kb("search", "--json", "-", data=data)
    assert json.loads(searched.stdout)["results"][0]["id"] == "D8"
    log = tmp_path / "utf16.log"
    log.write_bytes(data)
    made = _kb("new", "--from", str(log), "--area", "runtime-errors", "--dry-run")
    assert made.returncode == 0 and b"Expected to have finished reduction" in made.stdout


def test_triage_reads_a_utf16_log(tmp_path):
    """Rank 0's OOM in a UTF-16 log was "no error of its own" (a false account): every other character a NUL."""
    text = (
        "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
        "capacity of 79.10 GiB of which 1.00 GiB is free.\n"
        "[rank1]: RuntimeError: NCCL communicator was aborted on rank 1.\n"
    )
    utf8, utf16 = tmp_path / "ranks8.log", tmp_path / "ranks16.log"
    utf8.write_bytes(text.encode())
    utf16.write_bytes(text.encode("utf-16"))
    expected = json.loads(_kb("triage", "--json", str(utf8)).stdout)["triage"]
    assert expected["basis"] == "own-error" and expected["sole_culprit"] == 0
    assert json.loads(_kb("triage", "--json", str(utf16)).stdout)["triage"] == expected
    piped = json.loads(_kb("triage", "--json", "-", data=utf16.read_bytes()).stdout)["triage"]
    assert (piped["basis"], piped["sole_culprit"]) == ("own-error", 0)


def test_an_empty_piped_input_says_it_is_empty():
    """`kb < empty.log` told the user to pipe the text in, which they had done."""
    for argv in (["search", "-"], []):
        done = _kb(*argv, data=b"\n \n")
        assert done.returncode == 2
        assert done.stderr == b"kb: error: the input is empty (or only blank lines): nothing to search\n"
