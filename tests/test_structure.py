"""The package's shape: no import cycle between its modules (function-level imports included), no module outside
`envs/` asks which environment it runs (no comparison with a registered environment's name), and every public method
of an exported class has its `show_doc` in the notebook of its module (nbdev documents a class by its constructor)."""
import ast
import importlib
import inspect
import json
import re
from pathlib import Path

from hybrid_nbs.envs import ENV_NAMES

PKG = Path(__file__).resolve().parents[1] / "hybrid_nbs"
NBS = PKG.parent / "nbs"


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


# DESIGN.md's layers, bottom up: a module imports only modules of its own layer or of the layers below ("envs" stands for
# the package envs/ and every module in it; "" is the package's __init__, its lazy public API)
LAYERS = {
    "contract": ("core", "symmetry", "env", "capabilities", "paths", "conformance"),
    "solvers": ("envs",),
    "data": ("store", "data", "card", "dataset", "coarse", "held_out", "resources"),
    "learning": ("defaults", "nets", "model", "units", "checkpoint", "train_config", "pairs", "loss", "train", "lr_range", "loader_bench", "model_cost"),
    "uncertainty": ("errormap", "baselines", "error_head", "conformal", "weighted_conformal", "baselines_fit"),
    "evidence": ("metrics", "metrics_ci", "records", "evidence", "gates"),
    "operation": ("hybrid", "timing", "solver_runs", "speed"),
    "reporting": ("evaluate", "report", "claims", "beyond", "dryrun"),
    "entry": ("pipeline", "jobs", "publish", "job_cost", "lanes", "cli", ""),
}
# imports that go up a layer, each with why it stays
UPWARD = {("paths", "envs"): "an import path `module:Class` names its folder by the class's name: resolved lazily, on use"}


def test_modules_import_only_their_layer_and_below():
    "Issue 39: the layering reads its rules from `LAYERS`; every module has a layer, and no import goes up one."
    rank = {m: k for k, mods in enumerate(LAYERS.values()) for m in mods}
    layer = lambda m: rank.get(m, rank.get(m.split(".")[0]))  # noqa: E731  envs.euler is in envs' layer
    mods = _modules()
    assert not [m for m in mods if layer(m) is None], "modules in no layer of LAYERS"
    up = [f"{m} ({list(LAYERS)[layer(m)]}) imports {d} ({list(LAYERS)[layer(d)]})" for m, f in mods.items()
          for d in sorted(_imports(m, f, mods)) if layer(d) > layer(m) and (m, d) not in UPWARD]
    assert not up, up
    assert all(layer(d) > layer(m) and d in _imports(m, mods[m], mods) for m, d in UPWARD), "a stale UPWARD entry"


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


def _module_notebooks() -> dict[str, Path]:
    "Module name (as `_modules` names it) -> the notebook whose `#| default_exp` exports it."
    out = {}
    for nb in sorted(NBS.glob("*.ipynb")):
        for cell in json.loads(nb.read_text())["cells"]:
            m = re.search(r"^#\|\s*default_exp\s+(\S+)", "".join(cell["source"]), re.M)
            if cell["cell_type"] == "code" and m:
                out[m.group(1).removesuffix("__init__").removesuffix(".")] = nb  # `envs.__init__` is `envs`
                break
    return out


def _show_docs(nb: Path) -> set[str]:
    "The names the notebook's code cells call `show_doc` on, e.g. {'HybridSimulator.calibrate'}."
    cells = json.loads(nb.read_text())["cells"]
    return {n for c in cells if c["cell_type"] == "code" for n in re.findall(r"show_doc\(\s*([\w.]+)", "".join(c["source"]))}


def _public_methods(cls) -> list[str]:
    "Public methods, properties, class and static methods written in the body of `cls` itself."
    out = []
    for name, v in vars(cls).items():
        f = v.fget if isinstance(v, property) else getattr(v, "__func__", v)
        # written in this class's body: not an inherited method, a dataclass field's default (`Baseline.applies`) nor
        # an alias of a module function (`Euler.from_primitive = staticmethod(from_primitive)`, documented as itself)
        if not name.startswith("_") and inspect.isfunction(f) and f.__qualname__ == f"{cls.__qualname__}.{name}":
            out.append(name)
    return out


