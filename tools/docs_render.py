"""Rendering the docs site: links and images fixed on each page, smalldocs' render, the banner of an experiment page, and formulas typeset offline as MathML (see `docs.py`)."""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath

import yaml

__all__ = ['IMAGE_MIMES', 'fix_page', 'count_images', 'render_site', 'results_banner', 'offline_maths']

JOB_COMMAND = {"main": "reproduce", "study": "study"}  # job -> its hnwm command
IMAGE_MIMES = ("image/png", "image/jpeg", "image/gif", "image/svg+xml")
_re_nb_link = re.compile(r"\]\(([^)\s#]+\.ipynb)((?:#[^)\s]*)?)\)")
_re_blob_link = re.compile(r"\]\(/blob/[^/)\s]+/([^)\s#]+)((?:#[^)\s]*)?)\)")


def cell_text(x) -> str:
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
        src = cell_text(cell.get("source"))
        if i == 0 and cell["cell_type"] == "raw" and src.startswith("---"):
            front = yaml.safe_load(src.strip().strip("-")) or {}
            front.pop("output-file", None)
            cell["source"] = "---\n" + yaml.safe_dump(front, sort_keys=False) + "---\n"
        elif cell["cell_type"] == "markdown":
            cell["source"] = fix(src)
        for out in cell.get("outputs", []):
            data = out.get("data") or {}
            if "text/markdown" in data:
                data["text/markdown"] = fix(cell_text(data["text/markdown"]))
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


def _source_cells(nb: dict) -> list[tuple[str, str]]:
    return [(c["cell_type"], cell_text(c.get("source"))) for c in nb["cells"]
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
                     f"`hnwm {JOB_COMMAND.get(job, 'reproduce')} --profile {prof} --only {PurePosixPath(rel).stem}`.")
    return "> " + text, stale


def retitle(data: dict, params: dict) -> None:
    "Name an executed copy's page after its parameters: `Hybrid evaluation (euler)`."
    first = data["cells"][0] if data["cells"] else None
    if not params or first is None or first["cell_type"] != "raw" or not cell_text(first["source"]).startswith("---"):
        return
    front = yaml.safe_load(cell_text(first["source"]).strip().strip("-")) or {}
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


