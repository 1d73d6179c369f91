"""The docs site: chapters executed at the smoke profile, experiment pages from the committed laptop results, rendered
with smalldocs, formulas typeset to MathML, then every page opened in headless Chromium.

The renderer and its check are development tools of the checkout (`tools/docs.py`, `tools/docs_check.py`), not modules
of the package; they import one another by name, so `tools/` goes on `sys.path` as it does when they run as scripts.
"""
import itertools
import json
import re
import shutil
import sys
from pathlib import Path, PurePosixPath

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import docs  # noqa: E402  tools/docs.py
import docs_pages  # noqa: E402  tools/docs_pages.py
import docs_render  # noqa: E402  tools/docs_render.py
import docs_check  # noqa: E402  tools/docs_check.py


def _chromium():
    try:
        return docs_check.find_chromium()
    except RuntimeError:
        return None


needs_chromium = pytest.mark.skipif(_chromium() is None, reason="Chromium is not installed (apt-get install -y chromium); "
                                    "the docs check opens every page in headless Chromium")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    "The whole site (chapters at the smoke profile, experiments from results/laptop/) in a temporary folder, and its pages."
    tmp = tmp_path_factory.mktemp("docs")
    notebooks = list(docs_pages.site_pages(ROOT / "nbs", "laptop")[0])  # listed before the build starts: others may appear meanwhile
    # executed copies are kept in _proc/ (git-ignored) and reused while newer than their notebook and every module
    path = docs.build_docs(ROOT, profile="smoke", dest=tmp / "site", n_workers=2, quiet=True)
    return path, notebooks


@pytest.mark.docs
@needs_chromium
def test_every_page_renders(site):
    """Every page renders with its title, content and figures, no local link is broken, nothing is fetched from the
    network, no raw TeX or warning is in the text, and each experiment page names the laptop profile (`check_docs`)."""
    site, notebooks = site
    manifest = json.loads((site / docs_pages.MANIFEST).read_text())
    res = docs_check.check_docs(site)  # raises DocsCheckError listing every failure
    pages = res["pages"]
    assert "index.html" in pages
    want = {str(docs_pages.page_name(nb).with_suffix(".html")) for nb in notebooks}
    assert want <= set(pages), f"pages missing: {want - set(pages)}"
    for p in manifest["pages"]:
        if p["images"]:
            assert pages[p["page"]]["images"] >= p["images"], p
    if (ROOT / "nbs/02_euler.ipynb").exists():
        assert pages["euler.html"]["images"] >= 1, "02_euler makes plots, so its page must show them"
    assert all(r["links"] > 0 for r in pages.values())
    experiments = [p for p in manifest["pages"] if p["source"].startswith("nbs/experiments/")]
    assert experiments and all(p["profile"] == "laptop" and p["outputs"].startswith("results/laptop/") for p in experiments)
    assert {"experiments/hybrid_euler.html", "experiments/hybrid_balls.html"} <= set(pages)  # one page per environment
    assert manifest["formulas"] > 50, "the chapters hold many formulas, and the build typesets them"
    loads = re.compile(r"<(?:link|script)\b[^>]*katex", re.I)  # a tag that fetches it (inline base64 can spell "katex")
    assert not any(loads.search(f.read_text()) for f in site.rglob("*.html")), "a page still loads KaTeX"


@pytest.mark.docs
def test_chapters_store_their_outputs(site):
    "A chapter whose page shows figures keeps them in the notebook too, so it reads on a code host."
    site, _ = site
    manifest = json.loads((site / docs_pages.MANIFEST).read_text())
    bare = [p["source"] for p in manifest["pages"] if p["images"] and not p["source"].startswith("nbs/experiments/")
            and not docs_render.count_images(json.loads((ROOT / p["source"]).read_text()))]
    assert not bare, f"{bare} show figures on the site but store none: run `hnwm docs --store-outputs` and commit"


@pytest.mark.docs
def test_index_keeps_everything_after_its_title(site):
    "nbdev turns a first cell's title and description into front matter; the rest of the README must still show."
    index = (site[0] / "index.html").read_text()
    for text in ("make reproduce", "make test", "Profiles", "The chapters", "Using the library"):
        assert text in index, f"the docs index lost {text!r}"


