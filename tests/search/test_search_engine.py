"""Ranking, evidence, abstention, the JSON contract and the disk cache, on a fixture catalogue."""

from __future__ import annotations

import json
from pathlib import Path

from trainkb.search import get_index, search
from trainkb.search._hint import ADVICE
from trainkb.search._index import load_index
from trainkb.search._policy import SIGNATURES

D4_KILLED = r"""
id: D4
title: DataLoader worker killed by the OOM killer (host RAM)
area: alpha
section: two
tags: [dataloader, host-oom]
symptom: Workers die one after another while host memory climbs epoch after epoch.
root_cause: Each worker's in-memory cache grows without bound.
fix: Bound the cache or lower `num_workers`.
fix_summary: Bound the cache or lower `num_workers`.
signatures:
  - regex: "DataLoader worker \\(pid \\d+\\) is killed by signal: Killed"
    type: RuntimeError
    example: "DataLoader worker (pid 5123) is killed by signal: Killed."
    names_cause: true
verification: {status: manual, reason: test fixture}
""".lstrip()  # a message public reports print for many causes

DDP_TRACEBACK = """\
Traceback (most recent call last):
  File "train.py", line 40, in <module>
    loss = model(x).sum()
  File "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py", line 1501, in _call_impl
    return forward_call(*args, **kwargs)
RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error \
indicates that your module has parameters that were not used in producing loss.
"""


def test_exact_signature_ranks_first_with_evidence(catalogue: Path) -> None:
    response = search(DDP_TRACEBACK, catalogue=catalogue)
    assert response.query_kind == "traceback" and not response.abstained
    top = response.results[0]
    assert top.id == "D1" and top.confidence == "high"
    evidence = top.evidence[0]
    assert evidence.line == 6
    assert evidence.span is not None
    start, end = evidence.span
    assert evidence.text[start:end].startswith("Expected to have finished reduction in the prior iteration")
    assert evidence.text[start:end].endswith("before starting a new one")


def test_regex_signature_on_a_log_line(catalogue: Path) -> None:
    log = "step 10 ok\nParameter indices which did not receive grad for rank 3: 7 8\nstep 11"
    top = search(log, catalogue=catalogue).results[0]
    assert top.id == "D1" and top.evidence[0].line == 2


def test_retyped_message_still_matches_fuzzily(catalogue: Path) -> None:
    retyped = "RuntimeError: expected to have finished the reduction in prior iteration before starting new one"
    top = search(retyped, catalogue=catalogue).results[0]
    assert top.id == "D1" and top.confidence in {"high", "medium"}


def test_rank_prefixed_launcher_log(catalogue: Path) -> None:
    log = (
        '[rank1]: Traceback (most recent call last):\n[rank1]:   File "t.py", line 2, in <module>\n'
        "[rank1]: torch.distributed.DistNetworkError: The server socket has failed to listen on any local "
        "network address. port: 29511, useIpv6: false, code: -98, name: EADDRINUSE, message: address already "
        "in use\n"
    )
    response = search(log, catalogue=catalogue)
    assert response.results[0].id == "D2" and response.results[0].confidence == "high"


def test_prose_description_finds_the_entry(catalogue: Path) -> None:
    response = search("loss is flat and the weights are identical after optimizer.step()", catalogue=catalogue)
    assert response.query_kind == "prose"
    assert response.results[0].id == "P2"
    assert response.results[0].evidence == []


def test_unrelated_error_abstains_but_lists_closest(catalogue: Path) -> None:
    paste = (
        'Traceback (most recent call last):\n  File "m.py", line 1, in <module>\n'
        "RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x12 and 10x5)\n"
    )
    response = search(paste, catalogue=catalogue)
    assert response.abstained
    assert all(r.confidence == "low" for r in response.results)


def test_unknown_error_with_topic_words_still_abstains(catalogue: Path) -> None:
    paste = (
        "My DDP loss is NaN and the optimizer does not step.\n"
        "RuntimeError: one of the variables needed for gradient computation has been modified by an inplace "
        "operation"
    )
    assert search(paste, catalogue=catalogue).abstained


