"""Every notebook, executed by nbdev's runner at the smoke profile, skipping cells flagged with `tst_flags`.

Each notebook runs in its own Python process, as `nbdev-test` does: nbdev's runner executes cells in the calling
process, so a notebook's global side effects (thread counts, torch's grad mode, matplotlib's backend) would otherwise
leak into the tests that follow.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest
from nbdev.config import get_config

pytestmark = pytest.mark.notebooks  # `pytest -m "not notebooks and not docs"` runs the fast tests alone

ROOT = Path(__file__).resolve().parents[1]
NBS = ROOT / "nbs"
NOTEBOOKS = sorted(p for p in NBS.rglob("*.ipynb")
                   if not any(part.startswith(("_", ".")) for part in p.relative_to(NBS).parts))
RUNNER = """
import sys
from nbdev.test import test_nb
ok, _ = test_nb(sys.argv[1], skip_flags=sys.argv[2].split(), cell_timeout=900)
sys.exit(0 if ok else 1)
"""


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[str(p.relative_to(NBS)) for p in NOTEBOOKS])
def test_notebook(nb):
    env = {**os.environ, "HYBRID_NBS_PROFILE": "smoke"}
    env.pop("HYBRID_NBS_ROOT", None)
    skip = get_config(NBS).tst_flags
    r = subprocess.run([sys.executable, "-c", RUNNER, str(nb), skip], cwd=nb.parent, env=env,
                       capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, f"{nb.relative_to(NBS)} failed:\n{r.stderr[-6000:]}"


def test_notebooks_found():
    names = {p.name for p in NOTEBOOKS}
    assert {"index.ipynb", "00_core.ipynb", "02_euler.ipynb", "02a_euler_validation.ipynb", "11_cli.ipynb"} <= names
