"""Check the rendered documentation site page by page in headless Chromium: titles, content, figures and local links.

A development tool of the checkout, not part of the installed package; `docs.py` (next to this file) builds the site
and runs this check. To check a site already built:

    python tools/docs_check.py [_docs]

`check_docs` serves the site on 127.0.0.1 and opens each page in headless Chromium (`--dump-dom`: the DOM after the
page's scripts ran). A page passes when its title and main content are there, it shows at least as many pictures as
its notebook's outputs hold (from the site's `docs-manifest.json`), every local `<img>` and link resolves to a file of
the site (and every `#anchor` into a page to an id on it, or else a warning: nbdev links a backticked private name to
an anchor no `show_doc` makes), and the browser asked the server for nothing that is missing. External hosts resolve
to nothing, so the check never waits on the network. Chromium comes from Debian's packages
(`apt-get install -y chromium`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

from docs_pages import MANIFEST  # the sibling tool that names the manifest (tools/ is on sys.path, as for a script)

__all__ = ['CHROMIUM_FLAGS', 'CHROMIUM_NAMES', 'DocsCheckError', 'RAW_TEX', 'WARNING_TEXT', 'find_chromium', 'dump_dom',
           'PageDom', 'local_target',
           'check_docs', 'main']


CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-quic",
                  "--no-first-run", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                  "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1", "--virtual-time-budget=5000")


class DocsCheckError(RuntimeError):
    "A docs page that does not render, misses a figure or has a broken local link."


CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "/usr/bin/chromium")


def find_chromium() -> str:  # the path of a Chromium executable
    "Find headless Chromium, or say how to install it."
    for name in CHROMIUM_NAMES:
        if path := shutil.which(name):
            return path
    raise RuntimeError("Chromium is not installed, and check_docs needs it to open the pages: "
                       "`apt-get update && apt-get install -y chromium` (Debian/Ubuntu), or put `chromium` on PATH")


def dump_dom(
    url: str,  # the page to open
    chromium: str | None = None,  # the executable (default: `find_chromium()`)
    timeout: float = 90,  # seconds before the browser is killed
) -> str:  # the page's DOM as HTML
    "Open `url` in a fresh headless Chromium profile and return the DOM after its scripts ran."
    chromium = chromium or find_chromium()
    with tempfile.TemporaryDirectory(prefix="hnwm-chromium-") as profile_dir:
        cmd = [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile_dir}", "--dump-dom", url]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # its own session: the browser and its helper processes
            proc.communicate()
            raise RuntimeError(f"Chromium did not finish {url} in {timeout:.0f} s")
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # helpers that outlive the browser
            except ProcessLookupError:
                pass
    if proc.returncode != 0 or not out.strip():
        raise RuntimeError(f"Chromium failed on {url} (exit {proc.returncode}): {err.strip()[-1000:]}")
    return out


# what a reader must not see in a page's text: TeX the typesetting missed, and warnings printed by the code it ran
# (a `$...$` pair the typesetting left, e.g. an empty-ended `$x_0 = $`, and sub/superscripts written without dollars)
RAW_TEX = re.compile(r"\\\(|\\\[|\$\$|\\(?:frac|lVert|rVert|mathrm|mathbf|partial|nabla|Delta|sum|int|left|right|text|min|max)\b"
                     r"|(?<![\w$\\])\$(?=\S)[^$\n]{1,200}\$|\w[_^]\{")
WARNING_TEXT = re.compile(r"\b[A-Z][A-Za-z]*Warning: |Perhaps you already have a cluster running|"
                          r"Port \d+ is already in use|NumbaPerformanceWarning|NumbaDeprecationWarning")
_NOT_PROSE = {"code", "pre", "script", "style", "math", "kbd", "samp", "textarea"}


class PageDom(HTMLParser):
    "What a page's DOM holds: title, ids, main text (and its prose), pictures in main, and every URL it refers to."

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.title, self.ids, self.main_text, self.images, self.urls = "", set(), 0, [], []
        self.alts, self.captions = [], 0  # each picture's alt text in main (its order), and the figure captions there
        self.text, self.prose = [], []  # all of main's text, and the part outside code, maths and scripts
        self._in_title = self._in_main = False
        self._code = 0  # depth inside elements that are not prose
        self.feed(text)
        self.text, self.prose = (" ".join("".join(t).split()) for t in (self.text, self.prose))

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "title":
            self._in_title = True
        elif tag == "main":
            self._in_main = True
        if tag in _NOT_PROSE:
            self._code += 1
        if tag in ("img", "svg") and self._in_main:
            self.images.append(a.get("src") or f"<{tag}>")
            self.alts.append((a.get("alt") or "").strip())
        if tag == "figcaption" and self._in_main:
            self.captions += 1
        for key in ("href", "src"):
            if a.get(key) and tag in ("a", "link", "script", "img", "source", "iframe"):
                self.urls.append((tag, a[key]))

    def handle_endtag(self, tag):
        if tag == "title":
            self._in_title = False
        elif tag == "main":
            self._in_main = False
        if tag in _NOT_PROSE and self._code:
            self._code -= 1

    def handle_data(self, data):
        if self._in_title:
            self.title += data
        if self._in_main:
            self.main_text += len(data.strip())
            self.text.append(data)
            if not self._code:
                self.prose.append(data)


def local_target(
    site: Path,  # the site folder
    base: str,  # the page's URL
    url: str,  # a URL on the page
) -> tuple[Path, str] | None:  # the file and the fragment, or None for an external or data URL
    "Resolve a URL on a page to a file of the site."
    full = urljoin(base, url)
    parts, origin = urlsplit(full), urlsplit(base)
    if parts.scheme not in ("http", "https") or parts.netloc != origin.netloc:
        return None
    path = site / unquote(parts.path).lstrip("/")
    if parts.path.endswith("/") or path.is_dir():
        path = path / "index.html"
    return path, parts.fragment


class _Server:
    "A static file server on 127.0.0.1 in a thread, which records the requests it answered with an error."

    def __init__(self, site: Path):
        misses = self.misses = []

        class Handler(SimpleHTTPRequestHandler):
            def log_request(self, code="-", size="-"):
                if isinstance(code, int) and code >= 400 or str(code).isdigit() and int(code) >= 400:
                    misses.append((self.path, int(code), self.headers.get("Referer", "")))

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(site)))
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


def check_docs(
    site: Path | str,  # the site folder, as `build_docs` returns it
    n_workers: int = 2,  # browsers open at once
    timeout: float = 90,  # seconds per page
) -> dict:  # {"site": folder, "pages": {page: {"title", "images", "links", "errors", "warnings"}}}
    "Open every page of the site in headless Chromium and check it; raise `DocsCheckError` listing every failure."
    site = Path(site).resolve()
    chromium = find_chromium()
    if not (site / "index.html").is_file():
        raise DocsCheckError(f"{site} has no index.html: build the docs first")
    mf = site / MANIFEST
    expected = {p["page"]: p for p in json.loads(mf.read_text())["pages"]} if mf.is_file() else {
        p.relative_to(site).as_posix(): {} for p in sorted(site.rglob("*.html")) if "site_libs" not in p.parts}
    expected.setdefault("index.html", {})
    results, doms = {}, {}
    with _Server(site) as server:
        def one(page):
            errors = []
            res = dict(title="", images=0, links=0, errors=errors, warnings=[])
            if not (site / page).is_file():
                res["errors"].append(f"missing: the notebook {expected[page].get('source', '')} made no page")
                return page, res, None
            try:
                dom = PageDom(dump_dom(server.url + page, chromium, timeout))
            except RuntimeError as e:
                res["errors"].append(str(e))
                return page, res, None
            want_title, want_images = expected[page].get("title"), expected[page].get("images", 0)
            res.update(title=dom.title.strip(), images=len(dom.images))
            if not dom.title.strip() or (want_title and want_title not in dom.title):
                errors.append(f"title {dom.title.strip()!r} does not name the page {want_title!r}")
            if dom.main_text < 20:
                errors.append(f"main content is empty ({dom.main_text} characters)")
            if len(dom.images) < want_images:
                errors.append(f"{len(dom.images)} picture(s) shown, but its notebook's outputs hold {want_images}")
            for src in dom.images:
                if src.startswith("data:") and len(src.partition(",")[2]) < 16:
                    errors.append(f"empty inline picture {src[:40]!r}")
            errors += [f"picture {k + 1} has no alt text (`#| fig-alt:` on its cell)" for k, alt in enumerate(dom.alts) if not alt]
            if dom.captions < len(dom.images):
                errors.append(f"{len(dom.images)} picture(s) but {dom.captions} caption(s) (`#| fig-cap:` on each figure's cell)")
            if m := RAW_TEX.search(dom.prose):
                errors.append(f"raw TeX in the text: ...{dom.prose[max(0, m.start() - 40):m.end() + 40]!r}...")
            if m := WARNING_TEXT.search(dom.text):
                errors.append(f"a warning is printed in the page: ...{dom.text[max(0, m.start() - 20):m.end() + 80]!r}...")
            if (prof := expected[page].get("profile")) and f"{prof} profile" not in dom.text:
                errors.append(f"an experiment page that does not say which profile made its results ({prof!r})")
            for tag, url in dom.urls:
                if tag != "a" and urlsplit(url).scheme in ("http", "https") and urlsplit(url).hostname not in ("127.0.0.1", None):
                    errors.append(f"fetches {url!r} from the network: a page must read offline")
            return page, res, dom

        with ThreadPoolExecutor(n_workers) as pool:
            for page, res, dom in pool.map(one, list(expected)):
                results[page], doms[page] = res, dom
        misses = list(server.misses)
    for page, dom in doms.items():
        if dom is None:
            continue
        base, res = server.url + page, results[page]
        for tag, url in dom.urls:
            target = local_target(site, base, url)
            if target is None:
                continue
            res["links"] += 1
            path, frag = target
            if not path.is_file():
                res["errors"].append(f"broken local {'link' if tag == 'a' else tag} {url!r}")
                continue
            rel = path.relative_to(site).as_posix()
            if frag and tag == "a" and doms.get(rel) is not None and unquote(frag) not in doms[rel].ids:
                res["warnings"].append(f"link {url!r}: {rel} has no id {unquote(frag)!r}")
    for path, code, referer in misses:
        if path.rstrip("/").endswith("favicon.ico"):
            continue  # the browser asks for one whether or not a page names it
        page = urlsplit(referer).path.lstrip("/") if referer else ""
        results.setdefault(page or "index.html", dict(title="", images=0, links=0, errors=[], warnings=[]))["errors"].append(
            f"the browser was answered {code} for {path}")
    bad = {p: r["errors"] for p, r in results.items() if r["errors"]}
    if bad:
        raise DocsCheckError(f"docs check of {site} failed on {len(bad)} of {len(results)} page(s):\n" + "\n".join(
            f"  {p}: {e}" for p, errs in bad.items() for e in errs))
    return dict(site=str(site), pages=results)


def main(argv: list[str] | None = None) -> int:
    "Command line of `python tools/docs_check.py`: check a built site, print each page's summary."
    ap = argparse.ArgumentParser(prog="tools/docs_check.py", description="Check a built docs site in headless Chromium.")
    ap.add_argument("site", nargs="?", type=Path, default=Path("_docs"), help="the site folder (default: _docs)")
    args = ap.parse_args(argv)
    try:
        res = check_docs(args.site)
    except RuntimeError as e:  # DocsCheckError too: it lists every failure
        print(f"docs_check: error: {e}", file=sys.stderr)
        return 1
    for page, r in res["pages"].items():
        print(f"{page}: {r['images']} picture(s), {r['links']} local link(s)")
        for w in r["warnings"]:
            print(f"  warning: {w}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
