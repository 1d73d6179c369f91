"""The package's shape: no import cycle between its modules (function-level imports included), and no module outside
`envs/` asks which environment it runs (no comparison with a registered environment's name)."""
import ast
from pathlib import Path

from hybrid_nbs.envs import ENV_NAMES

PKG = Path(__file__).resolve().parents[1] / "hybrid_nbs"


def _modules() -> dict[str, Path]:
    out = {}
    for f in PKG.rglob("*.py"):
        if f.name != "_modidx.py":
            parts = f.relative_to(PKG).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    return out


def _imports(name: str, path: Path, known) -> set[str]:
    "The package modules `name` imports anywhere in its file (module level or inside functions)."
    here = name.split(".") + (["__init__"] if path.name == "__init__.py" else [])
    deps = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            target = ".".join(here[:len(here) - node.level] + ([node.module] if node.module else []))
        elif node.module and node.module.split(".")[0] == "hybrid_nbs":
            target = node.module.partition(".")[2]
        else:
            continue
        deps |= {target} if target in known and target != name else set()
    return deps


def test_import_graph_has_no_cycle():
    mods = _modules()
    graph = {m: _imports(m, f, mods) for m, f in mods.items()}
    state, cycles = {}, []

    def visit(m, path):
        state[m] = "open"
        for d in sorted(graph[m]):
            if state.get(d) == "open":
                cycles.append(" -> ".join(path[path.index(d):] + [d]))
            elif d not in state:
                visit(d, path + [d])
        state[m] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert not cycles, f"import cycles: {cycles}"
    assert "baselines" not in graph["train"] and "card" not in graph["data"]  # the two cycles issue 10 removed


def test_no_environment_name_comparison_outside_envs():
    names = set(ENV_NAMES)
    found = []
    for m, f in _modules().items():
        if m == "envs" or m.startswith("envs."):
            continue
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                consts = {c.value for s in sides for c in ast.walk(s) if isinstance(c, ast.Constant)}
                if consts & names:
                    found.append(f"{f.name}:{node.lineno}")
    assert not found, f"environment names compared outside envs/: {found}"
