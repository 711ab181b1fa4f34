"""Write docs/coverage.md: what the public failure reports need that the catalogue lacks.

Every case of benchmarks/real_failures.jsonl with an empty `expect` is a failure the catalogue
does not explain. Cases whose root cause the thread established are grouped by that cause;
the rest by the symptom the report shows (from its `topic`, `note`, `failure_mode` and text,
by the keyword rules below, first match wins). Both lists are ranked by count: the catalogue's
to-do list. The share of the corpus that entries now cover, and that search answers right with
confidence, comes first.

    python benchmarks/coverage.py [--check]
"""

from __future__ import annotations

import json
import re
import sys
from collections import defaultdict
from pathlib import Path

from _generated import write_or_check

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "real_failures.jsonl"
OUT = HERE.parent / "docs" / "coverage.md"

# (cluster, pattern over the case's labels) for established root causes
CAUSES = [
    (
        "library or framework version skew (API removed or renamed, incompatible releases)",
        r"version skew|removed in|renamed|incompatible with the installed|downgrad|no longer (?:has|accepts)|"
        r"far newer than",
    ),
    (
        "a bug in the project's own training code or scripts",
        r"bug in the repo|repo(?:sitory)? code|fixed upstream|"
        r"training-code bug|repository's training|LLaMA-Factory bug|fish-speech bug|repository code|leftover|"
        r"label assignment|library bug|bug in train|never defined|hard-coded|custom on_epoch_end|lookup by file name",
    ),
    (
        "a bug in the user's own model code (shapes, concatenation, misuse of an op)",
        r"shape bug|model code|misuse|user's own|user's application|not Lightning",
    ),
    (
        "a framework or library bug, fixed in a later release",
        r"torch bug|framework bug|unwrap_model|regression in|race condition",
    ),
    (
        "the model (or full fine-tuning) does not fit the GPU",
        r"too small for|needs a GPU|does not fit|"
        r"needs more GPU memory|more than \d+ ?GB|too large for \d+ ?GB",
    ),
    (
        "a checkpoint or adapter built for a different model is loaded",
        r"checkpoint of a different|checkpoint with rank",
    ),
    (
        "data not prepared as the code expects (preprocessing, paths, labels, corrupt files)",
        r"data not preprocessed|corrupt|wrong image folder|no type maps|paths dictionary|label seen only|old-format|"
        r"annotation format",
    ),
    (
        "hardware, driver, toolkit, cluster or storage problems on the reporter's side",
        r"hardware|failing drive|reporter's device|compute cluster|network mount|built against an incompatible|"
        r"CUDA toolkit|import order|GPU configuration|not enough memory on the machine|cloud bucket",
    ),
    (
        "gradient checkpointing combined with other features (reentrant + autograd.grad, DDP, ZeRO)",
        r"reentrant|gradient checkpointing|checkpointing",
    ),
    (
        "a setting, argument or config value wrong for the run (user configuration)",
        r"set smaller than|pointed --load|subcommand|lacks the repo's extra key|batch size larger than|"
        r"max_steps|computes to 0",
    ),
    (
        "NaN made by a custom layer or loss (the user's numerics, not AMP)",
        r"produced NaN|turned NaN|not L2-normalised",
    ),
    ("fp16 numerics (NaN or overflow) outside GradScaler's reach", r"fp16|float16"),
    (
        "not a bug (expected behaviour, loss at its floor)",
        r"not a bug|^expected|expected behaviour|did not match the paper",
    ),
]
# (cluster, pattern over the case's labels and text) for reports whose cause is unknown
SYMPTOMS = [
    (
        "host RAM exhausted: worker or job Killed, exit 137/-9",
        r"host OOM|killed by signal: Killed|exitcode: -9|"
        r"\bKilled\b",
    ),
    (
        "CUDA out of memory, cause not established",
        r"CUDA out of memory|OutOfMemoryError|CUDA OOM|\bOOM\b|"
        r"out of memory",
    ),
    ("loss becomes NaN or inf", r"\bnan\b|\binf\b"),
    (
        "segmentation fault, bus error or other native crash",
        r"segmentation fault|segfault|SIGSEGV|core dumped|"
        r"exitcode: -11|Bus error",
    ),
    (
        "device-side assert, illegal memory access and other CUDA runtime errors",
        r"device-side assert|illegal memory access|CUDA error|launch failure",
    ),
    ("cuDNN / cuBLAS status errors", r"CUDNN_STATUS|CUBLAS_STATUS|cuDNN error"),
    (
        "NCCL errors, watchdog timeouts and distributed hangs",
        r"NCCL|watchdog|ProcessGroup|ChildFailedError|torchrun|"
        r"distributed|DDP|multi-?GPU|hangs?\b|stuck|freez",
    ),
    ("slow training or low GPU utilisation", r"slow|utili[sz]ation|GPU-Util|starved|bottleneck"),
    (
        "loss does not decrease, accuracy stays low, results do not reproduce",
        r"not decreas|doesn't decrease|does not decrease|loss (?:is )?(?:stuck|flat|constant)|not (?:learn|converg)|"
        r"accuracy|reproduc|decreas",
    ),
    (
        "shape, dtype or device mismatch",
        r"shape|size mismatch|dtype|expected scalar type|same device|mat1 and mat2|"
        r"running_mean|must match|device mismatch",
    ),
    (
        "unexpected keyword or argument (API drift)",
        r"unexpected keyword|positional argument|has no attribute|"
        r"cannot import|ImportError|ModuleNotFound",
    ),
    ("gradient checkpointing and autograd errors", r"gradient checkpoint|use_reentrant|grad_fn|backward"),
    (
        "checkpoint saving, loading or resuming",
        r"resum|state_dict|loading checkpoint|load checkpoint|save checkpoint|"
        r"checkpoint (?:load|sav)",
    ),
    ("torch.compile", r"torch\.compile|compile"),
    ("LoRA / PEFT fine-tuning", r"lora|peft"),
    ("DeepSpeed / FSDP / accelerate", r"deepspeed|zero|fsdp|accelerate"),
    (
        "KeyError / ValueError / AssertionError raised in the project's code",
        r"KeyError|ValueError|AssertionError|IndexError",
    ),
    ("the training crashes or stops, with no error in the report", r"crash|stop|error|fail"),
]


