"""Training at the smoke profile: a run, checkpoints, resume equality, bad checkpoints, and DDP under torchrun."""
import os
import shutil
import subprocess
import sys
import time

import pytest
import torch

from hybrid_nbs.checkpoint import CONFIG_FILE, MODEL_FILE, OPTIM_FILE, load_model, read_checkpoint
from hybrid_nbs.paths import ckpt_dir
from hybrid_nbs.cli import main
from hybrid_nbs.loss import horizon_weights
from hybrid_nbs.train import TrainOptions, train
from hybrid_nbs.train_config import TrainConfig, train_config_for
from hybrid_nbs.pipeline import train_main
from toys import smoke_root


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return smoke_root(tmp_path_factory, ("euler", "balls"))


def _weights(folder):
    return load_model(folder)[0].state_dict()


@pytest.mark.parametrize("env", ["euler", "balls"])
def test_smoke_run_writes_loadable_checkpoints(root, env):
    res = train_main(env, "smoke", seed=0, root=root, progress=False, threads=1)
    assert res["complete"] and res["epochs"] == 3 and res["best_val"] > 0
    folder = ckpt_dir(env, "smoke", 0, root)
    for kind in ("last", "best"):
        model, meta = load_model(folder / kind, env=env, profile="smoke")
        assert meta["env"] == env and meta["dataset"]["size"] == 4
    assert (folder / "last" / OPTIM_FILE).is_file() and not (folder / "best" / OPTIM_FILE).exists()
    assert set(res["val"]["mse"]) == {"1", "2", "4", "8", "16"}
    again = train_main(env, "smoke", seed=0, root=root, progress=False, threads=1)  # complete: resumes and returns at once
    assert again["step"] == res["step"] and again["history"] == res["history"]


def test_resume_matches_uninterrupted(root):
    a = train("euler", "smoke", seed=5, root=root, progress=False, options=TrainOptions(run="full", threads=1))
    part = train("euler", "smoke", seed=5, root=root, progress=False, options=TrainOptions(run="split", stop_after=1, threads=1))
    assert part["epochs"] == 1 and not part["complete"]
    b = train("euler", "smoke", seed=5, root=root, progress=False, options=TrainOptions(run="split", threads=1))
    wa, wb = _weights(ckpt_dir("euler", "smoke", root=root, run="full") / "last"), \
        _weights(ckpt_dir("euler", "smoke", root=root, run="split") / "last")
    assert all(torch.equal(wa[k], wb[k]) for k in wa)
    oa = read_checkpoint(ckpt_dir("euler", "smoke", root=root, run="full") / "last", optimizer=True)["optimizer"]
    ob = read_checkpoint(ckpt_dir("euler", "smoke", root=root, run="split") / "last", optimizer=True)["optimizer"]
    assert all(torch.equal(oa["state"][i]["exp_avg_sq"], ob["state"][i]["exp_avg_sq"]) for i in oa["state"])
    assert a["best_val"] == b["best_val"]


def test_resume_refuses_other_config(root):
    train("euler", "smoke", seed=6, root=root, progress=False, options=TrainOptions(run="cfg", stop_after=1, threads=1))
    with pytest.raises(ValueError, match="cannot resume.*chain_weight"):
        train("euler", "smoke", seed=6, root=root, progress=False,
              config=train_config_for("euler", "smoke", chain_weight=0.0), options=TrainOptions(run="cfg", threads=1))


def test_bad_checkpoints(root, tmp_path):
    train_main("euler", "smoke", seed=0, root=root, progress=False, threads=1)
    src = ckpt_dir("euler", "smoke", 0, root) / "last"
    with pytest.raises(ValueError, match="environment path 'hybrid_nbs.envs.euler:Euler', not 'hybrid_nbs.envs.balls:Balls'"):
        load_model(src, env="balls")
    with pytest.raises(ValueError, match="profile 'smoke', not 'laptop'"):
        load_model(src, profile="laptop")
    with pytest.raises(ValueError, match="model size 'unet-smoke', not 'unet-laptop'"):
        load_model(src, arch="unet-laptop")
    with pytest.raises(ValueError, match="no checkpoint"):
        load_model(tmp_path / "missing")
    bad = tmp_path / "bad"
    shutil.copytree(src, bad)
    data = (bad / MODEL_FILE).read_bytes()
    (bad / MODEL_FILE).write_bytes(data[:-100])
    with pytest.raises(ValueError, match=f"{MODEL_FILE} is corrupt or truncated"):
        load_model(bad)
    (bad / MODEL_FILE).write_bytes(data)
    (bad / OPTIM_FILE).write_bytes(b"\0" * 50)
    with pytest.raises(ValueError, match=f"{OPTIM_FILE} is corrupt"):
        read_checkpoint(bad, optimizer=True)
    (bad / CONFIG_FILE).write_text((bad / CONFIG_FILE).read_text()[:200])
    with pytest.raises(ValueError, match=f"{CONFIG_FILE} is corrupt"):
        load_model(bad)
    # a checkpoint of the balls model where the euler one is expected, placed as euler's last: resume refuses it
    train_main("balls", "smoke", seed=0, root=root, progress=False, threads=1)
    run = ckpt_dir("euler", "smoke", root=root, run="foreign")
    run.mkdir(parents=True)
    shutil.copytree(ckpt_dir("balls", "smoke", 0, root) / "last", run / "last")
    with pytest.raises(ValueError, match="environment path 'hybrid_nbs.envs.balls:Balls', not 'hybrid_nbs.envs.euler:Euler'"):
        train("euler", "smoke", root=root, progress=False, options=TrainOptions(run="foreign", threads=1))


