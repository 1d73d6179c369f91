"""Executing a docs page's notebook: a child process per notebook, with the chapters' profile, nbdev's docs processors, a scratch root that keeps the committed figures and tables, and the test of a fresh executed copy (see `docs.py`). Loaded by file path in the child: it imports no sibling tool."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

__all__ = ['run_worker']

def _worker(job: dict) -> None:
    "Execute (unless `job['run']` is false) and process one notebook, in a child process whose cwd is the project root."
    from fastcore.nbio import read_nb, write_nb
    src, executed, processed = Path(job["src"]), Path(job["executed"]), Path(job["processed"])
    if job["run"]:
        from execnb.shell import CaptureShell
        from fastcore.xtras import working_directory
        from nbdev.config import get_config
        from nbdev.process import NBProcessor
        from nbdev.test import _skip_cell

        flags = str(get_config().get("tst_flags", "")).split() if job["skip_tst_flags"] else []
        nb = NBProcessor(src, rm_directives=False, process=True).nb
        shell = CaptureShell(src)
        try:
            with working_directory(src.parent):
                shell.run_all(nb, exc_stop=True, preproc=_skip_cell(nb, flags))
        except BaseException:
            sys.stderr.write(shell.prettytb(fname=src) or "")
            raise SystemExit(1)
        nb.metadata["hybrid_nbs_docs"] = {"profile": job["profile"], "skipped_flags": flags}
        executed.parent.mkdir(parents=True, exist_ok=True)
        write_nb(nb, executed)
    nb = read_nb(executed)
    _DocsProcs()(nb)
    processed.parent.mkdir(parents=True, exist_ok=True)
    write_nb(nb, processed)


def _DocsProcs():
    "nbdev's `FilterDefaults`, whose `show_doc` shell runs only definitions, `show_doc`s and cells of imports alone."
    import ast

    from nbdev.processors import FilterDefaults, _show_docs, exec_show_docs

    class exec_show_docs_only(exec_show_docs):
        # nbdev's also runs every cell that imports anything, and replaces its outputs: a plotting cell that imports
        # pyplot is run again without the cells before it, and fails (nbdev's FAQ: keep imports in cells of their own)
        def __call__(self, cell):
            trees = cell.parsed_() if cell.cell_type == "code" and cell.source else None
            if trees and not (cell.directives_.keys() & {"export", "exports", "exporti", "exec_doc"}) and not _show_docs(trees) \
                    and not all(isinstance(t, (ast.Import, ast.ImportFrom)) for t in trees):
                return
            super().__call__(cell)

    class DocsProcs(FilterDefaults):
        def base_procs(self):
            return [exec_show_docs_only if p is exec_show_docs else p for p in super().base_procs()]

    return DocsProcs()


def run_worker(
    job: dict,  # src, executed, processed (paths), run, skip_tst_flags (bools), profile
    root: Path,  # the project root: the child's working folder
    scratch: Path | None = None,  # `HYBRID_NBS_ROOT` for the notebook: where its figures, tables and data go
    timeout: float = 1800,  # seconds for the whole notebook
) -> str:  # "" on success, else the end of the child's error output
    "Run the worker in a child process with the job's profile in `HYBRID_NBS_PROFILE`."
    env = {**os.environ, "HYBRID_NBS_PROFILE": job["profile"], "HYBRID_NBS_ROOT": str(scratch or root), "IN_TEST": "1"}
    # the child loads this very file (not an installed module: the tool lives in the checkout) and runs `_worker`
    code = ("import importlib.util, json, sys; spec = importlib.util.spec_from_file_location('docs_worker', sys.argv[1]); "
            "mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod); "
            "mod._worker(json.loads(sys.argv[2]))")
    cmd = [sys.executable, "-c", code, str(Path(__file__).resolve()), json.dumps(job)]
    try:
        r = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"timed out after {timeout:.0f} s"
    return "" if r.returncode == 0 else (r.stderr.strip() or r.stdout.strip() or f"exit code {r.returncode}")[-3000:]


def scratch_root(root: Path, scratch: Path) -> Path:
    "A root for the executing notebooks: copies of `figures/` and `tables/`, links to the rest of the project."
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    (root / "data").mkdir(exist_ok=True)  # datasets are per profile and git-ignored: shared
    for entry in root.iterdir():
        if entry.name in ("figures", "tables"):
            shutil.copytree(entry, scratch / entry.name, symlinks=True)
        elif entry.name not in (".git", ".venv", "_proc", "_docs") and entry.resolve() not in (scratch, *scratch.parents):
            (scratch / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    return scratch


def is_fresh(executed: Path, src: Path, lib: Path, profile: str) -> bool:
    if not executed.is_file():
        return False
    newest = max([src.stat().st_mtime, *(p.stat().st_mtime for p in lib.rglob("*.py"))])
    if executed.stat().st_mtime < newest:
        return False
    meta = json.loads(executed.read_text()).get("metadata", {}).get("hybrid_nbs_docs", {})
    return meta.get("profile") == profile


