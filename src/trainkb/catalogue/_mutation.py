"""The rules a check's `mutation` must follow; `kb lint` and `kb check --mutants` both apply them.

A mutation removes the behaviour a claim is about from the code under test. Editing an assert or
a line that only prints would make any check "fail" without saying anything about torch.
"""

from __future__ import annotations

import ast

from ._schema import Check, Mutation

__all__ = ["apply_mutation", "mutation_problems"]

_LOG_OBJECTS = {"logging", "logger", "log", "LOGGER", "_logger"}
_STREAM_WRITES = {("sys", "stdout"), ("sys", "stderr")}


def apply_mutation(code: str, mutation: Mutation) -> str:
    """The mutated code; ValueError unless ``find`` occurs exactly once."""
    count = code.count(mutation.find)
    if count != 1:
        raise ValueError(f"mutation.find occurs {count} times in the code; it must occur exactly once")
    return code.replace(mutation.find, mutation.replace, 1)


def _only_reports(node: ast.stmt) -> bool:
    """A statement that only prints or logs: editing it cannot remove torch behaviour."""
    if not isinstance(node, ast.Expr) or not isinstance(node.value, ast.Call):
        return False
    func = node.value.func
    if isinstance(func, ast.Name):
        return func.id == "print"
    if isinstance(func, ast.Attribute):
        owner = func.value
        if isinstance(owner, ast.Name) and owner.id in _LOG_OBJECTS:
            return True
        return (
            isinstance(owner, ast.Attribute)
            and isinstance(owner.value, ast.Name)
            and (owner.value.id, owner.attr) in _STREAM_WRITES
        )
    return False


def mutation_problems(check: Check) -> list[str]:
    """Why ``check.mutation`` breaks the rules (empty when it is acceptable)."""
    mutation = check.mutation
    if mutation is None:
        return []
    if mutation.find == mutation.replace:
        return ["mutation.replace equals mutation.find: the mutant would be the check itself"]
    try:
        mutated = apply_mutation(check.code, mutation)
    except ValueError as exc:
        return [str(exc)]
    problems = []
    try:
        compile(mutated, "<mutant>", "exec")
    except SyntaxError as exc:
        problems.append(f"the mutated code does not compile: {exc.msg} (line {exc.lineno})")
    try:
        tree = ast.parse(check.code)
    except SyntaxError:
        return problems
    start = check.code.index(mutation.find)
    first = check.code.count("\n", 0, start) + 1
    last = check.code.count("\n", 0, start + len(mutation.find) - 1) + 1  # a trailing newline ends its own line
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt) or node.end_lineno is None:
            continue
        if node.lineno > last or node.end_lineno < first:
            continue
        if isinstance(node, ast.Assert):
            problems.append(
                f"the edit touches the assert on line {node.lineno}; a mutation edits the code "
                "under test, never its assertions"
            )
        elif _only_reports(node):
            problems.append(f"the edit touches line {node.lineno}, which only prints or logs")
    return problems
