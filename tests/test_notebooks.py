"""Every notebook, executed by nbdev's runner at the smoke profile, skipping cells flagged with `tst_flags`."""
import os
from pathlib import Path

import pytest
from nbdev.config import get_config
from nbdev.test import test_nb as run_notebook

ROOT = Path(__file__).resolve().parents[1]
NBS = ROOT / "nbs"
NOTEBOOKS = sorted(p for p in NBS.rglob("*.ipynb")
                   if not any(part.startswith(("_", ".")) for part in p.relative_to(NBS).parts))


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[str(p.relative_to(NBS)) for p in NOTEBOOKS])
def test_notebook(nb, monkeypatch):
    monkeypatch.setenv("HYBRID_NBS_PROFILE", "smoke")
    monkeypatch.delenv("HYBRID_NBS_ROOT", raising=False)
    skip = get_config(NBS).tst_flags.split()
    ok, seconds = run_notebook(nb, skip_flags=skip, cell_timeout=900)
    assert ok, f"{nb.relative_to(NBS)} failed (traceback above, in the captured stderr)"


def test_notebooks_found():
    names = {p.name for p in NOTEBOOKS}
    assert {"index.ipynb", "00_core.ipynb", "02_euler.ipynb", "02a_euler_validation.ipynb", "11_cli.ipynb"} <= names
