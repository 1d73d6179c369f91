"""The corrector study (issue 37) at the smoke profile: `nbs/experiments/_next/` holds its two notebooks until a run of
`make study` at the laptop profile publishes their results; then they move to `experiments/` with their job metadata.
Until then no job runs them and the site has no page for them, so this test is what executes them."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.notebooks  # `pytest -m "not notebooks and not docs"` runs the fast tests alone

NEXT = Path(__file__).resolve().parents[1] / "nbs" / "experiments" / "_next"
RUNNER = """
import sys
from nbdev.test import test_nb
ok, _ = test_nb(sys.argv[1], skip_flags=["notest", "slow"], cell_timeout=900)
sys.exit(0 if ok else 1)
"""


def test_the_corrector_sweep_and_its_pick_run_at_smoke(tmp_path):
    env = {**os.environ, "HYBRID_NBS_PROFILE": "smoke", "HYBRID_NBS_ROOT": str(tmp_path)}
    for nb in ("corrector.ipynb", "corrector_speed.ipynb"):  # the second reads what the first trained
        r = subprocess.run([sys.executable, "-c", RUNNER, str(NEXT / nb)], cwd=NEXT, env=env, capture_output=True,
                           text=True, timeout=1800)
        assert r.returncode == 0, f"{nb} failed:\n{r.stderr[-6000:]}"
    assert list(tmp_path.glob("data/smoke/euler/ckpt/corrector-k2-*-seed1/best"))
