"""`hnwm evaluate` killed anywhere (issue 36): a SIGKILL at any point of a smoke evaluation, then the same command
again, gives the records and the summary of an uninterrupted run; the files a kill leaves are never half written."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from hybrid_nbs.paths import env_dir
from hybrid_nbs.train import TrainOptions, train
from toys import smoke_root

HNWM = Path(sys.executable).with_name("hnwm")
FRACTIONS = (0.15, 0.3, 0.45, 0.6, 0.75, 0.9)  # kill points, as shares of an uninterrupted run's duration


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    r = smoke_root(tmp_path_factory, ("balls",))
    train("balls", "smoke", seed=0, root=r, progress=False, options=TrainOptions(threads=1))
    return r


def _evaluate(root: Path) -> subprocess.Popen:
    env = dict(os.environ, OMP_NUM_THREADS="1")
    return subprocess.Popen([HNWM, "evaluate", "--env", "balls", "--profile", "smoke", "--root", str(root), "--n-boot", "20"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _published(folder: Path) -> dict:
    "What an evaluation published: each record file's arrays, and the summary without its timings."
    out = {}
    for f in sorted(folder.iterdir()):
        assert not f.name.endswith(".partial"), f"a half-written {f.name} was left in {folder}"
        if f.suffix == ".npz":
            with np.load(f, allow_pickle=False) as z:
                out[f.name] = {k: z[k] for k in z.files}
        else:
            out[f.name] = {k: v for k, v in json.loads(f.read_text()).items() if "seconds" not in k}
    return out


def _same(a: dict, b: dict) -> bool:
    "Whether two `_published` folders hold the same files, fields and values (NaN equal to NaN)."
    if a.keys() != b.keys() or any(a[k].keys() != b[k].keys() for k in a):
        return False
    eq = lambda x, y: np.array_equal(x, y, equal_nan=x.dtype.kind == "f") if isinstance(x, np.ndarray) else x == y  # noqa: E731
    return all(eq(a[k][c], b[k][c]) for k in a for c in a[k])


@pytest.mark.slow  # over 10 s in CI (`make test --durations`)
def test_evaluate_killed_anywhere_then_rerun_matches_an_uninterrupted_run(root):
    folder = env_dir("balls", "smoke", root) / "eval"
    t = time.perf_counter()
    p = _evaluate(root)
    assert p.wait(timeout=600) == 0, p.stderr.read()[-2000:]
    duration, reference = time.perf_counter() - t, _published(folder)
    assert set(reference) == {"results_seed0.json", *(f"records_seed0_{s}.npz" for s in ("calib", "test", "ood_near", "ood_far"))}
    for share in FRACTIONS:
        p = _evaluate(root)
        time.sleep(share * duration)
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=60)
        left = sorted(f.name for f in folder.iterdir())
        assert all(not n.endswith(".partial.npz") for n in left), left  # the old naming np.savez used
        p = _evaluate(root)
        assert p.wait(timeout=600) == 0, p.stderr.read()[-2000:]
        assert _same(_published(folder), reference), f"killed at {share:.0%} of the run, the rerun differs"


def test_evaluate_recovers_a_best_old_left_by_a_kill(root):
    # before: `best` renamed aside by a killed save made evaluate say "no trained surrogate ... run hnwm train"
    from hybrid_nbs.paths import ckpt_dir
    folder = ckpt_dir("balls", "smoke", 0, root)
    (folder / "best").rename(folder / "best.old")
    p = _evaluate(root)
    assert p.wait(timeout=600) == 0, p.stderr.read()[-2000:]
    assert (folder / "best").is_dir() and not (folder / "best.old").exists()
