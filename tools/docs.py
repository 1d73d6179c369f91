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

The tool is five files, one concern each: `docs_pages.py` (which notebooks are pages and what each is named),
`docs_exec.py` (executing a notebook in a child process), `docs_render.py` (fixing, rendering and typesetting the
pages), `docs_check.py` (the browser check) and this one (the build and `--store-outputs`). They import one another by
their bare names, as they do when run as scripts: to import them from elsewhere, put `tools/` on `sys.path`
(`hybrid_nbs.cli.dev_tool` does).
"""


from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path, PurePosixPath

import yaml

from hybrid_nbs.core import PROFILES, get_profile

# the sibling tools, by their bare names (tools/ is on sys.path when this runs as a script or through `hnwm docs`)
from docs_exec import is_fresh, run_worker, scratch_root  # noqa: E402
from docs_pages import MANIFEST, ROOT, docs_notebooks, is_experiment, site_pages, stage_config  # noqa: E402
from docs_render import (JOB_COMMAND, cell_text, count_images, fix_page, offline_maths, render_site,  # noqa: E402
                         results_banner, retitle)

__all__ = ['ROOT', 'notebook_job', 'missing_results', 'build_docs', 'store_outputs', 'docs_main', 'main']

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
    elif not force and is_fresh(executed, src, root / "hybrid_nbs", profile):
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
    how = "; ".join(f"`{JOBS[k]} PROFILE={results}` (all of it), or `hnwm {JOB_COMMAND[k]} --profile {results} --only "
                    f"{' '.join(stems)}`" for k, stems in by_job.items())
    return (f"the `{results}` results of {len(gone)} experiment page(s) are missing from {folder}/: "
            f"{', '.join(gone)}. Make them with {how}; or build a site that executes the experiments at "
            f"the chapters' profile instead with `hnwm docs --results none`")


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

    scratch = scratch_root(root, work / "root")
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
            retitle(data, params)
            at = 1 if data["cells"] and data["cells"][0]["cell_type"] == "raw" else 0
            data["cells"].insert(at, dict(cell_type="markdown", metadata={}, source=banner))
        (stage / page).parent.mkdir(parents=True, exist_ok=True)
        (stage / page).write_text(json.dumps(data, indent=1))
        front = yaml.safe_load(cell_text(data["cells"][0]["source"]).strip().strip("-")) if data["cells"] and data["cells"][0]["cell_type"] == "raw" else {}
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
        if any(c.get("id") not in by_id or cell_text(by_id[c.get("id")].get("source")) != cell_text(c.get("source"))
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