@pytest.mark.docs
@needs_chromium
def test_check_catches_a_broken_link(site, tmp_path):
    "A page with a broken local link, or a missing page, fails the check and is named."
    bad = tmp_path / "site"
    shutil.copytree(site[0], bad)
    manifest = json.loads((bad / docs_pages.MANIFEST).read_text())
    manifest["pages"] = [p for p in manifest["pages"] if p["page"] == "index.html"] + [
        dict(page="gone.html", source="nbs/gone.ipynb", title="gone", images=0)]
    (bad / docs_pages.MANIFEST).write_text(json.dumps(manifest))
    index = (bad / "index.html").read_text()
    (bad / "index.html").write_text(index.replace("</main>", '<a href="nowhere.html">x</a></main>', 1))
    with pytest.raises(docs_check.DocsCheckError) as e:
        docs_check.check_docs(bad)
    assert "index.html: broken local link 'nowhere.html'" in str(e.value)
    assert "gone.html: missing" in str(e.value)


def test_missing_chromium_says_how_to_install(monkeypatch):
    monkeypatch.setattr(docs_check.shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match="apt-get install -y chromium"):
        docs_check.check_docs(ROOT)


def test_missing_chromium_is_said_before_the_build(monkeypatch):
    # before: the whole site was built (minutes) and only then did the check find no browser
    monkeypatch.setattr(docs_check.shutil, "which", lambda name: None)
    monkeypatch.setattr(docs, "build_docs", lambda *a, **k: pytest.fail("the site was built without a browser to check it"))
    with pytest.raises(RuntimeError, match="Chromium is not installed"):
        docs.docs_main("smoke", "laptop", check=True)


def test_missing_index_is_refused(tmp_path):
    (tmp_path / "nbs").mkdir()
    (tmp_path / "nbs/_quarto.yml").write_text("project:\n  type: website\n")
    (tmp_path / "nbs/00_core.ipynb").write_text("{}")
    with pytest.raises(FileNotFoundError, match="index.ipynb is missing"):
        docs.build_docs(tmp_path)


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="profile|Profile"):
        docs.build_docs(ROOT, profile="huge")
    with pytest.raises(ValueError, match="n_workers"):
        docs.build_docs(ROOT, n_workers=0)


def test_tools_are_not_in_the_package():
    "The docs tools load from the checkout's tools/, and the package has no `docs` or `docs_check` module."
    assert Path(docs.__file__).resolve() == ROOT / "tools" / "docs.py"
    assert Path(docs_check.__file__).resolve() == ROOT / "tools" / "docs_check.py"
    import importlib.util
    assert importlib.util.find_spec("hybrid_nbs.docs") is None and importlib.util.find_spec("hybrid_nbs.docs_check") is None


# The lessons of the former docs notebooks: pages, navigation, page fix-ups, the DOM reader, local URLs, a tiny site.

def test_docs_notebooks_index_first_hidden_folders_left_out(tmp_path):
    for name in ["index.ipynb", "02_b.ipynb", "00_a.ipynb", "experiments/x.ipynb", "_proc/00_a.ipynb", ".ipynb_checkpoints/y.ipynb"]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}")
    assert [str(p) for p in docs_pages.docs_notebooks(tmp_path)] == ["index.ipynb", "00_a.ipynb", "02_b.ipynb", "experiments/x.ipynb"]
    (tmp_path / "index.ipynb").unlink()
    with pytest.raises(FileNotFoundError, match="index.ipynb is missing"):
        docs_pages.docs_notebooks(tmp_path)


def test_page_names_are_nbdevs():
    from nbdev.config import nbpath2html
    for nb in ["00_core.ipynb", "02a_euler_validation.ipynb", "index.ipynb", "experiments/01_ladder.ipynb"]:
        assert docs_pages.page_name(nb).with_suffix(".html") == PurePosixPath(nbpath2html(nb).as_posix())


PAGES = {PurePosixPath("index.ipynb"): PurePosixPath("index.ipynb"), PurePosixPath("00_core.ipynb"): PurePosixPath("core.ipynb"),
         PurePosixPath("02_euler.ipynb"): PurePosixPath("euler.ipynb")}


