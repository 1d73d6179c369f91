"""README.md from `nbs/index.ipynb`: markdown cells as they are, code cells as fenced Python blocks, hidden cells left out.

A code cell with a line `# include: <path>` (relative to the checkout) is replaced by that file's markdown, its first
heading demoted to `###`: that is how the claims ledger, `tables/claims.md`, opens the README; a picture's path
becomes a link to it (`![...](figures/...)`), which a code host shows.

A development tool of the checkout, not part of the installed package. `nbdev-readme` needs Quarto, which cannot be
installed here, so the README is rendered from the notebook directly. After editing `nbs/index.ipynb`, run from the
checkout

    python tools/readme.py   # or: hnwm readme

and commit both; `tests/test_sync.py` checks that README.md is current.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

__all__ = ["ROOT", "IMAGES", "MARKER", "render_readme", "main"]

ROOT = Path(__file__).resolve().parents[1]  # the checkout this tool belongs to

IMAGES = (".png", ".jpg", ".jpeg", ".gif", ".svg")

MARKER = "<!-- generated from nbs/index.ipynb by `hnwm readme`: edit the notebook, not this file -->"


def render_readme(
    index_nb: Path | str,  # the notebook, `nbs/index.ipynb`
) -> str:  # GitHub markdown, starting with `MARKER`
    "GitHub markdown for the README, from the markdown and visible code cells of `index_nb`."
    cells = json.loads(Path(index_nb).read_text())["cells"]
    parts = [MARKER]
    for c in cells:
        src = "".join(c["source"]).strip()
        if not src or src.startswith("#| hide"):
            continue
        include = [ln.split(":", 1)[1].split()[0] for ln in src.splitlines() if ln.startswith("# include:")]
        if c["cell_type"] == "code" and include and Path(include[0]).suffix in IMAGES:
            parts.append(f"![{Path(include[0]).stem.replace('_', ' ')}]({include[0]})")  # the README links the picture
            continue
        if c["cell_type"] == "code" and include:
            path = ROOT / include[0]
            text = path.read_text().strip() if path.is_file() else "*No ledger yet: `make reproduce` writes it.*"
            parts.append(text.replace("# ", "### ", 1) if text.startswith("# ") else text)
            continue
        parts.append(src if c["cell_type"] == "markdown" else f"```python\n{src}\n```")
    return "\n\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> int:
    "Command line of `python tools/readme.py` (what `hnwm readme` runs): write `README.md` from `nbs/index.ipynb`."
    argparse.ArgumentParser(prog="tools/readme.py", description="Write README.md from nbs/index.ipynb.").parse_args(argv)
    (ROOT / "README.md").write_text(render_readme(ROOT / "nbs" / "index.ipynb"))
    print(f"wrote {ROOT / 'README.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
