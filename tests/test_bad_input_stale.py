"""Issue 38, item 2: stale results are impossible. A user's Env edited after its data was built: `hnwm train` and
`hnwm evaluate` refuse the old data, naming the command that settles it; `hnwm data` then keeps data that the edited
solver still reproduces, after which training goes on; and a checkpoint trained on a rebuilt dataset is refused."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

HNWM = Path(sys.executable).with_name("hnwm")
SIM = '''from hybrid_nbs.envs.balls import Balls


class MyBalls(Balls):
    "The balls, as a user's module."
    def advance(self, state, params, n_frames):
        return super().advance(state, params, n_frames){edit}
'''


def _hnwm(tmp_path, *args):
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "OMP_NUM_THREADS": "1"}
    env.pop("HYBRID_NBS_ROOT", None)
    return subprocess.run([str(HNWM), *args, "--env", "mysim:MyBalls", "--profile", "smoke", "--root", str(tmp_path / "data")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.slow  # over 10 s in CI (`make test --durations`)
def test_an_edited_solver_makes_train_and_evaluate_refuse_until_the_data_is_settled(tmp_path):
    sim = tmp_path / "mysim.py"
    sim.write_text(SIM.format(edit=""))
    assert _hnwm(tmp_path, "data", "--workers", "0").returncode == 0
    first = _hnwm(tmp_path, "train", "--epochs", "1", "--no-progress")
    assert first.returncode == 0, first.stderr[-2000:]
    sim.write_text(SIM.format(edit="  # edited: the same frames"))
    for cmd in (["train", "--epochs", "1", "--no-progress"], ["evaluate"]):
        r = _hnwm(tmp_path, *cmd)
        assert r.returncode != 0, (cmd, r.stdout[-1000:])
        assert "was built by other solver code" in r.stderr and "hnwm data --env mysim:MyBalls" in r.stderr, r.stderr[-2000:]
    assert _hnwm(tmp_path, "data", "--workers", "0").returncode == 0  # the edit keeps the frames: accepted
    again = _hnwm(tmp_path, "train", "--epochs", "1", "--no-progress")
    assert again.returncode == 0 and "1 epochs" in again.stdout, again.stderr[-2000:]


@pytest.mark.slow  # over 10 s in CI (`make test --durations`)
def test_a_checkpoint_of_a_rebuilt_dataset_is_refused_by_evaluate(tmp_path):
    (tmp_path / "mysim.py").write_text(SIM.format(edit=""))
    assert _hnwm(tmp_path, "data", "--workers", "0").returncode == 0
    assert _hnwm(tmp_path, "train", "--epochs", "1", "--no-progress").returncode == 0
    assert _hnwm(tmp_path, "data", "--workers", "0", "--overwrite", "--seed", "5").returncode == 0  # other frames
    r = _hnwm(tmp_path, "evaluate")
    assert r.returncode != 0 and "was trained on other balls data" in r.stderr and "--no-resume" in r.stderr, r.stderr[-2000:]


@pytest.mark.slow  # over 10 s in CI (`make test --durations`)
def test_two_environments_of_one_name_in_one_root_are_refused(tmp_path):
    (tmp_path / "mysim.py").write_text(SIM.format(edit=""))
    assert _hnwm(tmp_path, "data", "--workers", "0").returncode == 0
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    env.pop("HYBRID_NBS_ROOT", None)
    for cmd in (["data", "--workers", "0"], ["train", "--epochs", "1", "--no-progress"]):  # the registered balls
        r = subprocess.run([str(HNWM), *cmd, "--env", "balls", "--profile", "smoke", "--root", str(tmp_path / "data")],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert r.returncode != 0 and "holds the data of mysim:MyBalls, not of hybrid_nbs.envs.balls:Balls" in r.stderr, \
            (cmd, r.stderr[-2000:])
