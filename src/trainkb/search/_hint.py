"""What would help when search abstains, said for what the paste holds.

"Not in the catalogue" is only half an answer at 3 a.m.: the paste may lack the very lines
that name the failure (a launcher summary without the worker's traceback, a log without its
exception, a description without the error). The texts are data, so the browser port reads
the same ones from the exported index.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ._input import FAILURE_WEIGHT, Query

__all__ = ["ADVICE", "HINT", "HintRules", "foreign_package", "what_would_help"]


@dataclass(frozen=True, eq=False, repr=False, match_args=False)
class HintRules:
    """How the advice quotes a paste back, and what makes a traceback foreign to training."""

    advice_message_chars: int  # characters of the unknown exception quoted back
    library_frame: re.Pattern[str]  # a frame in an installed package (group 1: the package)
    training: re.Pattern[str]  # any word of the stack the catalogue is about


ADVICE = {
    "launcher": "Only the launcher's failure summary is here; the failing worker's own traceback is above it "
    "in the log. Paste the lines above the summary (the first failing rank's traceback), rerun with "
    "`torchrun --tee 3` or `--log-dir DIR` to keep each rank's output, or run the job under `kb run`.",
    "symptom": "Several root causes print `{message}`, and nothing else in this paste singles out one of them. "
    "Each candidate names the sign that decides: look for it in your run, or paste the lines around "
    "the error (the whole exception chain, the log lines before it) so that search can look for it.",
    "symptom_output": "Several root causes print `{message}`, and nothing else in the output singles out one "
    "of them. Each candidate names the sign that decides: look for it in your run (the figures it "
    "logs, the code the failing step ran, other processes on the card).",
    # one entry of the catalogue is known to print the line: no differential to weigh, that entry to confirm
    "symptom_one": "Several root causes print `{message}`; the catalogue covers one of them, {entry}, and nothing "
    "else in this paste confirms it. Check {entry} against your run, or paste the lines around the error (the "
    "whole exception chain, the log lines before it) so that search can look for what decides.",
    "symptom_one_output": "Several root causes print `{message}`; the catalogue covers one of them, {entry}, and "
    "nothing else in the output confirms it. Check {entry} against your run (the figures it logs, the code the "
    "failing step ran, other processes on the card).",
    "exception": 'No entry knows `{message}`. Paste the whole exception chain (every traceback above "During '
    'handling of the above exception" or "The above exception was the direct cause") and the '
    "output just before it: the first exception is often the cause.",
    "cut": "The traceback stops before its last line. Paste it to the end, where the exception type and message are.",
    "log": 'There is no exception in this output. Paste the traceback (from "Traceback (most recent call '
    'last):" to the error line), or run the job under `kb run -- <command>` to catch it.',
    "prose": "A description alone rarely names one cause. Paste the error output itself: the traceback, or "
    "the log lines around the failure.",
    "partial": "`{message}` looks like part of a longer message, one that names a single cause when it is whole. "
    "Paste the complete line (and the traceback around it) so that search can match all of it.",
    # the same cases when the text is all a watched run printed (`kb run`, the hook): nothing more to paste
    "launcher_output": "Only the launcher's failure summary reached this output; the failing worker's traceback "
    "went elsewhere. Rerun with `torchrun --tee 3` or `--log-dir DIR` to keep each rank's output.",
    "exception_output": "No entry knows `{message}`. The first exception of its chain is often the cause: "
    "read the traceback above it, or `kb search` that traceback alone.",
    "cut_output": "The output stops inside a traceback: the process was killed while printing it (the host's "
    "OOM killer, a scheduler's time limit, a signal from another rank?).",
    "foreign": "This traceback comes from `{package}`, and nothing in it names PyTorch, CUDA or a training "
    "library: the catalogue covers training failures only, so it offers no entry. If a training run did print "
    "it, paste the lines around it that show torch (the script's frames, the launcher's output).",
    "log_output": "The output kb holds has no exception in it: the exit status and the last lines above are what "
    "there is (kb run says above when it kept only the end of a longer output).",
}


def _quoted(message: str) -> str:
    return message[: HINT.advice_message_chars].rstrip() + "…" if len(message) > HINT.advice_message_chars else message


def what_would_help(
    query: Query,
    symptom: str | None = None,
    whole_output: bool = False,
    partial: bool = False,
    lone: str | None = None,
) -> str:
    """The advice for a paste search could not explain.

    ``symptom`` is the line a signature matched when the message is one that several root
    causes print: the paste is known, only its cause is not. ``whole_output``: the text is
    all a watched run printed, so asking for more of it is no help. ``partial``: ``symptom`` is part
    of a message that names one cause (cut or retyped), not a line several causes print. ``lone``: the
    one entry known to print ``symptom`` (there are no candidates to weigh against each other).
    """
    suffix = "_output" if whole_output else ""
    if query.launcher_only:
        return ADVICE["launcher" + suffix]
    if symptom is not None and partial and not whole_output:
        return ADVICE["partial"].replace("{message}", _quoted(symptom))
    if symptom is not None and lone is not None:
        return ADVICE["symptom_one" + suffix].replace("{message}", _quoted(symptom)).replace("{entry}", lone)
    if symptom is not None:
        return ADVICE["symptom" + suffix].replace("{message}", _quoted(symptom))
    failures = [m for m in query.messages if m.weight >= FAILURE_WEIGHT and m.type]
    if failures and not query.cut:
        last = failures[-1]
        message = f"{last.type}: {last.text}" if last.text else last.type or ""
        return ADVICE["exception" + suffix].replace("{message}", _quoted(message))
    if query.kind == "traceback":
        return ADVICE["cut" + suffix]
    return ADVICE["log" + suffix] if query.kind == "log" or whole_output else ADVICE["prose"]


HINT = HintRules(
    advice_message_chars=100,
    library_frame=re.compile(r'File "[^"]*[/\\](?:site|dist)-packages[/\\]([A-Za-z_]\w*)'),
    training=re.compile(
        r"torch|cuda|cudnn|cublas|nccl|gloo|triton|deepspeed|accelerate|transformers|lightning|peft|timm|diffusers|"
        r"datasets|tokenizers|safetensors|huggingface|bitsandbytes|apex|xformers|flash_attn|vllm|numpy|tensorflow|"
        r"jax|keras|sklearn|scipy|gpu",
        re.IGNORECASE,
    ),
)


def foreign_package(query: Query) -> str | None:
    """The package a traceback comes from when it is not a training failure at all (a Django view, a CLI tool).

    Only a traceback whose frames run through installed packages, none of them and no line of the paste
    naming torch, CUDA or a training library: a user's own code alone says nothing either way.
    """
    if query.kind != "traceback" or any(HINT.training.search(line.text) for line in query.lines):
        return None
    found = [m.group(1) for line in query.lines if line.role == "frame" and (m := HINT.library_frame.search(line.text))]
    return found[-1] if found else None
