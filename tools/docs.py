"""The documentation site without Quarto: execute the notebooks, process them as nbdev does, and render them with
smalldocs; `docs_check.py` (next to this file) then checks the pages in headless Chromium.

A development tool of the checkout, not part of the installed package. Run it from the checkout:

    python tools/docs.py [--profile smoke] [--results laptop|none] [--no-check]   # or: hnwm docs

nbdev's own docs command (`nbdev-docs`) needs Quarto, which does not install on these machines. The same site comes
from five steps that need only Python:

1. **outputs**: each chapter notebook (they are kept small) is executed with the `smoke` profile, skipping the cells
   flagged in `tst_flags` (`#| slow`) as `nbdev-test` does; each experiment page shows instead the executed copy that
   `hnwm reproduce --profile laptop` published to `results/laptop/` (committed), one page per copy (`hybrid.ipynb`
   makes `hybrid_euler`, `hybrid_oregonator`, `hybrid_balls`), under a banner naming the profile, the commit, the date
   and the parameters, and saying so when the notebook has changed since. A site asked for results that are not there
   is refused with the command that makes them; `--results none` executes the experiments at the chapters' profile
   instead, and their banner says that they are not the results;
2. **process** it with nbdev's own docs processors (`nbdev.processors.FilterDefaults`, what `nbdev-proc-nbs` runs):
   `#| hide` and `#| export` cells go, each exported definition gets its `show_doc`, backticked names become links;
3. **render** the processed notebooks with smalldocs, which reads the same `nbs/_quarto.yml` and shows the saved
   outputs;
4. **typeset** every formula as MathML (`latex2mathml`), which Chromium renders natively, and drop smalldocs' KaTeX
   links to a CDN: the site needs no network to be read;
5. **check** every page in headless Chromium (`docs_check.py`): it renders, its figures are there, no local link is
   broken, no raw TeX or warning is left in the text, nothing is fetched from the network, and each experiment page
   names the profile of its results.

Pages: every notebook under `nbs/` is a page, except those in folders starting with `_` or `.` (as nbdev's `nbglob`);
the home page is `index.ipynb`, so the site refuses to build without it. nbdev names each page after its notebook
without the numeric prefix (`00_core.ipynb` -> `core.html`), and the links it makes from backticked names point there;
smalldocs names a page after its source, so the processed notebook is saved under the page's name instead, and the
navigation of `nbs/_quarto.yml` / `nbs/sidebar.yml` (globs of notebooks) is rewritten to name the pages.

Chapter notebooks keep the outputs of their smoke-profile lesson cells, so they read on a code host: after a build,
`--store-outputs` writes the executed outputs back into `nbs/` (sources untouched, cleaned by `nbdev-clean`); commit
them with the change that made them.

Executed chapters are kept in `_proc/exec/` and reused while they are newer than their notebook and every module of
the package (and were made with the same profile). Notebooks execute with `HYBRID_NBS_ROOT` at `_proc/root`, which
holds copies of `figures/` and `tables/` and links to the rest of the project, so what they write under the `smoke`
profile never replaces the figures and tables `hnwm reproduce` made. Next to the pages, the site gets
`docs-manifest.json`: each page with its title, its source, where its outputs come from, how many figures they hold
and the profile an experiment page must name, which `check_docs` holds the page to.

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
           'run_worker', 'fix_page', 'count_images', 'render_site', 'is_experiment', 'experiment_copies', 'site_pages',
           'results_banner', 'offline_maths', 'notebook_job', 'missing_results', 'build_docs', 'store_outputs',
           'docs_main', 'main']

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
    keys: list[PurePosixPath] | None = None,  # the pages' notebook names (default: `docs_notebooks(nbs)`)
) -> dict[PurePosixPath, PurePosixPath]:  # each notebook (relative to `nbs`) to its page name, in sidebar order
    "Page names for all the site's notebooks (or executed copies, `keys`); two may not make the same page."
    pages: dict[PurePosixPath, PurePosixPath] = {}
    for nb in (docs_notebooks(nbs) if keys is None else keys):
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


def is_experiment(nb: PurePosixPath) -> bool:
    "Whether a notebook (relative to `nbs`) is an experiment, whose page shows published results."
    return PurePosixPath(nb).parts[0] == "experiments"


def experiment_copies(
    nbs: Path,  # the notebooks folder
    nb: PurePosixPath,  # an experiment notebook, relative to `nbs`
) -> list[tuple[PurePosixPath, dict]]:  # (executed copy relative to `results/<profile>/`, its parameters)
    "The executed copies `hnwm reproduce` makes of an experiment: one per environment where it takes `env_name`."
    import papermill as pm

    from hybrid_nbs.jobs import notebook_copies
    return [(PurePosixPath(rel), extra) for _, rel, extra in notebook_copies(pm, Path(nbs) / nb, Path(nbs))]


def site_pages(
    nbs: Path,  # the notebooks folder
    results: str | None,  # the profile whose published results the experiment pages show; None: one page per notebook
) -> tuple[dict, dict, dict]:  # key -> page name (navigation), key -> (notebook, parameters), notebook -> page (links)
    "The site's pages: one per chapter, one per executed copy of each experiment when they show published results."
    sources: dict[PurePosixPath, tuple[PurePosixPath, dict]] = {}
    for nb in docs_notebooks(nbs):
        copies = experiment_copies(nbs, nb) if results and is_experiment(nb) else [(nb, {})]
        sources.update({key: (nb, params) for key, params in copies})
    pages = page_map(nbs, list(sources))
    links = {nb: pages[key] for key, (nb, _) in reversed(list(sources.items()))}  # a notebook links to its first copy
    return pages, sources, {**links, **pages}


def _source_cells(nb: dict) -> list[tuple[str, str]]:
    return [(c["cell_type"], _text(c.get("source"))) for c in nb["cells"]
            if "injected-parameters" not in c.get("metadata", {}).get("tags", [])]


def results_banner(
    executed: dict,  # the published executed notebook, with its `hybrid_nbs_results` stamp
    source: dict | None,  # the notebook it came from, as it is now (None: not compared)
    rel: str,  # the executed copy's name, relative to `results/<profile>/`
) -> tuple[str, bool]:  # the banner's markdown, and whether the notebook changed since
    "Say on an experiment page which run made its outputs: profile, commit, date, parameters, and whether it is stale."
    stamp = executed.get("metadata", {}).get("hybrid_nbs_results") or {}
    prof = stamp.get("profile", "?")
    commit = stamp.get("commit")
    code = (f"commit `{commit}`" + (" with uncommitted changes" if stamp.get("dirty") else "")) if commit else "an unknown commit"
    params = ", ".join(f"`{k} = {v!r}`" for k, v in (stamp.get("parameters") or {}).items())
    secs = stamp.get("seconds")
    job = stamp.get("job", "main")
    made_by = f"`{stamp['command']}`" + (f" (its run of {stamp['run']})" if stamp.get("run") else "") if stamp.get("command") \
        else f"`hnwm reproduce --profile {prof}`"
    text = (f"**Results of the `{prof}` profile**: these outputs are those {made_by} saved "
            f"(`results/{prof}/{rel}`), made by the code of {code} on {stamp.get('executed', 'an unknown date')}"
            + (f" in {secs:.0f} s" if isinstance(secs, (int, float)) else "") + (f", with {params}" if params else "")
            + "; the page does not re-run them." + (f" ({stamp['note']})" if stamp.get("note") else ""))
    stale = False
    if source is not None:
        now, then = _source_cells(source), _source_cells(executed)
        changed = sum(a != b for a, b in zip(now, then)) + abs(len(now) - len(then))
        if changed:
            stale = True
            text += (f" The notebook has changed since ({changed} of {len(now)} cells differ): rerun it with "
                     f"`hnwm {_JOB_COMMAND.get(job, 'reproduce')} --profile {prof} --only {PurePosixPath(rel).stem}`.")
    return "> " + text, stale


def _retitle(data: dict, params: dict) -> None:
    "Name an executed copy's page after its parameters: `Hybrid evaluation (euler)`."
    first = data["cells"][0] if data["cells"] else None
    if not params or first is None or first["cell_type"] != "raw" or not _text(first["source"]).startswith("---"):
        return
    front = yaml.safe_load(_text(first["source"]).strip().strip("-")) or {}
    front["title"] = f"{front.get('title', '')} ({', '.join(str(v) for v in params.values())})".strip()
    first["source"] = "---\n" + yaml.safe_dump(front, sort_keys=False) + "---\n"


# latex2mathml writes a delimiter after a size command (`\\Big\\lVert`) as its TeX name: give it the character
_SIZED = re.compile(r"(\\[bB]igg?[lrm]?)\s*(\\[A-Za-z]+|\\[|{}])")
_DELIMITERS = {"\\lVert": "‖", "\\rVert": "‖", "\\Vert": "‖", "\\|": "‖", "\\lvert": "|", "\\rvert": "|", "\\vert": "|",
               "\\langle": "⟨", "\\rangle": "⟩", "\\lceil": "⌈", "\\rceil": "⌉", "\\lfloor": "⌊", "\\rfloor": "⌋",
               "\\{": "{", "\\}": "}"}
_re_untypeset = re.compile(r">(\\[A-Za-z]+|\\[|{}])<")  # a TeX command left as text in an element of the MathML
_re_math = re.compile(r'<span class="math (inline|display)">\\[(\[](.*?)\\[)\]]</span>', re.S)
_re_katex = re.compile(r'\s*<(?:link|script)\b[^>]*katex[^>]*>(?:\s*</script>)?', re.I)


def offline_maths(
    site: Path,  # the rendered site
) -> int:  # how many formulas were typeset
    "Typeset every formula of the site as MathML (which Chromium renders natively) and drop the KaTeX CDN links."
    import html

    from latex2mathml.converter import convert
    count = 0

    def typeset(m):
        nonlocal count
        tex = html.unescape(m.group(2)).strip()
        sized = _SIZED.sub(lambda d: d.group(1) + " " + _DELIMITERS.get(d.group(2), d.group(2)), tex)
        try:
            mathml = convert(sized, display="block" if m.group(1) == "display" else "inline")
        except Exception as e:  # latex2mathml raises its own errors on TeX it does not know
            raise ValueError(f"docs: cannot typeset the formula {tex!r} ({page}): {type(e).__name__}: {e}") from None
        if left := _re_untypeset.search(mathml):
            raise ValueError(f"docs: the formula {tex!r} ({page}) was typeset with {left.group(1)} left as text")
        count += 1
        return f'<span class="math {m.group(1)}">{mathml}</span>'

    for page in Path(site).rglob("*.html"):
        text = page.read_text()
        new = _re_katex.sub("", _re_math.sub(typeset, text))
        if new != text:
            page.write_text(new)
    return count


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
    key: PurePosixPath | str,  # the page's notebook (or executed copy), relative to `<root>/nbs`
    nb: PurePosixPath | str | None = None,  # the notebook it comes from (default: `key`)
    profile: str = "smoke",  # the profile chapters execute with
    work: Path | None = None,  # the staging folder (default `<root>/_proc`)
    results: str | None = None,  # for an experiment: the profile whose published copy it shows (None: execute it)
    force: bool = False,  # execute even when the executed copy is fresh
) -> dict:  # the job for `run_worker`, with `origin`: where the outputs come from
    "How one page gets its outputs: executed now, its fresh executed copy, or the results `hnwm reproduce` published."
    root, key = Path(root), PurePosixPath(key)
    nb = PurePosixPath(nb) if nb else key
    work = Path(work) if work else root / "_proc"
    src, executed = root / "nbs" / nb, work / "exec" / key
    job = dict(src=str(src), executed=str(executed), processed=str(work / "proc" / key), run=True,
               skip_tst_flags=profile == "smoke", profile=profile, origin=f"executed ({profile})")
    if results and is_experiment(nb):
        from hybrid_nbs.publish import reproduce_out, results_dir
        published = results_dir(reproduce_out(results, home=root), results)  # where `hnwm reproduce --profile results` put it
        job.update(executed=str(published / key), run=False, origin=f"{published.relative_to(root.resolve()).as_posix()}/{key}")
    elif not force and _fresh(executed, src, root / "hybrid_nbs", profile):
        job.update(run=False, origin=f"executed ({profile}, reused)")
    return job


def missing_results(
    jobs: dict,  # key -> job, from `notebook_job`
    results: str,  # the profile whose results the experiment pages show
) -> str:  # "" when every published copy is there, else the message naming them and the command that makes them
    "Say which experiment pages have no published results, and how to make them."
    gone = {str(k): j for k, j in jobs.items() if not j["run"] and "results" in j.get("origin", "") and not Path(j["executed"]).is_file()}
    if not gone:
        return ""
    from hybrid_nbs.jobs import JOBS, declaration
    by_job = {}
    for g, j in gone.items():  # the job each notebook declares says which command makes its results
        by_job.setdefault((declaration(j["src"]) or {}).get("job", "main"), []).append(PurePosixPath(g).stem)
    key, job = next(iter(gone.items()))
    folder = job["origin"][: -len(key) - 1]  # `origin` is `<published folder>/<key>`
    how = "; ".join(f"`{JOBS[k]} PROFILE={results}` (all of it), or `hnwm {_JOB_COMMAND[k]} --profile {results} --only "
                    f"{' '.join(stems)}`" for k, stems in by_job.items())
    return (f"the `{results}` results of {len(gone)} experiment page(s) are missing from {folder}/: "
            f"{', '.join(gone)}. Make them with {how}; or build a site that executes the experiments at "
            f"the chapters' profile instead with `hnwm docs --results none`")


_JOB_COMMAND = {"main": "reproduce", "study": "study"}  # job -> its hnwm command


def build_docs(
    root: Path | str | None = None,  # the project root (default: the checkout holding this tool)
    profile: str = "smoke",  # the profile the chapters execute with
    results: str | None = "laptop",  # the profile whose published results (`results/<profile>/`) the experiment pages show; None: execute them too
    dest: Path | str | None = None,  # the site folder (default `<root>/_docs`)
    work: Path | str | None = None,  # the staging folder (default `<root>/_proc`)
    n_workers: int = 2,  # notebooks executed at once
    force: bool = False,  # execute every notebook again, even when its copy is fresh
    quiet: bool = False,  # print no progress
) -> Path:  # the site folder
    "Execute, process and render the notebooks into a static site; return its folder."
    root = Path(root).resolve() if root else ROOT
    profile = get_profile(profile).name
    results = get_profile(results).name if results else None
    if n_workers < 1:
        raise ValueError(f"n_workers must be at least 1, got {n_workers}")
    nbs = root / "nbs"
    dest = Path(dest).resolve() if dest else root / "_docs"
    work = Path(work).resolve() if work else root / "_proc"
    if not (nbs / "_quarto.yml").is_file():
        raise FileNotFoundError(f"{nbs / '_quarto.yml'} is missing: it is the site's Quarto config")
    pages, sources, links = site_pages(nbs, results)
    say = (lambda *a: None) if quiet else (lambda msg: print(msg, file=sys.stderr, flush=True))

    jobs = {key: notebook_job(root, key, nb, profile, work, results, force) for key, (nb, _) in sources.items()}
    if results and (err := missing_results(jobs, results)):
        raise FileNotFoundError(err)
    origin = {key: job.pop("origin") for key, job in jobs.items()}

    t0, failures = time.perf_counter(), {}

    def one(key):
        t = time.perf_counter()
        err = run_worker(jobs[key], root, scratch)
        say(f"docs: {key} {'FAILED' if err else 'ok'} ({origin[key]}, {time.perf_counter() - t:.0f} s)")
        if err:
            failures[key] = err

    scratch = _scratch_root(root, work / "root")
    serial = [k for k in pages if is_experiment(k) and jobs[k]["run"]]
    with ThreadPoolExecutor(n_workers) as pool:
        list(pool.map(one, [k for k in pages if k not in serial]))
    for key in serial:  # they share the pipeline's cached stages (data, checkpoints) under one root: one at a time
        one(key)
    if failures:
        raise RuntimeError("docs: notebooks failed:\n" + "\n\n".join(f"--- {k}\n{err}" for k, err in failures.items()))

    stage = work / "site"
    shutil.rmtree(stage, ignore_errors=True)
    stage_config(nbs, stage, pages)
    manifest, needed = [], set()
    for key, page in pages.items():
        nb, params = sources[key]
        data, needs = fix_page(json.loads(Path(jobs[key]["processed"]).read_text()), key, links)
        needed |= needs
        shows = None
        if is_experiment(nb):
            if results:
                banner, stale = results_banner(json.loads(Path(jobs[key]["executed"]).read_text()),
                                               json.loads((nbs / nb).read_text()), str(key))
                if stale:
                    say(f"docs: {key}: the notebook has changed since its {results} results were made")
                shows = results
            else:
                banner, shows = (f"> **Executed at the `{profile}` profile for this build**: these are not the "
                                 f"results of `hnwm reproduce`, whose tables are in `tables/`."), profile
            _retitle(data, params)
            at = 1 if data["cells"] and data["cells"][0]["cell_type"] == "raw" else 0
            data["cells"].insert(at, dict(cell_type="markdown", metadata={}, source=banner))
        (stage / page).parent.mkdir(parents=True, exist_ok=True)
        (stage / page).write_text(json.dumps(data, indent=1))
        front = yaml.safe_load(_text(data["cells"][0]["source"]).strip().strip("-")) if data["cells"] and data["cells"][0]["cell_type"] == "raw" else {}
        manifest.append(dict(page=str(page.with_suffix(".html")), source=f"nbs/{nb}", outputs=origin[key],
                             title=str((front or {}).get("title") or page.stem), images=count_images(data),
                             profile=shows))
    for s in sorted(needed):
        if (root / s).is_file():
            (stage / "source" / s).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / s, stage / "source" / s)
    warnings = render_site(stage, dest)
    n_maths = offline_maths(dest)
    for w in warnings:
        say(f"docs: smalldocs: {w}")
    (dest / MANIFEST).write_text(json.dumps(dict(profile=profile, results=results, pages=manifest, warnings=warnings,
                                                 formulas=n_maths), indent=1))
    say(f"docs: {len(manifest)} pages, {n_maths} formulas typeset, in {dest} ({time.perf_counter() - t0:.0f} s)")
    return dest


def _outputs_of(cells: list) -> str:
    "The cells' outputs as text, without the execution counts `nbdev-clean` removes."
    return json.dumps([[{k: v for k, v in o.items() if k != "execution_count"} for o in c.get("outputs", [])] for c in cells])


def store_outputs(
    root: Path | str | None = None,  # the project root (default: the checkout holding this tool)
    work: Path | str | None = None,  # the staging folder the build used (default `<root>/_proc`)
    quiet: bool = False,  # print nothing
) -> list[Path]:  # the notebooks written (nbdev-clean may then make some identical to before)
    "Write the chapters' executed outputs from the last build back into `nbs/`, cleaned, so they read on a code host."
    root = Path(root).resolve() if root else ROOT
    work = Path(work).resolve() if work else root / "_proc"
    nbs, changed = root / "nbs", []
    for nb in docs_notebooks(nbs):
        executed = work / "exec" / nb
        if is_experiment(nb) or not executed.is_file():
            continue
        src_path = nbs / nb
        src, ran = json.loads(src_path.read_text()), json.loads(executed.read_text())
        by_id = {c.get("id"): c for c in ran["cells"]}
        if any(c.get("id") not in by_id or _text(by_id[c.get("id")].get("source")) != _text(c.get("source"))
               for c in src["cells"]):
            raise ValueError(f"docs: {executed} was executed from another version of {src_path}: build the docs again "
                             f"before storing its outputs")
        before = _outputs_of(src["cells"])
        for c in src["cells"]:
            if c["cell_type"] == "code":
                c["outputs"] = [o for o in by_id[c["id"]].get("outputs", [])]
        if _outputs_of(src["cells"]) == before:
            continue
        tmp = src_path.with_name(src_path.name + ".partial")
        tmp.write_text(json.dumps(src, indent=1, ensure_ascii=False) + "\n")
        os.replace(tmp, src_path)
        changed.append(src_path)
    if changed:  # nbdev's own cleaning: no execution counts, only the metadata the project allows
        subprocess.run([str(Path(sys.executable).with_name("nbdev-clean")), "--fname", str(nbs)], cwd=root, check=True,
                       capture_output=True)
        now = time.time()
        for path in changed:  # the executed copies stay fresh: only their outputs were written back
            os.utime(work / "exec" / path.relative_to(nbs), (now, now))
    if not quiet:
        print(f"docs: outputs written back to {len(changed)} notebook(s)", file=sys.stderr)
    return changed


def docs_main(
    profile: str = "smoke",  # the profile the chapters execute with
    results: str | None = "laptop",  # the profile whose published results the experiment pages show; None: execute them
    check: bool = True,  # open every page in headless Chromium (`docs_check.check_docs`)
    root: Path | str | None = None,  # the project root (default: the checkout holding this tool)
    store: bool = False,  # then write the chapters' outputs back into `nbs/` (`store_outputs`)
) -> Path:  # the site folder
    "Build the site with `build_docs`, check it in headless Chromium unless `check` is false, store the outputs if asked."
    if check:  # before the build, which takes minutes: a machine without Chromium is told at once
        from docs_check import check_docs, find_chromium  # the sibling tool; imported here, since it imports MANIFEST
        find_chromium()
    site = build_docs(root, profile=profile, results=results)
    if check:
        check_docs(site)
    if store:
        store_outputs(root)
    return site


def main(argv: list[str] | None = None) -> int:
    "Command line of `python tools/docs.py` (what `hnwm docs` runs): build the site, check it, say where it is."
    ap = argparse.ArgumentParser(prog="tools/docs.py", description="Render the docs site from nbs/_quarto.yml with "
                                 "smalldocs and check it in headless Chromium.")
    ap.add_argument("--profile", default="smoke", choices=tuple(PROFILES), help="profile the chapters execute with")
    ap.add_argument("--results", default="laptop", choices=(*PROFILES, "none"),
                    help="profile whose published results (results/<profile>/) the experiment pages show; "
                         "'none' executes the experiment notebooks at --profile instead")
    ap.add_argument("--no-check", action="store_true", help="skip the browser check")
    ap.add_argument("--store-outputs", action="store_true", help="write the chapters' outputs back into nbs/ (commit them)")
    args = ap.parse_args(argv)
    try:
        site = docs_main(args.profile, None if args.results == "none" else args.results, check=not args.no_check,
                         store=args.store_outputs)
    except (ValueError, RuntimeError, FileNotFoundError) as e:
        print(f"docs: error: {e}", file=sys.stderr)
        return 1
    print(f"docs written to {site}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