def test_empty_and_whitespace_abstain(catalogue: Path) -> None:
    for text in ("", "   \n\n", "\x00\x00"):
        response = search(text, catalogue=catalogue)
        assert response.abstained and response.results == []


def test_top_limits_results(catalogue: Path) -> None:
    assert len(search("DDP optimizer NaN shared memory port", top=2, catalogue=catalogue).results) <= 2
    assert search(DDP_TRACEBACK, top=0, catalogue=catalogue).results == []


def test_json_contract(catalogue: Path) -> None:
    data = json.loads(json.dumps(search(DDP_TRACEBACK, catalogue=catalogue).to_json()))
    assert set(data) >= {"query_kind", "abstained", "results"}
    assert data["query_kind"] in {"traceback", "log", "prose"} and isinstance(data["abstained"], bool)
    for result in data["results"]:
        assert set(result) >= {"id", "title", "area", "score", "confidence", "evidence"}
        assert 0 <= result["score"] <= 100 and result["confidence"] in {"high", "medium", "low"}
        for ev in result["evidence"]:
            assert set(ev) >= {"line", "text", "signature"}
            assert isinstance(ev["line"], int) and ev["line"] >= 1


def test_scores_are_sorted_and_bounded(catalogue: Path) -> None:
    results = search(DDP_TRACEBACK + "\nBus error (core dumped)\n", catalogue=catalogue).results
    scores = [r.score for r in results]
    assert scores == sorted(scores, reverse=True)
    assert {"D1", "D3"} <= {r.id for r in results}


def test_index_is_cached_on_disk_and_rebuilt_when_the_catalogue_changes(catalogue: Path, private_cache: Path) -> None:
    first = load_index(catalogue)
    files = list(private_cache.glob("index-*.marshal"))
    assert len(files) == 1
    again = load_index(catalogue)
    assert again.hash == first.hash
    record = catalogue / "beta" / "P2-optimizer.yaml"
    record.write_text(record.read_text().replace("Loss flat", "Loss stays flat"))
    changed = load_index(catalogue)
    assert changed.hash != first.hash
    assert "Loss stays flat" in changed.entries[[e["id"] for e in changed.entries].index("P2")]["title"]


def test_corrupt_cache_is_only_a_miss(catalogue: Path, private_cache: Path) -> None:
    load_index(catalogue)
    for path in private_cache.glob("index-*.marshal"):
        path.write_bytes(b"\x00garbage")
    assert search(DDP_TRACEBACK, catalogue=load_index(catalogue)).results[0].id == "D1"


def test_unwritable_cache_does_not_break_search(catalogue: Path, private_cache: Path) -> None:
    private_cache.parent.mkdir(parents=True)
    private_cache.write_text("a file where the cache folder should be")
    assert search(DDP_TRACEBACK, catalogue=load_index(catalogue)).results[0].id == "D1"


def test_every_signature_example_finds_its_own_entry(catalogue: Path) -> None:
    """What `kb check` relies on: a record's own example output ranks that record first."""
    from trainkb.catalogue import load_catalogue

    index = load_index(catalogue)
    for entry in load_catalogue(catalogue).entries.values():
        for sig in entry.signatures:
            paste = f"{sig.type}: {sig.example}" if sig.type else sig.example
            top = search(paste, catalogue=index).results[0]
            assert top.id == entry.id, (entry.id, sig.example)
            assert (sig.literal or sig.regex) in {ev.signature for ev in top.evidence}


