"""The folder tree is the architecture: imports point down the layers, and no two modules import each other.

Layers, lowest first (docs/architecture.md): ``core`` (and ``artifacts``, ``i18n``), what runs in both engines;
``sandbox``, the learner's side of the boundary and how it starts; ``engines``; ``formats``, which
read Results and never import commands or engines; ``commands``. Imports inside functions count.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT
from tests.judged import ABOVE_THE_ENGINES

PACKAGE = ROOT / "judge"
LAYERS = {"core": 0, "artifacts": 0, "i18n": 0, "lang": 0, "": 0, "sandbox": 1, "engines": 2, "formats": 2, "commands": 3, "__main__": 4}


def modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        found[name] = path
    return found


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The judge modules ``name`` imports (a package's own ``__init__`` counts for ``from . import x``)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            candidates = [f"{target}.{alias.name}" for alias in node.names] + [target]
        elif isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        else:
            continue
        for candidate in candidates:
            if candidate in known:
                found.add(candidate)
                break
    return found - {name}


def layer(name: str) -> int:
    parts = name.split(".")
    return LAYERS[parts[1] if len(parts) > 1 else ""]


def test_imports_point_down_the_layers():
    known = modules()
    upward = [f"{name} imports {target}" for name, path in known.items()
              for target in imports(name, path, set(known)) if layer(target) > layer(name)]
    assert upward == []


def test_formats_never_import_commands_or_engines():
    known = modules()
    wrong = [f"{name} imports {target}" for name, path in known.items() if name.startswith("judge.formats")
             for target in imports(name, path, set(known)) if target.startswith(("judge.commands", "judge.engines"))]
    assert wrong == []


def test_what_judges_never_imports_commands_or_formats():
    """Results do not depend on them: the tests' shared cache leaves them out of its key (tests/judged.py)."""
    known = modules()
    above = tuple(f"judge.{folder}" for folder in ABOVE_THE_ENGINES)
    wrong = [f"{name} imports {target}" for name, path in known.items() if not name.startswith((*above, "judge.__main__"))
             for target in imports(name, path, set(known)) if target.startswith(above)]
    assert wrong == []
    assert set(ABOVE_THE_ENGINES) <= set(LAYERS), "a folder the cache leaves out is not a layer"


def test_no_two_modules_import_each_other():
    known = modules()
    graph = {name: imports(name, path, set(known)) for name, path in known.items()}
    pairs = sorted({tuple(sorted((a, b))) for a, targets in graph.items() for b in targets if a in graph.get(b, ())})
    assert pairs == []


def test_the_learner_process_needs_only_the_runtime_files():
    """What judge/sandbox/child.py imports (transitively) is what the runtime folder holds."""
    from judge.sandbox import levels

    known = modules()
    seen, todo = set(), ["judge.sandbox.child"]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo += imports(name, known[name], set(known))
    shipped = {"judge." + f.removesuffix(".py").replace("/", ".").removesuffix(".__init__") for f in levels._RUNTIME_FILES}
    shipped.add("judge")
    assert seen <= shipped, sorted(seen - shipped)
