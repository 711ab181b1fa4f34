"""Understanding the paste: cleaning, capping, traceback splitting, kinds."""

from __future__ import annotations

from trainkb.search._input import parse, unescaped
from trainkb.search._policy import PASTE

CHAINED = """\
Traceback (most recent call last):
  File "a.py", line 3, in <module>
    f()
KeyError: 'x'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "a.py", line 5, in <module>
    g()
RuntimeError: boom happened here
"""

CHILD_FAILED = """\
[rank0]: Traceback (most recent call last):
[rank0]:   File "t.py", line 1, in <module>
[rank0]: RuntimeError: rank zero was fine until the others died
[rank2]: Traceback (most recent call last):
[rank2]:   File "t.py", line 1, in <module>
[rank2]: ValueError: the real failure of rank two
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
============================================================
Root Cause (first observed failure):
[0]:
  time      : 2026-01-01_00:00:00
  rank      : 2 (local_rank: 2)
  exitcode  : 1 (pid: 99)
  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
"""


def test_ansi_and_carriage_return_residue_are_removed() -> None:
    query = parse("\x1b[31mERROR\x1b[0m something\n 10%|#  | 1/10\r 50%|#####  | 5/10\r100%|#####| 10/10\n")
    assert query.lines[0].text == "ERROR something"
    assert query.lines[1].text.startswith("100%")


def test_tail_is_kept_and_line_numbers_stay_original() -> None:
    text = "\n".join(f"noise line {i}" for i in range(PASTE.max_lines + 500)) + "\nRuntimeError: the end"
    query = parse(text)
    assert len(query.lines) <= PASTE.max_lines
    assert query.lines[-1].number == PASTE.max_lines + 501
    assert query.lines[-1].text == "RuntimeError: the end"


def test_chained_traceback_puts_the_last_chain_first() -> None:
    query = parse(CHAINED)
    assert query.kind == "traceback"
    by_type = {m.type: m for m in query.messages}
    assert by_type["RuntimeError"].text == "boom happened here"
    assert by_type["RuntimeError"].weight == 1.0
    assert by_type["KeyError"].weight == 1.0  # same chain: the original cause counts as much
    assert query.lines[by_type["RuntimeError"].line_index].number == 11


def test_child_failed_error_prefers_the_root_cause_rank() -> None:
    query = parse(CHILD_FAILED)
    weights = {m.type: m.weight for m in query.messages}
    assert weights["ValueError"] == 1.0
    assert weights["RuntimeError"] < 1.0
    assert weights["torch.distributed.elastic.multiprocessing.errors.ChildFailedError"] < 1.0
    assert query.lines[0].rank == 0 and query.lines[0].text.startswith("Traceback")


def test_multiline_message_runs_on() -> None:
    query = parse('RuntimeError: Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: "a".\n')
    assert "Missing key(s)" in query.messages[0].text


def test_python_warning_line() -> None:
    query = parse("/x/lr_scheduler.py:123: UserWarning: Detected call of `lr_scheduler.step()` before it\n  s.step()")
    assert query.messages[0].type == "UserWarning"
    assert query.messages[0].text.startswith("Detected call")


def test_kinds() -> None:
    assert parse(CHAINED).kind == "traceback"
    assert parse("[E ProcessGroupNCCL.cpp:1] Watchdog caught collective operation timeout\nKilled").kind == "log"
    assert parse("Bus error (core dumped)").kind == "log"
    assert parse("my loss goes flat after the first few steps and never moves again").kind == "prose"


def test_quoted_error_inside_prose_is_a_message() -> None:
    query = parse("When I train I get `RuntimeError: CUDA error: device-side assert triggered` on step 3")
    assert query.messages and query.messages[0].type == "RuntimeError"
    assert query.messages[0].text.startswith("CUDA error")


def test_bytes_and_control_characters() -> None:
    query = parse(b"\xff\xfe\x00RuntimeError: bad\x07 thing\n")
    assert query.messages[0].text == "bad thing"


def test_traceback_pasted_without_its_header() -> None:
    paste = (
        '  File "/p/train.py", line 427, in <module>\n    main(arguments)\n'
        "/usr/lib/dataloader.py in __next__(self)\n"
        "ValueError: Expected more than 1 value per channel when training\n"
    )
    query = parse(paste)
    assert query.kind == "traceback"
    assert [line.role for line in query.lines][:4] == ["frame", "frame", "frame", "message"]
    assert "main(arguments)" not in query.prose


