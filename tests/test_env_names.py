"""Issue 38, item 3: every artefact of an Env is named after its `name`'s slug, never its import path; an Env whose
`name` is no plain file name is slugged, and the dataset card records which name became which folder."""
import os
import subprocess
import sys
from pathlib import Path

HNWM = Path(sys.executable).with_name("hnwm")
SIM = '''from hybrid_nbs.envs.balls import Balls


class MyBalls(Balls):
    "The balls, under a name with a space and a colon."
    name = "my balls: v2"
'''


def test_an_env_name_that_is_no_file_name_is_slugged_and_the_card_says_so(tmp_path):
    (tmp_path / "mysim.py").write_text(SIM)
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "OMP_NUM_THREADS": "1"}
    env.pop("HYBRID_NBS_ROOT", None)
    r = subprocess.run([str(HNWM), "data", "--env", "mysim:MyBalls", "--profile", "smoke", "--workers", "0",
                        "--root", str(tmp_path / "data")], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert sorted(p.name for p in (tmp_path / "data" / "smoke").iterdir()) == ["my-balls-v2"]
    card = (tmp_path / "data" / "smoke" / "my-balls-v2" / "card.md").read_text()
    assert "calls itself `my balls: v2`; every folder and file of it is named `my-balls-v2`" in card