def test_navigation_names_pages():
    side = yaml.safe_load("""
contents:
  - index.ipynb
  - "[0-9]*.ipynb"
  - section: Experiments
    contents: "experiments/*.ipynb"
  - text: Core
    href: 00_core.ipynb
""")
    mapped = docs_pages.map_entries(side, PAGES)
    assert mapped["contents"] == ["index.ipynb", "core.ipynb", "euler.ipynb", {"text": "Core", "href": "core.ipynb"}]


def test_sidebar_reaches_every_page_once():
    side = yaml.safe_load((ROOT / "nbs" / "sidebar.yml").read_text())["website"]["sidebar"]
    pages = docs_pages.page_map(ROOT / "nbs")
    found = []

    def walk(entry):
        if isinstance(entry, list):
            for e in entry:
                walk(e)
        elif isinstance(entry, dict):
            walk(entry.get("contents", []))
            if "href" in entry:
                found.append(entry["href"])
        else:
            found.append(entry)
    walk(docs_pages.map_entries(side["contents"], pages))
    assert sorted(found) == sorted(str(p) for p in pages.values()), (
        f"missing: {sorted(set(map(str, pages.values())) - set(found))}; twice: {sorted({f for f in found if found.count(f) > 1})}")


def test_fix_page_front_matter_links_and_sources():
    nb = {"cells": [
        {"cell_type": "raw", "metadata": {}, "source": "---\ntitle: euler\noutput-file: euler.html\n---\n"},
        {"cell_type": "markdown", "metadata": {}, "source": "See [core](../00_core.ipynb#env) and [the code](/blob/main/hybrid_nbs/core.py#L5)."},
        {"cell_type": "code", "metadata": {}, "source": "", "outputs": [{"output_type": "display_data", "data": {"image/png": "iVBOR"}}]}]}
    fixed, srcs = docs_render.fix_page(nb, PurePosixPath("experiments/ladder.ipynb"), PAGES)
    assert fixed["cells"][0]["source"] == "---\ntitle: euler\n---\n"
    assert fixed["cells"][1]["source"] == "See [core](../core.ipynb#env) and [the code](../source/hybrid_nbs/core.py#L5)."
    assert (srcs, docs_render.count_images(fixed)) == ({"hybrid_nbs/core.py"}, 1)


def test_page_dom_and_local_targets(tmp_path):
    dom = docs_check.PageDom('<html><head><title>core – hybrid_nbs</title></head><body><main id="c"><h2 id="env">Env</h2>'
                             '<img src="data:image/png;base64,iVBOR"><a href="euler.html#sod">x</a></main><a href="https://x.org">y</a></body></html>')
    assert (dom.title, dom.ids, dom.images, len(dom.urls)) == ("core – hybrid_nbs", {"c", "env"}, ["data:image/png;base64,iVBOR"], 3)
    (tmp_path / "experiments").mkdir()
    (tmp_path / "index.html").write_text("")
    lt = docs_check.local_target
    assert lt(tmp_path, "http://127.0.0.1:8000/experiments/a.html", "../index.html#top") == (tmp_path / "index.html", "top")
    assert lt(tmp_path, "http://127.0.0.1:8000/index.html", "experiments/") == (tmp_path / "experiments/index.html", "")
    assert lt(tmp_path, "http://127.0.0.1:8000/index.html", "https://numpy.org") is None
    assert lt(tmp_path, "http://127.0.0.1:8000/index.html", "data:image/png;base64,AAAA") is None


_CELL_IDS = itertools.count()  # nbformat 4.5 cells need an id


def _cell(kind, src):
    return {"cell_type": kind, "id": f"cell{next(_CELL_IDS)}", "metadata": {}, "source": src,
            **({"outputs": [], "execution_count": None} if kind == "code" else {})}