def test_torchrun_summary_points_at_the_root_cause_rank(catalogue: Path) -> None:
    log = "\n".join(
        [
            "[rank0]: Traceback (most recent call last):",
            '[rank0]:   File "t.py", line 9, in <module>',
            "[rank0]: RuntimeError: Function 'DivBackward0' returned nan values in its 1th output.",
            "[rank1]: Traceback (most recent call last):",
            '[rank1]:   File "t.py", line 9, in <module>',
            "[rank1]: RuntimeError: Expected to have finished reduction in the prior iteration"
            " before starting a new one.",
            "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:",
            "Root Cause (first observed failure):",
            "[0]:",
            "  rank      : 1 (local_rank: 1)",
            "  exitcode  : 1 (pid: 4242)",
        ]
    )
    response = search(log, catalogue=catalogue)
    assert [r.id for r in response.results[:2]] == ["D1", "P1"]
    assert response.results[0].evidence[0].line == 6


def test_python_warning_is_matched_with_its_line(catalogue: Path) -> None:
    paste = (
        "/venv/lib/python3.11/site-packages/torch/distributed/run.py:1: UserWarning: The server socket has "
        "failed to bind to [::]:29500 (errno: 98 - Address already in use).\n  warnings.warn(msg)\n"
    )
    top = search(paste, catalogue=catalogue).results[0]
    assert top.id == "D2" and top.evidence[0].line == 1


def test_alias_phrase_in_a_failure_message_is_evidence(catalogue: Path) -> None:
    paste = "ValueError: some of the parameters that were not used in producing loss belong to the head"
    top = search(paste, catalogue=catalogue).results[0]
    assert top.id == "D1"
    assert top.evidence[0].via == "alias"
    assert top.evidence[0].signature == "parameters that were not used in producing loss"
    assert top.to_json()["evidence"][0]["via"] == "alias"


def test_exact_hit_silences_near_misses_on_the_same_line(catalogue: Path) -> None:
    (catalogue / "alpha" / "D4-killed.yaml").write_text(D4_KILLED)
    paste = "RuntimeError: DataLoader worker (pid 77) is killed by signal: Bus error."
    results = search(paste, catalogue=catalogue).results
    assert results[0].id == "D3" and results[0].confidence == "high"
    assert all(r.confidence == "low" for r in results[1:])


def test_sibling_message_is_not_a_fuzzy_match(catalogue: Path) -> None:
    """Same frame, different signal: 'killed by signal: Segmentation fault' is not the Bus error entry."""
    paste = "RuntimeError: DataLoader worker (pid 77) is killed by signal: Segmentation fault."
    assert search(paste, catalogue=catalogue).abstained


def test_variable_identifiers_do_not_break_a_fuzzy_match(catalogue: Path) -> None:
    paste = "RuntimeError: Function PowBackward1 returned nan value in its first output"
    top = search(paste, catalogue=catalogue).results[0]
    assert top.id == "P1" and top.confidence != "low"


def test_a_message_many_root_causes_print_is_not_a_confident_answer_alone(catalogue: Path) -> None:
    """Public failure reports print "killed by signal: Killed" for many causes (background.json)."""
    (catalogue / "alpha" / "D4-killed.yaml").write_text(D4_KILLED)
    index = get_index(catalogue, use_cache=False)
    assert next(s.background for s in index.sigs if s.source.endswith("Killed")) >= SIGNATURES.ambiguous_reports
    bare = search("RuntimeError: DataLoader worker (pid 77) is killed by signal: Killed.", catalogue=index)
    assert bare.results[0].id == "D4" and bare.abstained
    told = search(
        "The OOM killer takes the workers as host RAM climbs every epoch: each worker's in-memory cache "
        "grows without bound.\nRuntimeError: DataLoader worker (pid 77) is killed by signal: Killed.",
        catalogue=index,
    )
    assert told.results[0].id == "D4" and told.results[0].confidence == "medium"


def test_words_alone_never_make_a_high_answer(catalogue: Path) -> None:
    response = search(
        "DDP unused parameters: some parameters were not used in producing loss, expected to have "
        "finished reduction, find_unused_parameters",
        catalogue=catalogue,
    )
    assert all(r.confidence != "high" for r in response.results if not r.evidence)