def _label_text(case: dict) -> str:
    return " ".join(str(case.get(k, "")) for k in ("failure_mode", "topic", "note"))


def cluster(case: dict) -> tuple[str, str]:
    """('cause' | 'symptom', cluster name) of an uncovered case."""
    if case["failure_mode"] != "unknown" and "not established" not in case["failure_mode"]:
        for name, pattern in CAUSES:
            if re.search(pattern, case["failure_mode"], re.IGNORECASE):
                return "cause", name
        return "cause", "other established causes"
    text = _label_text(case) + " " + case["text"]
    for name, pattern in SYMPTOMS:
        if re.search(pattern, text, re.IGNORECASE):
            return "symptom", name
    return "symptom", "other"


def answered(cases: list[dict]) -> int:
    """Cases search answers right at medium or high confidence."""
    from trainkb.search import get_index, search

    index = get_index()
    count = 0
    for case in cases:
        response = search(case["text"], top=1, catalogue=index)
        count += bool(response.results) and not response.abstained and response.results[0].id in case["expect"]
    return count


def render(cases: list[dict]) -> str:
    covered = [c for c in cases if c["expect"]]
    right = answered(covered)
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for case in cases:
        if not case["expect"]:
            groups[cluster(case)].append(case)
    out = [
        "# Coverage: what the public failure reports need",
        "",
        "Generated by `python benchmarks/coverage.py` from `benchmarks/real_failures.jsonl` (public issue",
        "threads sampled without regard to the catalogue; see `benchmarks/real_failures.md`). A case is",
        "covered when an entry explains the root cause the thread establishes (its `expect`).",
        "",
        "| | cases | covered | share | answered right (medium/high) |",
        "|---|---|---|---|---|",
    ]
    for name in ("dev", "test", "all"):
        part = [c for c in cases if name == "all" or c["split"] == name]
        cov = [c for c in part if c["expect"]]
        out.append(
            f"| {name} | {len(part)} | {len(cov)} | {100 * len(cov) / len(part):.1f}% | "
            f"{answered(cov) if name != 'all' else right} |"
        )
    uncovered = sum(len(v) for v in groups.values())
    established = sum(len(v) for k, v in groups.items() if k[0] == "cause")
    out += [
        "",
        f"{uncovered} cases are not covered: {established} with a root cause the thread establishes, "
        f"{uncovered - established} without one.",
        "",
    ]
    for kind, heading, intro in (
        (
            "cause",
            "## Established root causes no entry explains",
            "Ranked by count. These are the entries to write next: the cause is known and a fix exists.",
        ),
        (
            "symptom",
            "## Reports whose cause is unknown, by symptom",
            "Ranked by count. An entry cannot claim these cases, but the symptoms show where triage entries "
            "(how to find the cause) and better advice on abstention pay off.",
        ),
    ):
        out += [heading, "", intro, "", "| # | cluster | cases | examples |", "|---|---|---|---|"]
        ranked = sorted(((k[1], v) for k, v in groups.items() if k[0] == kind), key=lambda kv: (-len(kv[1]), kv[0]))
        for rank, (name, members) in enumerate(ranked, 1):
            examples = ", ".join(f"[{c['id']}]({c['source']})" for c in members[:3])
            out.append(f"| {rank} | {name} | {len(members)} | {examples} |")
        out.append("")
    return "\n".join(out)


def main() -> int:
    def build() -> str:
        cases = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
        return render(cases)

    return write_or_check("coverage.py", OUT, build)


if __name__ == "__main__":
    sys.exit(main())