@pytest.mark.docs
def test_a_tiny_site_end_to_end(tmp_path):
    "One notebook with a hidden cell, a figure, a link to itself and a `#| slow` cell the smoke build skips."
    proj = tmp_path / "tiny"
    (proj / "nbs").mkdir(parents=True)
    (proj / "pyproject.toml").write_text('[project]\nname = "tiny"\n\n[tool.nbdev]\nlib_path = "tiny"\ntst_flags = "slow"\n')
    (proj / "nbs/_quarto.yml").write_text("project:\n  type: website\nwebsite:\n  title: tiny\n  sidebar:\n    contents:\n      - index.ipynb\n")
    (proj / "nbs/index.ipynb").write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        _cell("markdown", "# tiny\n\n> A page with a figure."),
        _cell("markdown", "A link to [the home page](index.ipynb)."),
        _cell("code", "#| hide\nimport matplotlib.pyplot as plt"),
        _cell("code", "#| fig-cap: A falling line.\n#| fig-alt: A straight line from (0, 1) down to (1, 0).\nplt.plot([0, 1], [1, 0]);"),
        _cell("code", "#| slow\nprint('slow ' + 'cell ran')")]}))
    built = docs.build_docs(proj, quiet=True)
    man = json.loads((built / docs_pages.MANIFEST).read_text())
    assert [(p["page"], p["title"], p["images"]) for p in man["pages"]] == [("index.html", "tiny", 1)]
    assert "slow cell ran" not in (built / "index.html").read_text()
    if _chromium() is not None:
        assert docs_check.check_docs(built)["pages"]["index.html"]["images"] >= 1
        page = (built / "index.html").read_text()
        (built / "index.html").write_text(page.replace(' alt="A straight line', ' title="A straight line', 1))
        with pytest.raises(docs_check.DocsCheckError, match="picture 1 has no alt text"):  # the rule, on its defect
            docs_check.check_docs(built)
        (built / "index.html").write_text(page)
        (built / "index.html").write_text((built / "index.html").read_text().replace('href="index.html"', 'href="gone.html"', 1))
        with pytest.raises(docs_check.DocsCheckError, match="broken local link 'gone.html'"):
            docs_check.check_docs(built)


def _stamped(nb: dict, **stamp) -> dict:
    return {**nb, "metadata": {"hybrid_nbs_results": dict(profile="laptop", commit="abc1234", dirty=False,
                                                          executed="2026-12-02 03:00 UTC", seconds=12.0, **stamp)}}


@pytest.mark.docs
def test_experiment_pages_show_published_results(tmp_path):
    "An experiment page shows the results `hnwm reproduce` published, under a banner; missing results are refused."
    proj = tmp_path / "tiny"
    (proj / "nbs/experiments").mkdir(parents=True)
    (proj / "pyproject.toml").write_text('[project]\nname = "tiny"\n\n[tool.nbdev]\nlib_path = "tiny"\n')
    (proj / "nbs/_quarto.yml").write_text("project:\n  type: website\nwebsite:\n  title: tiny\n  sidebar:\n    contents:\n"
                                         "      - index.ipynb\n      - experiments/*.ipynb\n")
    page = lambda cells: {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}
    (proj / "nbs/index.ipynb").write_text(json.dumps(page([_cell("markdown", "# tiny\n\n> A home page."),
                                                   _cell("markdown", "Maths: $\\Big\\lVert x \\Big\\rVert$ and\n\n$$S_* = \\frac{a}{b}$$")])))
    exp = page([_cell("markdown", "# An experiment\n\n> It prints a number."), _cell("code", "print('small ' + 'run')")])
    (proj / "nbs/experiments/x.ipynb").write_text(json.dumps(exp))
    with pytest.raises(FileNotFoundError, match=r"missing from results/laptop/: experiments/x.ipynb.*"
                       r"hnwm reproduce --profile laptop --only x.*--results none"):
        docs.build_docs(proj, quiet=True)
    executed = json.loads(json.dumps(exp))
    executed["cells"][1]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "laptop-sized run\n"}]
    (proj / "results/laptop/experiments").mkdir(parents=True)
    (proj / "results/laptop/experiments/x.ipynb").write_text(json.dumps(_stamped(executed, parameters={})))
    built = docs.build_docs(proj, quiet=True)
    html = (built / "experiments/x.html").read_text()
    assert "laptop-sized run" in html and "small run" not in html, "the page shows the published outputs, not a re-run"
    assert "Results of the <code>laptop</code> profile" in html and "abc1234" in html and "has changed" not in html
    index = (built / "index.html").read_text()
    assert index.count("<math") == 2 and "katex" not in index.lower() and "\\(" not in index
    assert "lVert" not in index and "‖" in index, "a sized delimiter is typeset as its character, not its TeX name"
    man = json.loads((built / docs_pages.MANIFEST).read_text())
    assert [(p["page"], p["profile"]) for p in man["pages"]] == [("index.html", None), ("experiments/x.html", "laptop")]
    if _chromium() is not None:
        docs_check.check_docs(built)
        (built / "index.html").write_text(index.replace("</main>", "<p>left: \\(x\\) and UserWarning: boom</p>"
                                                        '<img src="https://cdn.example.org/x.png"></main>', 1))
        (built / "experiments/x.html").write_text(html.replace("laptop</code> profile", "smoke</code> run"))
        with pytest.raises(docs_check.DocsCheckError) as e:
            docs_check.check_docs(built)
        for what in ("raw TeX in the text", "a warning is printed in the page", "https://cdn.example.org/x.png' from the network",
                     "experiments/x.html: an experiment page that does not say which profile"):
            assert what in str(e.value), what
    exp["cells"][1]["source"] = "print('the notebook changed')"
    (proj / "nbs/experiments/x.ipynb").write_text(json.dumps(exp))
    html = (docs.build_docs(proj, quiet=True) / "experiments/x.html").read_text()
    assert "has changed since (1 of 2 cells differ)" in html and "hnwm reproduce --profile laptop --only x" in html