SUMMARY_ONLY = CHILD_FAILED[CHILD_FAILED.index("torch.distributed.elastic") :]  # the ranks' tracebacks scrolled away


def test_configuration_dumps_commands_environments_and_progress_bars_are_context() -> None:
    context = [
        "compute_environment: LOCAL_MACHINE",
        "distributed_type: MULTI_GPU",
        '  "train_batch_size": 16,',
        "- `transformers` version: 4.36.2",
        "- Platform: Linux-5.15.0-x86_64-with-glibc2.35",
        "torch                    2.1.0",
        "$ torchrun --nproc_per_node 8 train.py --lr 1e-4",
        "    --model_name_or_path meta-llama/Llama-2-7b-hf \\",
        "Namespace(batch_size=1, checkpoint=0, lr=0.001)",
        "Epoch 1:  45%|████▌     | 45/100 [00:10<00:12,  4.50it/s, loss=0.3]",
    ]
    kept = [
        "loss: nan",
        "When I resume (with the --resume and --epochs arguments) the workers repeat the same seeds.",
        "train_loader = torch.utils.data.DataLoader(",
    ]
    lines = parse("\n".join(context + kept)).lines
    assert [line.role for line in lines] == ["context"] * len(context) + ["text"] * len(kept)


def test_context_lines_stay_out_of_the_prose_and_dumped_settings_out_of_a_sentence() -> None:
    query = parse(
        "distributed_type: MULTI_GPU\nIt fails on 4 GPUs (num_processes: 4, mixed_precision: fp16, "
        "gpu_ids: all) but works on 2."
    )
    assert "MULTI_GPU" not in query.prose and "num_processes" not in query.prose
    assert "It fails on 4 GPUs" in query.prose


def test_a_launcher_summary_alone_is_marked_launcher_only() -> None:
    assert SUMMARY_ONLY.startswith("torch.distributed.elastic")
    assert parse(SUMMARY_ONLY).launcher_only
    assert not parse(CHILD_FAILED).launcher_only  # the root-cause rank's own traceback is there


def test_rich_traceback_frames_are_frames() -> None:
    paste = (
        "│ s/lightning/pytorch/trainer/trainer.py:580 in _fit_impl                      │\n"
        "│ ❱  580 │   │   self._run(model, ckpt_path=ckpt_path)                         │\n"
    )
    query = parse(paste)
    assert [line.role for line in query.lines[:2]] == ["frame", "frame"] and query.kind == "traceback"


def test_a_progress_bar_before_the_message_is_not_the_line() -> None:
    """tqdm redraws without a newline, so the watchdog's line starts after the bar (F5-TTS issue 346); the bar
    is dropped, the rank tag after it read. A bar alone on its line is kept for what it is."""
    bar = "Epoch 2/30:   0%|          | 6/8563 [00:10<4:06:13,  1.73s/step, loss=0.656, step=8569]"
    message = (
        "[E1030 03:19:32.584828663 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout"
    )
    line = parse(f"{bar}[rank1]:{message}\n{bar}").lines
    assert (line[0].text, line[0].rank) == (message, 1)
    assert line[1].text == bar
    split = (
        "Generating train split:   7%|▋         | 5813/81380 [00:35<03:31, 357.02 examples/s]E0731 23:14:13.108000 1"
    )
    assert parse(split).lines[0].text == "E0731 23:14:13.108000 1"


def test_unescaped_cleans_each_line_as_search_does() -> None:
    """Line breaks (LF, CR, CRLF) and tabs stay; an OSC title with no end is cut at its line's end, not the paste's;
    a NUL becomes a space; what is left parses to the same message as the raw paste."""
    raw = "\x1b]0;title with no end\nkept\tline\r\x1b[1;31mRuntimeError: a\x00b\x1b[0m\r\nlast\x11"
    assert unescaped(raw) == "\nkept\tline\rRuntimeError: a b\r\nlast"
    assert parse(unescaped(raw)).messages[0].text == parse(raw).messages[0].text
