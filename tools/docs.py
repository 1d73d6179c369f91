"""The documentation site without Quarto: execute the notebooks, process them as nbdev does, and render them with
smalldocs; `docs_check.py` (next to this file) then checks the pages in headless Chromium.

A development tool of the checkout, not part of the installed package. Run it from the checkout:

    python tools/docs.py [--profile smoke] [--from-runs] [--no-check]   # or: hnwm docs

nbdev's own docs command (`nbdev-docs`) needs Quarto, which does not install on these machines. The same site comes
from four steps that need only Python:

1. **execute** each notebook (they are kept without outputs) with the `smoke` profile, skipping the cells flagged in
   `tst_flags` (`#| slow`) as `nbdev-test` does, or reuse the executed copy `hnwm reproduce` left in `_runs/`;
2. **process** it with nbdev's own docs processors (`nbdev.processors.FilterDefaults`, what `nbdev-proc-nbs` runs):
   `#| hide` and `#| export` cells go, each exported definition gets its `show_doc`, backticked names become links;
3. **render** the processed notebooks with smalldocs, which reads the same `nbs/_quarto.yml` and shows the saved
   outputs;
4. **check** every page in headless Chromium (`docs_check.py`): it renders, its figures are there, and no local link
   is broken.

Pages: every notebook under `nbs/` is a page, except those in folders starting with `_` or `.` (as nbdev's `nbglob`);
the home page is `index.ipynb`, so the site refuses to build without it. nbdev names each page after its notebook
without the numeric prefix (`00_core.ipynb` -> `core.html`), and the links it makes from backticked names point there;
smalldocs names a page after its source, so the processed notebook is saved under the page's name instead, and the
navigation of `nbs/_quarto.yml` / `nbs/sidebar.yml` (globs of notebooks) is rewritten to name the pages.

Executed copies are kept in `_proc/exec/` and reused while they are newer than their notebook and every module of the
package (and were made with the same profile). Notebooks execute with `HYBRID_NBS_ROOT` at `_proc/root`, which holds
copies of `figures/` and `tables/` and links to the rest of the project, so what they write under the `smoke` profile
never replaces the figures and tables `hnwm reproduce` made. Next to the pages, the site gets `docs-manifest.json`:
each page with its title, its source and how many figures its outputs hold, which `check_docs` holds the page to.

The tools import one another by their bare names (`docs`, `docs_check`), as they do when run as scripts: to import
them from elsewhere, put `tools/` on `sys.path` (`hybrid_nbs.cli.dev_tool` does).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path, PurePosixPath

import yaml

from hybrid_nbs.core import PROFILES, get_profile

__all__ = ['ROOT', 'IMAGE_MIMES', 'MANIFEST', 'docs_notebooks', 'page_name', 'page_map', 'map_entries', 'stage_config',
           'run_worker', 'fix_page', 'count_images', 'render_site', 'notebook_job', 'build_docs', 'docs_main', 'main']

ROOT = Path(__file__).resolve().parents[1]  # the checkout this tool belongs to


def docs_notebooks(
    nbs: Path,  # the notebooks folder
) -> list[PurePosixPath]:  # paths relative to `nbs`: index first, then the top folder, then subfolders, each sorted
    "The notebooks the site shows, in sidebar order."
    nbs = Path(nbs)
    if not (nbs / "index.ipynb").is_file():
        raise FileNotFoundError(f"{nbs / 'index.ipynb'} is missing: it is the docs' home page (and the README's source)")
    found = [PurePosixPath(p.relative_to(nbs).as_posix()) for p in nbs.rglob("*.ipynb")]
    found = [p for p in found if not any(part.startswith((".", "_")) for part in p.parts)]
    return sorted(found, key=lambda p: (len(p.parts) > 1, p.name != "index.ipynb", str(p)))


def page_name(
    nb: PurePosixPath | str,  # a notebook path relative to `nbs`
) -> PurePosixPath:  # the processed notebook's path, which smalldocs turns into the page nbdev would make
    "nbdev's page name for a notebook (`nbpath2html`), as an `.ipynb` path."
    nb = PurePosixPath(nb)
    return nb.with_name(re.sub(r"^\d+[a-zA-Z0-9]*_", "", nb.name.lower())).with_suffix(".ipynb")


def page_map(
    nbs: Path,  # the notebooks folder
) -> dict[PurePosixPath, PurePosixPath]:  # each notebook (relative to `nbs`) to its page name, in sidebar order
    "Page names for all the site's notebooks; two notebooks may not make the same page."
    pages: dict[PurePosixPath, PurePosixPath] = {}
    for nb in docs_notebooks(nbs):
        page = page_name(nb)
        clash = next((k for k, v in pages.items() if v == page), None)
        if clash is not None:
            raise ValueError(f"notebooks {clash} and {nb} both make the page {page.with_suffix('.html')}; rename one")
        pages[nb] = page
    return pages


def _glob_match(
    path: PurePosixPath,  # a notebook path
    pattern: str,  # a glob whose `*` stays inside one folder, as Quarto's
) -> bool:
    pat = PurePosixPath(pattern.lstrip("/"))
    return len(pat.parts) == len(path.parts) and all(fnmatch.fnmatchcase(a, b) for a, b in zip(path.parts, pat.parts))


def map_entries(
    entry,  # a sidebar or navbar entry, or a list of them, from the YAML
    pages: dict[PurePosixPath, PurePosixPath],  # notebook -> page name, from `page_map`
):  # the entry with notebook paths and globs replaced by page names (a glob becomes a list)
    "Rewrite the navigation of a Quarto config from the notebooks' names to the pages' names."
    if isinstance(entry, list):
        out = []
        for e in entry:
            m = map_entries(e, pages)
            if m is None:
                continue
            out += m if isinstance(e, str) and isinstance(m, list) else [m]
        return out
    if isinstance(entry, str):
        if any(c in entry for c in "*?["):
            return [str(v) for k, v in pages.items() if _glob_match(k, entry)]
        return str(pages.get(PurePosixPath(entry.lstrip("/")), entry))
    if isinstance(entry, dict):
        out = {}
        for k, v in entry.items():
            if k in ("contents", "chapters", "left", "right", "menu"):
                v = map_entries(v if isinstance(v, list) else [v], pages)
            elif k in ("href", "file") and isinstance(v, str):
                v = map_entries(v, pages)
            out[k] = v
        if ("section" in out or "part" in out) and not out.get("contents") and not out.get("href"):
            return None  # a section whose glob matched nothing
        return out
    return entry


def stage_config(
    nbs: Path,  # the notebooks folder, with `_quarto.yml`
    stage: Path,  # the staged smalldocs project
    pages: dict[PurePosixPath, PurePosixPath],  # notebook -> page name, from `page_map`
) -> list[Path]:  # the files copied
    "Copy the Quarto config and the other non-notebook files of `nbs` into `stage`, naming pages in the navigation."
    nbs, stage = Path(nbs), Path(stage)
    if not (nbs / "_quarto.yml").is_file():
        raise FileNotFoundError(f"{nbs / '_quarto.yml'} is missing: it is the site's Quarto config")
    copied = []
    for src in sorted(p for p in nbs.rglob("*") if p.is_file()):
        rel = src.relative_to(nbs)
        if src.suffix == ".ipynb" or any(part.startswith((".", "_")) and part != "_extensions" for part in rel.parts[:-1]):
            continue
        if rel.name.startswith(".") or "__pycache__" in rel.parts:
            continue
        dst = stage / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.suffix in (".yml", ".yaml") and not rel.parts[0] == "_extensions":
            cfg = yaml.safe_load(src.read_text()) or {}
            site = cfg.get("website") if isinstance(cfg, dict) else None
            if isinstance(site, dict):
                for key in ("sidebar", "navbar"):
                    if key in site:
                        site[key] = map_entries(site[key], pages)
            dst.write_text(yaml.safe_dump(cfg, sort_keys=False))
        else:
            shutil.copy2(src, dst)
        copied.append(dst)
    return copied


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


IMAGE_MIMES = ("image/png", "image/jpeg", "image/gif", "image/svg+xml")
_re_nb_link = re.compile(r"\]\(([^)\s#]+\.ipynb)((?:#[^)\s]*)?)\)")
_re_blob_link = re.compile(r"\]\(/blob/[^/)\s]+/([^)\s#]+)((?:#[^)\s]*)?)\)")


def _text(x) -> str:
    return "".join(x) if isinstance(x, list) else (x or "")


def fix_page(
    nb: dict,  # a processed notebook, as JSON
    nb_path: PurePosixPath,  # its source path relative to `nbs`
    pages: dict[PurePosixPath, PurePosixPath],  # notebook -> page name
) -> tuple[dict, set[str]]:  # the notebook fixed in place, and the source files its links need in `source/`
    "Make a processed notebook a smalldocs page: front matter, links to notebooks, links to source."
    up = "../" * (len(nb_path.parts) - 1)
    sources: set[str] = set()

    def nb_link(m):
        target = PurePosixPath(os.path.normpath(str(nb_path.parent / m.group(1)))).as_posix()
        page = pages.get(PurePosixPath(target))
        return m.group(0) if page is None else f"]({up}{page}{m.group(2)})"

    def blob_link(m):
        sources.add(m.group(1))
        return f"]({up}source/{m.group(1)}{m.group(2)})"

    def fix(s: str) -> str:
        return _re_blob_link.sub(blob_link, _re_nb_link.sub(nb_link, s))

    for i, cell in enumerate(nb["cells"]):
        src = _text(cell.get("source"))
        if i == 0 and cell["cell_type"] == "raw" and src.startswith("---"):
            front = yaml.safe_load(src.strip().strip("-")) or {}
            front.pop("output-file", None)
            cell["source"] = "---\n" + yaml.safe_dump(front, sort_keys=False) + "---\n"
        elif cell["cell_type"] == "markdown":
            cell["source"] = fix(src)
        for out in cell.get("outputs", []):
            data = out.get("data") or {}
            if "text/markdown" in data:
                data["text/markdown"] = fix(_text(data["text/markdown"]))
    return nb, sources


def count_images(
    nb: dict,  # a notebook, as JSON
) -> int:  # how many figures its outputs hold
    "Count the picture outputs, which the page must show."
    return sum(any(m in (o.get("data") or {}) for m in IMAGE_MIMES) for c in nb["cells"] for o in c.get("outputs", []))


def render_site(
    stage: Path,  # the staged project, with `_quarto.yml`
    dest: Path,  # the site folder (emptied first)
) -> list[str]:  # smalldocs' warnings
    "Render the staged project with smalldocs into `dest`."
    from smalldocs.config import load
    from smalldocs.site import Site

    site = Site(load(Path(stage)), quiet=True)
    site.out = Path(dest).resolve()  # instead of the config's output-dir, which is relative to the staged copy
    site.build()
    return list(site.warnings)


MANIFEST = "docs-manifest.json"


def _scratch_root(root: Path, scratch: Path) -> Path:
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


def _fresh(executed: Path, src: Path, lib: Path, profile: str) -> bool:
    if not executed.is_file():
        return False
    newest = max([src.stat().st_mtime, *(p.stat().st_mtime for p in lib.rglob("*.py"))])
    if executed.stat().st_mtime < newest:
        return False
    meta = json.loads(executed.read_text()).get("metadata", {}).get("hybrid_nbs_docs", {})
    return meta.get("profile") == profile


def notebook_job(
    root: Path,  # the project root
    nb: PurePosixPath | str,  # the notebook, relative to `<root>/nbs`
    profile: str = "smoke",  # the profile it executes with
    work: Path | None = None,  # the staging folder (default `<root>/_proc`)
    from_runs: bool = False,  # take `_runs/`'s executed copy where there is one
    force: bool = False,  # execute even when the executed copy is fresh
) -> dict:  # the job for `run_worker`, with `origin`: where the outputs come from
    "How one notebook gets its outputs: executed now, its fresh executed copy, or `hnwm reproduce`'s copy."
    root, nb = Path(root), PurePosixPath(nb)
    work = Path(work) if work else root / "_proc"
    src, executed, run_copy = root / "nbs" / nb, work / "exec" / nb, root / "_runs" / nb
    job = dict(src=str(src), executed=str(executed), processed=str(work / "proc" / nb), run=True,
               skip_tst_flags=profile == "smoke", profile=profile, origin=f"executed ({profile})")
    if from_runs and run_copy.is_file():
        job.update(executed=str(run_copy), run=False, origin=f"_runs/{nb}")
    elif not force and _fresh(executed, src, root / "hybrid_nbs", profile):
        job.update(run=False, origin=f"executed ({profile}, reused)")
    return job


def build_docs(
    root: Path | str | None = None,  # the project root (default: the checkout holding this tool)
    profile: str = "smoke",  # the profile the notebooks execute with
    from_runs: bool = False,  # use `_runs/`'s executed copies where they exist
    dest: Path | str | None = None,  # the site folder (default `<root>/_docs`)
    work: Path | str | None = None,  # the staging folder (default `<root>/_proc`)
    n_workers: int = 2,  # notebooks executed at once
    force: bool = False,  # execute every notebook again, even when its copy is fresh
    quiet: bool = False,  # print no progress
) -> Path:  # the site folder
    "Execute, process and render the notebooks into a static site; return its folder."
    root = Path(root).resolve() if root else ROOT
    profile = get_profile(profile).name
    if n_workers < 1:
        raise ValueError(f"n_workers must be at least 1, got {n_workers}")
    nbs = root / "nbs"
    dest = Path(dest).resolve() if dest else root / "_docs"
    work = Path(work).resolve() if work else root / "_proc"
    if not (nbs / "_quarto.yml").is_file():
        raise FileNotFoundError(f"{nbs / '_quarto.yml'} is missing: it is the site's Quarto config")
    pages = page_map(nbs)
    say = (lambda *a: None) if quiet else (lambda msg: print(msg, file=sys.stderr, flush=True))

    jobs = {nb: notebook_job(root, nb, profile, work, from_runs, force) for nb in pages}
    origin = {nb: job.pop("origin") for nb, job in jobs.items()}
    for nb, job in jobs.items():
        if not job["run"] and origin[nb].startswith("_runs") and Path(job["executed"]).stat().st_mtime < (nbs / nb).stat().st_mtime:
            say(f"docs: {job['executed']} is older than its notebook; using it anyway")

    t0, failures = time.perf_counter(), {}

    def one(nb):
        t = time.perf_counter()
        err = run_worker(jobs[nb], root, scratch)
        say(f"docs: {nb} {'FAILED' if err else 'ok'} ({origin[nb]}, {time.perf_counter() - t:.0f} s)")
        if err:
            failures[nb] = err

    scratch = _scratch_root(root, work / "root")
    experiments = [nb for nb in pages if str(nb).startswith("experiments/")]
    with ThreadPoolExecutor(n_workers) as pool:
        list(pool.map(one, [nb for nb in pages if nb not in experiments]))
    for nb in experiments:  # they share the pipeline's cached stages (data, checkpoints) under one root: one at a time
        one(nb)
    if failures:
        raise RuntimeError("docs: notebooks failed:\n" + "\n\n".join(f"--- {nb}\n{err}" for nb, err in failures.items()))

    stage = work / "site"
    shutil.rmtree(stage, ignore_errors=True)
    stage_config(nbs, stage, pages)
    manifest, sources = [], set()
    for nb, page in pages.items():
        data, needs = fix_page(json.loads(Path(jobs[nb]["processed"]).read_text()), nb, pages)
        sources |= needs
        (stage / page).parent.mkdir(parents=True, exist_ok=True)
        (stage / page).write_text(json.dumps(data, indent=1))
        front = yaml.safe_load(_text(data["cells"][0]["source"]).strip().strip("-")) if data["cells"] and data["cells"][0]["cell_type"] == "raw" else {}
        manifest.append(dict(page=str(page.with_suffix(".html")), source=f"nbs/{nb}", outputs=origin[nb],
                             title=str((front or {}).get("title") or page.stem), images=count_images(data)))
    for s in sorted(sources):
        if (root / s).is_file():
            (stage / "source" / s).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / s, stage / "source" / s)
    warnings = render_site(stage, dest)
    for w in warnings:
        say(f"docs: smalldocs: {w}")
    (dest / MANIFEST).write_text(json.dumps(dict(profile=profile, pages=manifest, warnings=warnings), indent=1))
    say(f"docs: {len(manifest)} pages in {dest} ({time.perf_counter() - t0:.0f} s)")
    return dest


def docs_main(
    profile: str = "smoke",  # the profile the notebooks execute with
    from_runs: bool = False,  # use `_runs/`'s executed copies where they exist
    check: bool = True,  # open every page in headless Chromium (`docs_check.check_docs`)
    root: Path | str | None = None,  # the project root (default: the checkout holding this tool)
) -> Path:  # the site folder
    "Build the site with `build_docs`, then check it in headless Chromium unless `check` is false."
    site = build_docs(root, profile=profile, from_runs=from_runs)
    if check:
        from docs_check import check_docs  # the sibling tool; imported here, since it imports this module's MANIFEST
        check_docs(site)
    return site


def main(argv: list[str] | None = None) -> int:
    "Command line of `python tools/docs.py` (what `hnwm docs` runs): build the site, check it, say where it is."
    ap = argparse.ArgumentParser(prog="tools/docs.py", description="Render the docs site from nbs/_quarto.yml with "
                                 "smalldocs and check it in headless Chromium.")
    ap.add_argument("--profile", default="smoke", choices=tuple(PROFILES), help="profile used to execute the notebooks")
    ap.add_argument("--from-runs", action="store_true", help="use the executed copies in _runs/ from hnwm reproduce")
    ap.add_argument("--no-check", action="store_true", help="skip the browser check")
    args = ap.parse_args(argv)
    try:
        site = docs_main(args.profile, args.from_runs, check=not args.no_check)
    except (ValueError, RuntimeError, FileNotFoundError) as e:
        print(f"docs: error: {e}", file=sys.stderr)
        return 1
    print(f"docs written to {site}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
