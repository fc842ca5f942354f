"""Degenerate solutions: the reference with every function gutted, which must earn no points.

A test that passes when the learner's code did nothing, returned a constant, raised for every
input or skipped is credit for no work. ``judge check`` judges these variants of
``reference/<entry>`` and fails a problem on which any of them earns a point:

- ``raises``: every function raises ``ValueError`` (what argument checks expect);
- ``returns None`` / ``returns 0`` / ``returns []``: every function returns that constant (a
  generator yields nothing and then returns it);
- ``skips``: every function calls ``pytest.skip()``.

Functions are the module's and its classes' (methods included); nested ones go with the function
that holds them.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

_Body = Callable[[bool], list[ast.stmt]]  # the new body, given whether the function is a generator


def _statements(code: str) -> list[ast.stmt]:
    return ast.parse(code).body


def _returning(constant: str) -> _Body:
    def body(generator: bool) -> list[ast.stmt]:
        # `if False: yield` keeps a generator a generator that yields nothing
        return _statements(f"return {constant}" + ("\nif False:\n    yield" if generator else ""))
    return body


VARIANTS: dict[str, _Body] = {
    "raises": lambda generator: _statements("raise ValueError('degenerate solution: raises for every input')"),
    "returns None": _returning("None"),
    "returns 0": _returning("0"),
    "returns []": _returning("[]"),
    "skips": lambda generator: _statements("import pytest\npytest.skip('degenerate solution: skips')"),
}


def degenerate_sources(reference: str) -> dict[str, str]:
    """Each variant's code (by label), made from the reference's code; SyntaxError when it does not parse."""
    return {label: _gut(reference, body) for label, body in VARIANTS.items()}


def _gut(source: str, body: _Body) -> str:
    tree = ast.parse(source)
    for function in _functions(tree.body):
        function.body = body(_is_generator(function))
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def _functions(statements: list[ast.stmt]) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    found: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    for node in statements:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.append(node)
        elif isinstance(node, ast.ClassDef):
            found += _functions(node.body)
        elif isinstance(node, (ast.If, ast.Try)):  # definitions under `if TYPE_CHECKING:` or `try:`
            found += _functions(node.body + node.orelse)
    return found


def _is_generator(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether ``function`` itself yields (a yield in a nested function or lambda does not count)."""
    pending: list[ast.AST] = list(function.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return True
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            pending.extend(ast.iter_child_nodes(node))
    return False