def test_bad_arguments(root):
    with pytest.raises(ValueError, match="neither a registered name"):
        train("navier", "smoke", root=root)
    with pytest.raises(ValueError, match="unknown TrainConfig"):
        train_main("euler", "smoke", root=root, learning_rate=1.0)
    with pytest.raises(ValueError, match=r"no train split at .*hnwm data --env oregonator --profile smoke --split train"):
        train("oregonator", "smoke", root=root, progress=False, options=TrainOptions(threads=1))
    assert main(["train", "--env", "navier", "--profile", "smoke", "--root", str(root)]) == 1


def test_ddp_two_processes(root):
    t = time.perf_counter()
    env = dict(os.environ, OMP_NUM_THREADS="1")
    r = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
                        "-m", "hybrid_nbs.cli", "train", "--env", "euler", "--profile", "smoke", "--root", str(root),
                        "--seed", "11", "--no-progress"], capture_output=True, text=True, timeout=90, env=env)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-4000:]
    model, meta = load_model(ckpt_dir("euler", "smoke", 11, root) / "last", env="euler", profile="smoke")
    assert meta["world_size"] == 2 and meta["threads"] == 1 and meta["epoch"] == 3
    assert "best val" in r.stdout and r.stdout.count("best val") == 1  # rank 0 alone reports
    print(f"DDP test: {time.perf_counter() - t:.1f} s")


def test_horizon_weighted_run_resumes_bit_identical(root):
    cfg = train_config_for("euler", "smoke", horizon_weighting="persistence")
    train("euler", "smoke", seed=7, root=root, config=cfg, progress=False, options=TrainOptions(run="hw-full", threads=1))
    train("euler", "smoke", seed=7, root=root, config=cfg, progress=False, options=TrainOptions(run="hw-split", stop_after=1, threads=1))
    train("euler", "smoke", seed=7, root=root, config=cfg, progress=False, options=TrainOptions(run="hw-split", threads=1))
    (wa, ma), (wb, mb) = (load_model(ckpt_dir("euler", "smoke", root=root, run=r) / "last") for r in ("hw-full", "hw-split"))
    assert all(torch.equal(wa.state_dict()[k], wb.state_dict()[k]) for k in wa.state_dict())
    rungs, weights = ma["horizon_weights"]
    assert ma["horizon_weights"] == mb["horizon_weights"] and rungs == [1.0, 2.0, 4.0, 8.0, 16.0]
    assert weights[0] > weights[-1] > 0  # the short horizons change least, so they weigh most
    # a checkpoint written before the field existed trained uniformly, and reads so
    old = {k: v for k, v in cfg.to_dict().items() if k != "horizon_weighting"}
    assert TrainConfig.from_dict(old).horizon_weighting == "uniform"


class _FrozenSource:
    "A split whose states never change: there is no persistence error to weight by."
    n_traj, n_frames, path = 2, 17, "frozen.zarr"

    def batches(self, pairs, batch_size, workers=0, coarse=True):  # `PairSource.batches`' signature
        for k in range(0, len(pairs), batch_size):
            n = len(pairs[k:k + batch_size])
            s = torch.ones(n, 4, 16, 16)
            yield s, s.clone(), torch.as_tensor(pairs[k:k + batch_size, 2]).float(), torch.ones(n, 1)


def test_horizon_weights_refuse_states_that_never_change():
    from hybrid_nbs.envs import make_env
    from hybrid_nbs.model import build_model
    model = build_model("unet-smoke", make_env("euler", "smoke"),
                        norm=dict(state_mean=[0.0] * 4, state_std=[1.0] * 4, param_mean=[1.4], param_std=[0.1]))
    with pytest.raises(ValueError, match="positive, finite persistence error at every rung.*frozen.zarr"):
        horizon_weights(_FrozenSource(), model, train_config_for("euler", "smoke"), seed=0)
    with pytest.raises(ValueError, match="horizon_weighting must be 'uniform' or 'persistence', got 'inverse'"):
        TrainConfig(horizon_weighting="inverse")