def test_every_public_method_has_a_show_doc():
    notebooks, missing = _module_notebooks(), []
    for m in sorted(_modules()):
        mod = importlib.import_module(f"hybrid_nbs.{m}" if m else "hybrid_nbs")
        classes = [c for c in (getattr(mod, n) for n in getattr(mod, "__all__", ()))
                   if inspect.isclass(c) and c.__module__ == mod.__name__]
        methods = [(c, f) for c in classes for f in _public_methods(c)]
        if not methods:
            continue
        assert m in notebooks, f"no notebook under nbs/ has `#| default_exp {m}` (module hybrid_nbs.{m})"
        documented = _show_docs(notebooks[m])
        missing += [f"{c.__name__}.{f} (nbs/{notebooks[m].name})" for c, f in methods if f"{c.__name__}.{f}" not in documented]
    assert not missing, f"public methods without a `show_doc(Class.method)` cell in their module's notebook: {missing}"


def test_every_committed_artefact_is_written_by_a_job():
    "Each committed file under tables/, figures/ and results/ is declared (hybrid_nbs.writes) by a notebook of one of the two jobs, or is a job's cost table; and each declared one is committed."
    import subprocess

    from hybrid_nbs.jobs import JOBS, plan_job
    from hybrid_nbs.job_cost import COST_TABLES
    from hybrid_nbs.publish import COMMITTED_PROFILE
    writers = {f"tables/{name}.{ext}": f"the {job} job itself" for job, name in COST_TABLES.items() for ext in ("md", "json")}
    for job in JOBS:
        for t in plan_job(job, COMMITTED_PROFILE):
            for w in t.writes:
                assert writers.setdefault(w, t.key) == t.key, f"{w} is declared by {writers[w]} and by {t.key}"
    files = subprocess.run(["git", "-C", str(PKG.parent), "ls-files", "tables", "figures", "results"], capture_output=True,
                           text=True, check=True).stdout.split()
    orphans = [f for f in files if f not in writers]
    assert not orphans, f"committed, but written by no notebook of the two jobs: {orphans}"
    unmade = sorted(w for w in writers if w not in files)
    assert not unmade, f"declared by a notebook of the two jobs, but not committed: {unmade}"


def test_every_description_is_one_sentence_line():
    "A page's subtitle is its notebook's `> ` line: nbdev keeps only the first line, so a wrapped one is cut mid-sentence."
    nbs, bad = NBS, {}
    for p in sorted([*nbs.glob("*.ipynb"), *(nbs / "experiments").glob("*.ipynb")]):
        first = "".join(json.loads(p.read_text())["cells"][0]["source"])
        lines = [ln for ln in first.splitlines() if ln.startswith(">")]
        if p.parent == nbs and not lines:
            bad[p.name] = "no description"  # every chapter says in one line what it is
        elif len(lines) > 1:
            bad[p.relative_to(nbs).as_posix()] = f"{len(lines)} description lines (a page shows the first)"
        elif lines and not lines[0].rstrip().endswith((".", ")", "?", "!")):
            bad[p.relative_to(nbs).as_posix()] = f"ends mid-sentence: ...{lines[0][-40:]!r}"
    assert not bad, bad


def test_no_private_name_crosses_a_module():
    "A name with a leading underscore is its module's own: another module imports only public names."
    crossing = []
    for name, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                crossing += [f"{name} imports {a.name} from {'.' * node.level}{node.module or ''}" for a in node.names
                             if a.name.startswith("_") and not a.name.startswith("__")]
    assert not crossing, crossing


def test_no_function_takes_more_than_eight_parameters():
    "Issue 39: a function over eight parameters takes a typed config object instead; numba kernels (flat arrays) are exempt."
    over = []
    for name, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            a = node.args
            n = len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs) + bool(a.vararg) + bool(a.kwarg)
            n -= bool(a.args) and a.args[0].arg in ("self", "cls")
            if n > 8 and not any("jit" in ast.unparse(d) for d in node.decorator_list):
                over.append(f"{name}.{node.name} ({n})")
    assert not over, over
