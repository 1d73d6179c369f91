"""Issue 15's nine cases, each a bad input that once gave a silent wrong result, lost data or a raw traceback."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hybrid_nbs.checkpoint import CONFIG_FILE, MODEL_FILE, load_model
from hybrid_nbs.cli import main
from hybrid_nbs.core import make_rng
from hybrid_nbs.paths import exclusive
from hybrid_nbs.data import BuildOptions, build_dataset, dask_client
from hybrid_nbs.store import open_store, read_meta
from hybrid_nbs.envs import make_env
from hybrid_nbs.envs.euler import Euler, from_primitive, sedov_state
from hybrid_nbs.envs.oregonator import Oregonator, OregonatorParams
from hybrid_nbs.errormap import step_doubling
from hybrid_nbs.hybrid import HybridSimulator
from hybrid_nbs.paths import ckpt_dir, store_path
from hybrid_nbs.pairs import PairSource
from hybrid_nbs.train import TrainOptions, train
from toys import smoke_root

Q = dict(progress=False, options=BuildOptions(workers=0))  # in this process


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    r = smoke_root(tmp_path_factory, ("euler",))
    train("euler", "smoke", seed=0, root=r, progress=False, options=TrainOptions(threads=1))
    return r


@pytest.fixture(scope="module")
def model(root):
    return load_model(ckpt_dir("euler", "smoke", 0, root) / "best", env="euler", profile="smoke")[0]


def _copy_store(root, tmp_path, split="train"):
    dst = tmp_path / "smoke" / "euler" / f"{split}.zarr"
    shutil.copytree(store_path("euler", "smoke", split, root), dst)
    return dst


@pytest.mark.slow  # over 10 s in CI (`make test --durations`)
# 1. dataset metadata carries a checksum; --verify repairs it
def test_flipped_params_byte_is_caught_and_repaired(root, tmp_path):
    path = _copy_store(root, tmp_path)
    chunk = next(f for f in (path / "params" / "c").rglob("*") if f.is_file())
    data = bytearray(chunk.read_bytes()); data[0] ^= 0xFF; chunk.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="array 'params' is corrupt.*--verify"):
        PairSource(path)
    recs = build_dataset("euler", "smoke", "train", tmp_path, progress=False, options=BuildOptions(workers=0, verify=True))
    assert recs[0]["repaired_metadata"] == ["params"]
    np.testing.assert_array_equal(read_meta(open_store(path), "params"),
                                  read_meta(open_store(store_path("euler", "smoke", "train", root)), "params"))


# 2. horizons past the trained range, a threshold reused at another horizon, a NaN threshold, a bool horizon
def test_horizons_and_thresholds(model, root):
    x = np.asarray(open_store(store_path("euler", "smoke", "val", root))["states"][:, 0], np.float64)
    p = np.full((len(x), 1), 1.4)
    with pytest.raises(ValueError, match="beyond the trained range"):
        step_doubling(model, x, p, 1e6)
    assert step_doubling(model, x, p, 32, extrapolate=True).info["extrapolated"]
    with pytest.raises(ValueError, match="horizon must be a positive number"):
        step_doubling(model, x, p, True)
    env = make_env("euler", "smoke")
    params = [env.Params()] * len(x)
    sim = HybridSimulator(env, model)
    sim.calibrate(x, params, 8, deferral=0.5)
    with pytest.raises(ValueError, match="calibrated at horizon 8"):
        sim.mode2(x, params, 4)
    with pytest.raises(ValueError, match="threshold is NaN"):
        sim.mode2(x, params, 8, threshold=float("nan"))


# 3. Euler inputs validated, and a substep cap
def test_euler_inputs():
    with pytest.raises(ValueError, match="non-finite"):
        from_primitive(np.full((32, 32), np.nan), 0, 0, 1.0)
    with pytest.raises(ValueError, match="energy must be"):
        sedov_state(32, float("nan"), 1.0)
    with pytest.raises(ValueError, match="gamma must exceed 1"):
        Euler.Params(gamma=1.0)
    env = Euler(n=16)
    s = env.initial_state(env.Params(), make_rng(0))
    s[3, 4, 4] *= 1e30
    with pytest.raises(ValueError, match="the CFL step fell"):
        env.advance(s, env.Params(), 1)


# 4. resume never loses a checkpoint
def test_resume_keeps_best(root, tmp_path):
    src = ckpt_dir("euler", "smoke", 0, root)
    run = ckpt_dir("euler", "smoke", 0, root, run="lost")
    shutil.copytree(src, run)
    shutil.rmtree(run / "last")
    best = (run / "best" / MODEL_FILE).read_bytes()
    with pytest.raises(ValueError, match="no last one to resume from"):
        train("euler", "smoke", root=root, progress=False, options=TrainOptions(run="lost", threads=1))
    assert (run / "best" / MODEL_FILE).read_bytes() == best
    broken = ckpt_dir("euler", "smoke", 0, root, run="broken")
    shutil.copytree(src, broken)
    shutil.copytree(broken / "last", broken / "last.old")
    (broken / "last" / MODEL_FILE).write_bytes(b"\0" * 10)
    assert train("euler", "smoke", root=root, progress=False, options=TrainOptions(run="broken", threads=1))["complete"]


@pytest.mark.slow  # over 10 s in CI (`make test --durations`)
# 5. the CLI honours HYBRID_NBS_PROFILE and refuses zero counts
def test_cli_profile_and_counts(tmp_path):
    env = dict(os.environ, HYBRID_NBS_PROFILE="smoke")
    hnwm = Path(sys.executable).with_name("hnwm")
    r = subprocess.run([str(hnwm), "data", "--env", "balls", "--root", str(tmp_path), "--workers", "0", "--split", "val"],
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert (tmp_path / "smoke" / "balls" / "val.zarr").is_dir() and not (tmp_path / "laptop").exists()
    for option in ("--epochs", "--threads"):  # refused as the command line is parsed (argparse's exit 2)
        with pytest.raises(SystemExit) as e:
            main(["train", "--env", "balls", "--profile", "smoke", option, "0"])
        assert e.value.code == 2


# 6. the Oregonator does not hide a failure, and bounds its parameters
def test_oregonator_numerics():
    with pytest.raises(ValueError, match="eps must lie in"):
        OregonatorParams(eps=1e-300)
    with pytest.raises(ValueError, match="q must lie in"):
        OregonatorParams(q=1e300)
    env = Oregonator(n=16, L=6.25)
    p = env.Params()
    s = env.initial_state(p, make_rng(0), family="target")
    assert np.isfinite(env.advance(s, p, 2)).all()


@pytest.mark.slow  # over 10 s in CI (`make test --durations`)
# 7. a second build or training run on the same path, an unreachable scheduler, a damaged shard
def test_concurrency_and_os_errors(root, tmp_path):
    path = _copy_store(root, tmp_path, "val")
    with exclusive(path, "a test"):
        with pytest.raises(ValueError, match="another build is using"):
            build_dataset("euler", "smoke", "val", tmp_path, **Q)
    with exclusive(ckpt_dir("euler", "smoke", 5, root), "a test"):
        with pytest.raises(ValueError, match="another training run is using"):
            train("euler", "smoke", seed=5, root=root, progress=False, options=TrainOptions(threads=1))
    with pytest.raises(ValueError, match="cannot reach the Dask scheduler"):
        with dask_client("tcp://127.0.0.1:9"):
            pass
    shard = next(f for f in (path / "states" / "c").rglob("*") if f.is_file())
    data = bytearray(shard.read_bytes()); data[len(data) // 2] ^= 0xFF; shard.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=r"trajectory \d+ is corrupt.*--verify"):
        PairSource(path)
    streamed = PairSource(path, memory_gb=0)  # read a batch at a time from the store: the same error, naming the trajectory
    every = np.array([[i, 0, t] for i in range(streamed.n_traj) for t in range(1, streamed.n_frames)])
    with pytest.raises(ValueError, match=r"trajectory \d+ is corrupt.*--verify"):
        list(streamed.batches(every, 8))
    assert main(["data", "--env", "euler", "--profile", "smoke", "--root", str(tmp_path / "smoke" / "euler" / "val.zarr" /
                                                                                   "zarr.json"), "--workers", "0"]) == 1


# 8. a checkpoint matches the whole environment and vouches for its files
def test_checkpoint_matching(root, model, tmp_path):
    with pytest.raises(ValueError, match="frame_dt: recorded 0.002 != 0.004"):
        HybridSimulator(make_env("euler", "smoke", frame_dt=0.004), model)
    with pytest.raises(ValueError, match="bc: recorded 'outflow'"):
        HybridSimulator(make_env("euler", "smoke", bc="periodic"), model)
    ck = tmp_path / "ck"
    shutil.copytree(ckpt_dir("euler", "smoke", 0, root) / "best", ck)
    cfg = json.loads((ck / CONFIG_FILE).read_text())
    for edit in ({"files": {}}, {"model": {**cfg["model"], "state_shape": [4, 64, 64]}}):
        (ck / CONFIG_FILE).write_text(json.dumps({**cfg, **edit}))
        with pytest.raises(ValueError, match="was edited or is damaged"):
            load_model(ck)


# 9. Mode 2 sends what the network cannot take to the solver, one trajectory at a time
def test_mode2_defers_bad_inputs(model, root):
    env = make_env("euler", "smoke")
    x = np.asarray(open_store(store_path("euler", "smoke", "val", root))["states"][:, 0], np.float64)
    params = [env.Params()] * len(x)
    sim = HybridSimulator(env, model)
    sim.calibrate(x, params, 4, deferral=0.0)
    bad = x.copy()
    bad[0, 0, 1, 1] = np.nan
    bad[1] *= 1e40  # beyond float32; the same flow for the solver
    res = sim.mode2(bad, params, 4)
    assert res.deferred.tolist() == [True, True] and res.failed.tolist() == [True, False]
    assert "non-finite" in res.errors[0]
    np.testing.assert_array_equal(res.prediction[1], env.advance(bad[1], params[1], 4))  # beyond float32: float64 throughout


# 10. a dataset folder from before the calib split: the missing split is refused, never replaced by another one,
# with the command that builds it (which then works)
def test_missing_split_names_the_command(tmp_path, monkeypatch):
    import re
    from hybrid_nbs.held_out import load_split
    build_dataset("balls", "smoke", "train", tmp_path, **Q)
    missing = store_path("balls", "smoke", "calib", tmp_path)
    want = f"no calib split at {missing}; build it with `hnwm data --env balls --profile smoke --split calib --root {tmp_path}`"
    for opening in (lambda: open_store(missing, complete=True), lambda: load_split("balls", "smoke", "calib", [1], tmp_path)):
        with pytest.raises(ValueError, match=re.escape(want)):
            opening()
    assert not missing.exists()
    mine = tmp_path / "smoke" / "mine"  # a simulator of one's own: the import path its other stores record
    shutil.copytree(store_path("balls", "smoke", "train", tmp_path), mine / "train.zarr")
    with pytest.raises(ValueError, match=re.escape("`hnwm data --env hybrid_nbs.envs.balls:Balls --profile smoke --split test")):
        open_store(mine / "test.zarr")
    monkeypatch.setenv("HYBRID_NBS_ROOT", str(tmp_path))  # the default root: no --root to give
    with pytest.raises(ValueError, match=re.escape("--split calib`")):
        open_store(store_path("balls", "smoke", "calib"))
    assert main(["data", "--env", "balls", "--profile", "smoke", "--split", "calib", "--root", str(tmp_path),
                 "--workers", "0"]) == 0
    assert open_store(missing, complete=True)["states"].shape == (4, 17, 3, 9)
