"""The dataset builder: distributed = single-process bytes, crash + resume, uniqueness, bad input, cards, the torch Dataset."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from hybrid_nbs.card import load_norm, write_card
from hybrid_nbs.core import SPLITS
from hybrid_nbs.data import BuildOptions, build_dataset
from hybrid_nbs.store import open_store, read_meta, read_trajectory, stored_params
from hybrid_nbs.pipeline import data_main
from hybrid_nbs.paths import store_path
from hybrid_nbs.dataset import PairDataset
from hybrid_nbs.env import layout_of
from hybrid_nbs.envs import make_env
from hybrid_nbs.envs.balls import Balls
from toys import smoke_root

Q = dict(progress=False, options=BuildOptions(workers=0))  # in this process


def tree(path: Path) -> dict:
    return {str(f.relative_to(path)): f.read_bytes() for f in sorted(Path(path).rglob("*")) if f.is_file()}


@pytest.fixture(scope="module")
def euler_smoke(tmp_path_factory):
    return smoke_root(tmp_path_factory, ("euler",), card=False, name="single")


def test_two_worker_cluster_gives_the_same_bytes(euler_smoke, tmp_path):
    recs = build_dataset("euler", "smoke", "all", tmp_path, progress=False, options=BuildOptions(workers=2))
    assert [r["built"] for r in recs] == [4, 2, 4, 2, 2, 2]
    assert [r["n_frames"] for r in recs] == [17, 17, 17, 33, 33, 33]  # test and OOD reach beyond the trained horizon
    for s in SPLITS:
        a, b = tree(store_path("euler", "smoke", s, euler_smoke)), tree(store_path("euler", "smoke", s, tmp_path))
        assert a == b and len(a) > 10, s


def test_killed_build_resumes_to_identical_bytes(euler_smoke, tmp_path):
    code = ("from hybrid_nbs.data import BuildOptions, build_dataset; "
            f"build_dataset('euler', 'smoke', 'train', {str(tmp_path)!r}, progress=False, "
            "options=BuildOptions(workers=0, _fail_at=(2, 'kill')))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 17, p.stderr  # the process died inside the task, after writing shard 2
    path = store_path("euler", "smoke", "train", tmp_path)
    g = open_store(path)
    assert g["done"][...].tolist() == [1, 1, 0, 0]
    stray = path / "states" / "c" / "3" / "0" / "0" / "0" / "0.deadbeef.partial"
    stray.parent.mkdir(parents=True, exist_ok=True)
    stray.write_bytes(b"half a chunk")  # what a kill during a chunk write leaves behind
    (rec,) = build_dataset("euler", "smoke", "train", tmp_path, **Q)
    assert (rec["built"], rec["skipped"]) == (2, 2) and not stray.exists()
    assert tree(path) == tree(store_path("euler", "smoke", "train", euler_smoke))


def test_exception_in_a_task_keeps_finished_work(euler_smoke, tmp_path):
    with pytest.raises(RuntimeError, match="run the same command again to resume"):
        build_dataset("euler", "smoke", "val", tmp_path, progress=False, options=BuildOptions(workers=0, _fail_at=(1, "raise")))
    assert open_store(store_path("euler", "smoke", "val", tmp_path))["done"][...].tolist() == [1, 0]
    build_dataset("euler", "smoke", "val", tmp_path, **Q)
    assert tree(store_path("euler", "smoke", "val", tmp_path)) == tree(store_path("euler", "smoke", "val", euler_smoke))


def test_initial_states_are_unique_and_duplicates_refused(euler_smoke, tmp_path):
    hashes = [bytes(h) for s in SPLITS for h in open_store(store_path("euler", "smoke", s, euler_smoke))["ic_hash"][...]]
    seeds = [int(x) for s in SPLITS for x in open_store(store_path("euler", "smoke", s, euler_smoke))["seeds"][...]]
    assert len(set(hashes)) == len(hashes) == 16 and len(set(seeds)) == 16

    class Frozen(Balls):  # the paper's Euler bug: an initial state that ignores its generator
        def initial_state(self, params, rng):
            return super().initial_state(params, np.random.default_rng(0))

    with pytest.raises(ValueError, match="two seeds gave the same initial state"):  # check_env refuses it first
        build_dataset(Frozen(n_balls=3), "smoke", "train", tmp_path, **Q)
    assert not any(tmp_path.rglob("*.zarr"))


def test_bad_input(euler_smoke, tmp_path):
    with pytest.raises(ValueError, match="neither a registered name"):
        build_dataset("navier", "smoke", "train", tmp_path, **Q)
    with pytest.raises(ValueError, match="Unknown profile"):
        build_dataset("euler", "nano", "train", tmp_path, **Q)
    with pytest.raises(ValueError, match="Unknown split"):
        build_dataset("euler", "smoke", "training", tmp_path, **Q)
    with pytest.raises(ValueError, match="workers must be"):
        build_dataset("euler", "smoke", "train", tmp_path, progress=False, options=BuildOptions(workers=-1))
    (tmp_path / "afile").write_text("x")
    with pytest.raises(ValueError, match="is a file"):
        build_dataset("euler", "smoke", "train", tmp_path / "afile", **Q)
    # a folder that is not a store is never deleted without overwrite
    junk = store_path("euler", "smoke", "test", tmp_path)
    junk.mkdir(parents=True)
    (junk / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="not a readable dataset store|not a hybrid_nbs dataset store"):
        build_dataset("euler", "smoke", "test", tmp_path, **Q)
    assert (junk / "notes.txt").read_text() == "mine"
    build_dataset("euler", "smoke", "test", tmp_path, progress=False, options=BuildOptions(workers=0, overwrite=True))
    assert not (junk / "notes.txt").exists()


def test_store_of_another_solver_is_refused_untouched(euler_smoke, monkeypatch, tmp_path):
    build_dataset("euler", "smoke", "val", tmp_path, **Q)
    path = store_path("euler", "smoke", "val", tmp_path)
    before = tree(path)
    with pytest.raises(ValueError, match=r"different configuration or solver \(config"):
        build_dataset(make_env("euler", "smoke", cfl=0.3), "smoke", "val", tmp_path, **Q)
    import hybrid_nbs.store
    from hybrid_nbs.envs.euler import Euler
    monkeypatch.setattr(hybrid_nbs.store, "solver_hash", lambda env: "0" * 64)  # where a store's identity is made
    exact = Euler.rollout  # what makes the stored frames
    # other solver code that makes other frames (here 0.1% more of everything): refused, nothing touched
    monkeypatch.setattr(Euler, "rollout", lambda self, s, p, n: (exact(self, s, p, n) * 1.001).astype(np.float32))
    with pytest.raises(ValueError, match=r"solver_hash: stored '.*' != current '0000"):
        build_dataset("euler", "smoke", "val", tmp_path, **Q)
    assert tree(path) == before
    # other solver code (an edit elsewhere in the module) that still makes these frames: accepted, the new hash recorded
    monkeypatch.setattr(Euler, "rollout", exact)
    build_dataset("euler", "smoke", "val", tmp_path, **Q)
    assert open_store(path).attrs["solver_hash"] == "0" * 64
    with pytest.raises(ValueError, match="other solver code"):
        PairDataset(path, solver_hash="1" * 64)


def test_corrupt_chunk_is_named_and_repaired(euler_smoke, tmp_path):
    build_dataset("euler", "smoke", "train", tmp_path, **Q)
    path = store_path("euler", "smoke", "train", tmp_path)
    good = tree(path)
    shard = path / "states" / "c" / "1" / "0" / "0" / "0" / "0"
    data = shard.read_bytes()
    shard.write_bytes(data[:100] + bytes(64) + data[164:])  # flip bytes inside the first frame's chunk
    with pytest.raises(ValueError, match=rf"{path}: trajectory 1 is corrupt.*verify=True"):
        read_trajectory(open_store(path), 1)
    shard.write_bytes(data[: len(data) // 2])  # truncated
    ds = PairDataset(path, n_pairs=64)
    with pytest.raises(ValueError, match="trajectory 1 is corrupt or truncated"):
        ds[int(np.flatnonzero(ds.pairs[:, 0] == 1)[0])]
    (rec,) = build_dataset("euler", "smoke", "train", tmp_path, progress=False, options=BuildOptions(workers=0, verify=True))
    assert rec["repaired"] == 1 and tree(path) == good


def test_data_main_card_and_norm(tmp_path):
    recs = data_main("balls", "smoke", "all", root=tmp_path, progress=False, options=BuildOptions(workers=0))
    assert [r["split"] for r in recs] == list(SPLITS)
    folder = store_path("balls", "smoke", "train", tmp_path).parent
    card = (folder / "card.md").read_text()
    assert "Parameter ranges per split" in card and "ood_far" in card and (folder / "card.png").stat().st_size > 1000
    norm = load_norm("balls", "smoke", tmp_path)
    x = open_store(folder / "train.zarr")["states"][...].astype(np.float64)
    assert np.allclose(norm["state_mean"], x.mean(axis=(0, 1, 2))) and len(norm["delta_std"]) == 9
    assert write_card("balls", "smoke", tmp_path).read_text() == card  # regenerated, identical


def test_pair_dataset_with_worker_processes(euler_smoke):
    path = store_path("euler", "smoke", "train", euler_smoke)
    ds = PairDataset(path, n_pairs=32, mode="continuous")
    _ = ds[0]  # the parent has opened the store before the workers fork
    loader = torch.utils.data.DataLoader(ds, batch_size=8, num_workers=2)
    batches = list(loader)
    s = torch.cat([b[0] for b in batches])
    states = open_store(path)["states"]
    i, t0, h = ds.pairs[5]
    assert s.shape == (32, 4, 32, 32) and s.dtype == torch.float32
    assert np.array_equal(s[5].numpy(), states[i, t0]) and np.array_equal(batches[0][1][5].numpy(), states[i, t0 + h])


def test_incomplete_store_refused_by_dataset(tmp_path):
    with pytest.raises(RuntimeError):
        build_dataset("balls", "smoke", "train", tmp_path, progress=False, options=BuildOptions(workers=0, _fail_at=(1, "raise")))
    with pytest.raises(ValueError, match="incomplete .1 of 4"):
        PairDataset(store_path("balls", "smoke", "train", tmp_path))
    with pytest.raises(ValueError, match=r"no val split at .*hnwm data --env balls --profile smoke --split val"):
        PairDataset(store_path("balls", "smoke", "val", tmp_path))


def test_local_cluster_prints_no_port_warning():
    "With port 8787 taken (any other Dask cluster on the machine), a local cluster must not warn into the notebook."
    import socket
    import warnings

    from hybrid_nbs.data import dask_client
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", 8787))
            s.listen(1)
        except OSError:
            pass  # taken already: the very case under test
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with dask_client(workers=1) as client:
                assert client.submit(int, "7").result() == 7
    assert not [str(w.message) for w in caught if "already in use" in str(w.message)]


@pytest.mark.parametrize("name", ["oregonator", "euler", "balls"])
def test_resolving_a_stored_start_reproduces_its_target(name, tmp_path):
    "Mode 2's solver paths, from stored frame t0 for h frames, give the stored frame t0 + h (issue 35): bit for bit."
    from hybrid_nbs.hybrid import HybridSimulator, _solve
    from hybrid_nbs.model import build_model, model_config_for
    env = make_env(name, "smoke")
    build_dataset(env, "smoke", "test", tmp_path, **Q)
    g = open_store(store_path(env, "smoke", "test", tmp_path), complete=True)
    frames, params = g["states"][...], stored_params(env, g)
    T, axes = frames.shape[1], (0, 1, 3, 4) if layout_of(env) == "grid" else (0, 1, 2)
    vectors = read_meta(g, "params")
    model = build_model(model_config_for(env, "smoke"), env,
                        norm=dict(state_mean=frames.mean(axis=axes), state_std=frames.std(axis=axes) + 1e-3, param_mean=vectors.mean(0), param_std=vectors.std(0) + 1.0), max_horizon=T - 1)
    sim = HybridSimulator(env, model, extrapolate=True)  # untrained; h = 1 steps 0.5 frames
    for t0, h in [(0, 1), (0, 4), (3, 8), (8, 16), (T - 9, 8), (0, T - 1)]:  # the last: the longest the store holds
        starts, targets = frames[:, t0], frames[:, t0 + h]
        res = sim.mode2(starts, params, h, threshold=-np.inf)
        assert res.deferred.all() and not res.failed.any(), res.errors
        dask_path = np.stack([_solve(env, s, q, h)[0] for s, q in zip(starts, params)])  # what a Dask worker runs
        for got in (res.prediction, dask_path):
            d = np.abs(got - targets).reshape(len(got), -1).max(1) / np.abs(targets).reshape(len(got), -1).max(1)
            assert d.max() <= 1e-6, f"t0={t0}, h={h}: relative difference {d.max():.2e}"
            np.testing.assert_array_equal(got, targets, err_msg=f"t0={t0}, h={h}: not bit for bit")
