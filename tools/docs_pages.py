"""The docs site's pages: which notebooks are pages, the page each is named after (as nbdev names them), the navigation rewritten to name them, and the experiment pages made from published results (see `docs.py`)."""

from __future__ import annotations

import fnmatch
import re
import shutil
from pathlib import Path, PurePosixPath

import yaml

__all__ = ['ROOT', 'docs_notebooks', 'page_name', 'page_map', 'map_entries', 'stage_config', 'MANIFEST', 'is_experiment', 'experiment_copies', 'site_pages']

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