def test_abstention_says_what_would_help_for_what_the_paste_holds(catalogue: Path) -> None:
    summary = (
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\nRoot Cause (first observed "
        "failure):\n[0]:\n  rank      : 1 (local_rank: 1)\n  exitcode  : 1 (pid: 9928)\n  error_file: <N/A>\n"
        "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html\n"
    )
    cases = {
        summary: ADVICE["launcher"],
        "RuntimeError: running_mean should contain 36 elements not 38": ADVICE["exception"].replace(
            "{message}", "RuntimeError: running_mean should contain 36 elements not 38"
        ),
        'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n    main()\n': ADVICE["cut"],
        "INFO step 10 loss 0.52\nINFO step 20 loss 0.51\nWARNING step 30 loss 0.50\n": ADVICE["log"],
        "my model trains for a while and then the results get worse and worse": ADVICE["prose"],
    }
    for paste, advice in cases.items():
        response = search(paste, catalogue=catalogue)
        assert response.abstained and response.advice == advice, paste
        assert response.to_json()["advice"] == advice
    assert (
        search(
            "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one",
            catalogue=catalogue,
        ).to_json()["advice"]
        is None
    )


def test_an_exclude_in_the_paste_rules_its_entry_out(catalogue: Path) -> None:
    record = next((catalogue / "alpha").glob("D1-*.yaml"))
    text = record.read_text(encoding="utf-8")
    paste = "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one"
    assert search(paste, catalogue=catalogue).results[0].id == "D1"
    record.write_text(
        text + "excludes:\n  - literal: torch.compile is on\n    example: 'note: torch.compile is on'\n",
        encoding="utf-8",
    )
    response = search(paste + "\nnote: torch.compile is on", catalogue=load_index(catalogue, use_cache=False))
    d1 = next(r for r in response.results if r.id == "D1")
    assert d1.score <= 25.0 and d1.confidence == "low" and response.abstained


def test_a_number_the_signature_spells_out_must_be_in_the_line(catalogue: Path) -> None:
    """'exitcode: -11' is a sibling of 'exitcode: -9', not a retyped copy of it."""
    (catalogue / "alpha" / "D5-sigkill.yaml").write_text(
        r"""
id: D5
title: A worker was killed by the host's OOM killer (exit code -9)
area: alpha
section: two
tags: [sigkill]
symptom: torchrun reports a worker that failed with exit code -9.
root_cause: The kernel's OOM killer sent SIGKILL.
fix: Use less host memory per rank.
fix_summary: Use less host memory per rank.
signatures:
  - regex: "failed \\(exitcode: -9\\) local_rank: \\d+ \\(pid: \\d+\\)"
    kind: log
    example: "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 0 (pid: 9928)"
verification: {status: manual, reason: test fixture}
""".lstrip()
    )
    index = load_index(catalogue, use_cache=False)
    line = "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: {}) local_rank: 0 (pid: 15084)"
    sibling = search(line.format("-11"), catalogue=index)
    assert all(r.id != "D5" or not r.evidence for r in sibling.results)
    assert search(line.format("-9"), catalogue=index).results[0].id == "D5"


def test_a_symptom_signature_ranks_its_entry_but_only_a_cause_naming_one_answers(catalogue: Path) -> None:
    """`names_cause: false`: several root causes print the message, so the entry is first but unconfirmed."""
    paste = "RuntimeError: Function 'DivBackward0' returned nan values in its 1th output."
    named = search(paste, catalogue=load_index(catalogue, use_cache=False))
    assert named.results[0].id == "P1" and named.results[0].confidence == "high" and not named.abstained
    record = catalogue / "beta" / "P1-nan-anomaly.yaml"
    record.write_text(
        record.read_text(encoding="utf-8").replace("names_cause: true", "names_cause: false"), encoding="utf-8"
    )
    symptom = search(paste, catalogue=load_index(catalogue, use_cache=False))
    top = symptom.results[0]
    assert top.id == "P1" and top.score == named.results[0].score  # the rank does not change, only the trust
    assert top.confidence == "low" and symptom.abstained
    assert symptom.advice is not None and symptom.advice.startswith("Several root causes print `RuntimeError: Function")