@pytest.mark.parametrize("text", ["the state $x_0 = $ at frame 0", r"no impact leaves slower than $\min(u, $ the limit",
                                  "starts from persistence (s_{t+h} = s_t) exactly", r"a norm \lVert x \rVert"])
def test_raw_tex_the_typesetting_left_is_caught(text):  # the defects the site showed before the rule
    assert docs_check.RAW_TEX.search(text)


@pytest.mark.parametrize("text", ["plain prose, with numbers 0.5 and 1e-3", "costs $HYBRID_NBS_ROOT only", "a_b and x^2"])
def test_prose_is_not_raw_tex(text):
    assert not docs_check.RAW_TEX.search(text)


def _prose() -> dict[str, str]:
    "The words a reader reads: every notebook's markdown cells, and the README."
    out = {p.relative_to(ROOT).as_posix(): "\n".join("".join(c["source"]) for c in json.loads(p.read_text())["cells"]
                                                     if c["cell_type"] == "markdown")
           for p in sorted([*(ROOT / "nbs").glob("*.ipynb"), *(ROOT / "nbs" / "experiments").glob("*.ipynb")])}
    return {**out, "README.md": (ROOT / "README.md").read_text()}


def _dangling(text: str) -> list[str]:
    "The notebooks, tables, figures, chapters, `hnwm` commands and `make` targets `text` names that do not exist."
    from hybrid_nbs.cli import COMMANDS
    from hybrid_nbs.envs import ENV_NAMES
    targets = set(re.findall(r"^([a-z][\w-]*):", (ROOT / "Makefile").read_text(), re.M))

    def exists(ref: str, *where: Path) -> bool:  # a pattern over environments names at least one real file
        names = [ref.replace(ph, e) for e in ENV_NAMES for ph in ("<env>", "{env}") if ph in ref] or [ref]
        names = [n.replace("<profile>", "laptop") for n in names]
        return any((w / n).exists() for w in where for n in names)

    bad = []
    for ref in re.findall(r"(?<![\w/<])(?:nbs/)?(experiments/[\w<>{}]+\.ipynb)", text):  # a notebook, or its copy per env
        stem = re.sub(r"_(?:" + "|".join(ENV_NAMES) + r"|<env>|\{env\})\.ipynb$", ".ipynb", ref)
        bad += [] if exists(ref, ROOT / "nbs") or exists(stem, ROOT / "nbs") else [ref]
    for ref in re.findall(r"(?<![\w/])((?:tables|figures)/[\w<>{}-]+\.(?:md|json|csv|png))", text):
        bad += [] if exists(ref, ROOT) else [ref]
    bad += [f"hnwm {c}" for c in re.findall(r"`hnwm ([a-z][\w-]*)", text) if c not in COMMANDS]
    bad += [f"make {t}" for t in re.findall(r"`make ([a-z][\w-]*)", text) if t not in targets]
    bad += [c for c in re.findall(r"\]\((\d\d\w*\.ipynb)", text) if not (ROOT / "nbs" / c).exists()]
    return bad


def test_prose_names_only_what_exists():
    "Issue 38: a chapter or the README that names a notebook, table, figure, command or target that is not there fails."
    bad = {src: refs for src, t in _prose().items() if (refs := _dangling(t))}
    assert not bad, bad


