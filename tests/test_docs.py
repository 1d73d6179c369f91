"The docs site: built from the smoke profile with smalldocs, then every page opened in headless Chromium."
import json
import shutil

import pytest

from hybrid_nbs import docs, docs_check
from hybrid_nbs.core import project_root

ROOT = project_root()


def _chromium():
    try:
        return docs_check.find_chromium()
    except RuntimeError:
        return None


needs_chromium = pytest.mark.skipif(_chromium() is None, reason="Chromium is not installed (apt-get install -y chromium); "
                                    "the docs check opens every page in headless Chromium")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    "The whole site, built with the smoke profile into a temporary folder, and the notebooks it shows."
    tmp = tmp_path_factory.mktemp("docs")
    notebooks = docs.docs_notebooks(ROOT / "nbs")  # listed before the build starts: others may appear meanwhile
    # executed copies are kept in _proc/ (git-ignored) and reused while newer than their notebook and every module
    path = docs.build_docs(ROOT, profile="smoke", dest=tmp / "site", n_workers=2, quiet=True)
    return path, notebooks


@needs_chromium
def test_every_page_renders(site):
    "The index and every notebook's page render with their title, content and figures, and no local link is broken."
    site, notebooks = site
    manifest = json.loads((site / docs.MANIFEST).read_text())
    res = docs_check.check_docs(site)  # raises DocsCheckError listing every failure
    pages = res["pages"]
    assert "index.html" in pages
    want = {str(docs.page_name(nb).with_suffix(".html")) for nb in notebooks}
    assert want <= set(pages), f"pages missing: {want - set(pages)}"
    for p in manifest["pages"]:
        if p["images"]:
            assert pages[p["page"]]["images"] >= p["images"], p
    if (ROOT / "nbs/02_euler.ipynb").exists():
        assert pages["euler.html"]["images"] >= 1, "02_euler makes plots, so its page must show them"
    assert all(r["links"] > 0 for r in pages.values())


def test_index_keeps_everything_after_its_title(site):
    "nbdev turns a first cell's title and description into front matter; the rest of the README must still show."
    index = (site[0] / "index.html").read_text()
    for text in ("make reproduce", "make test", "Profiles", "The chapters", "Using the library"):
        assert text in index, f"the docs index lost {text!r}"


@needs_chromium
def test_check_catches_a_broken_link(site, tmp_path):
    "A page with a broken local link, or a missing page, fails the check and is named."
    bad = tmp_path / "site"
    shutil.copytree(site[0], bad)
    manifest = json.loads((bad / docs.MANIFEST).read_text())
    manifest["pages"] = [p for p in manifest["pages"] if p["page"] == "index.html"] + [
        dict(page="gone.html", source="nbs/gone.ipynb", title="gone", images=0)]
    (bad / docs.MANIFEST).write_text(json.dumps(manifest))
    index = (bad / "index.html").read_text()
    (bad / "index.html").write_text(index.replace("</main>", '<a href="nowhere.html">x</a></main>', 1))
    with pytest.raises(docs_check.DocsCheckError) as e:
        docs_check.check_docs(bad)
    assert "index.html: broken local link 'nowhere.html'" in str(e.value)
    assert "gone.html: missing" in str(e.value)


def test_missing_chromium_says_how_to_install(monkeypatch):
    monkeypatch.setattr(docs.shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match="apt-get install -y chromium"):
        docs_check.check_docs(ROOT)


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