@pytest.mark.parametrize("text", ["run `experiments/pareto.ipynb`", "see `tables/hybrid_euler_speed.md`",
                                  "`hnwm benchmark solvers`", "`make docs-site`", "the [core chapter](00_kore.ipynb)"])
def test_a_dangling_reference_is_caught(text):  # the defects issue 38 found, and their kind
    assert _dangling(text), text


# committed pages made before a rule existed, each with the command whose next run remakes it under the rule
AWAITING_RERUN: dict[str, str] = {}  # none since the ablations ran again at 9e5d1c7


def _output_defects(nb: dict) -> list[str]:
    "What a reader should not meet in a notebook's outputs: numbers printed with their NumPy type, tables printed as text."
    pipe = re.compile(r"^\s*\|.*\|\s*\n\s*\|(?:\s*:?-{3,}:?\s*\|)+", re.M)
    bad = []
    for i, c in enumerate(nb["cells"]):
        for o in c.get("outputs", []):
            data = o.get("data") or {}
            shown = "".join(o.get("text", "")) + ("" if "text/markdown" in data else "".join(data.get("text/plain", "")))
            bad += [f"cell {i}: a number printed as np.float64(...)"] if "np.float64(" in shown else []
            bad += [f"cell {i}: a table printed as text (display it as Markdown)"] if pipe.search(shown) else []
    return bad


def _page_defects(path: Path) -> list[str]:
    "Everything wrong with one committed page: its outputs, its weight, and for a published result its provenance."
    nb = json.loads(path.read_text())
    found = _output_defects(nb)
    found += [f"{path.stat().st_size / 1e6:.1f} MB: a page this heavy loads slowly"] if path.stat().st_size > 1_000_000 else []
    stamp = nb.get("metadata", {}).get("hybrid_nbs_results")
    if stamp is not None:
        source = ROOT / stamp.get("source", "")
        found += ["made from uncommitted changes"] if stamp.get("dirty") else []
        if not source.is_file():
            found.append(f"its notebook {stamp.get('source')} is gone")
        elif docs_render.results_banner(nb, json.loads(source.read_text()), path.name)[1]:
            found.append(f"stale: {stamp.get('source')} changed since the run of {stamp.get('commit')}")
    return found


def test_committed_pages_read_well_and_are_current():
    """Issue 40: stored chapter outputs and published results show tables as tables and plain numbers, weigh under 1 MB,
    and come from the committed notebooks as they are; AWAITING_RERUN names the pages still to remake, and no page more."""
    pages = sorted([*(ROOT / "nbs").glob("*.ipynb"), *(ROOT / "results" / "laptop" / "experiments").glob("*.ipynb")])
    found = {p.relative_to(ROOT).as_posix(): _page_defects(p) for p in pages}
    bad = {k: v for k, v in found.items() if v and k not in AWAITING_RERUN}
    assert not bad, bad
    remade = [k for k in AWAITING_RERUN if not found.get(k)]
    assert not remade, f"no longer defective, drop from AWAITING_RERUN: {remade}"


def test_output_defects_are_caught():
    table = {"output_type": "stream", "name": "stdout", "text": ["| a | b |\n", "|---|---|\n", "| 1 | 2 |\n"]}
    typed = {"output_type": "execute_result", "data": {"text/plain": ["{'err': np.float64(0.5)}"]}}
    shown = {"output_type": "display_data", "data": {"text/markdown": ["| a |\n|---|\n"], "text/plain": ["<Markdown>"]}}
    assert len(_output_defects({"cells": [{"outputs": [table, typed]}]})) == 2
    assert not _output_defects({"cells": [{"outputs": [shown]}]})  # a Markdown display is a table on the page


def test_page_dom_reads_alt_texts_and_captions():
    "Issue 40: a picture's alt text and its figure's caption are what the check counts."
    page = ('<html><body><main><div class="quarto-figure"><figure><p><img src="data:image/png;base64,AAAA" alt="a curve">'
            '</p><figcaption>The curve.</figcaption></figure></div><p><img src="x.png"></p></main>'
            '<img src="logo.png" alt=""></body></html>')
    dom = docs_check.PageDom(page)
    assert dom.alts == ["a curve", ""] and dom.captions == 1  # the logo outside main is not a figure of the page
