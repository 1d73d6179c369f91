"""Issue 36, training side: a kill between the checkpoint saves, leftovers of a save, a numpy seed, a damaged
norm.json, a changed epoch count and a checkpoint of another seed; and a run killed anywhere resumes bit for bit."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys

import numpy as np
import pytest

import hybrid_nbs.train as train_mod
from hybrid_nbs.card import load_norm
from hybrid_nbs.checkpoint import CONFIG_FILE, MODEL_FILE, load_model, read_checkpoint
from hybrid_nbs.cli import main
from hybrid_nbs.paths import ckpt_dir, norm_path
from hybrid_nbs.train import TrainOptions, train
from hybrid_nbs.train_config import TrainConfig, train_config_for
from toys import smoke_root

Q = dict(progress=False)


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return smoke_root(tmp_path_factory, ("balls",))


@pytest.fixture(scope="module")
def reference(root):
    "An uninterrupted smoke run (every epoch of it improves the validation loss, so `best` is saved each epoch)."
    res = train("balls", "smoke", seed=0, root=root, **Q, options=TrainOptions(threads=1, run="ref"))
    assert res["best_epoch"] == 3 and [h["epoch"] for h in res["history"]] == [1, 2, 3]
    return ckpt_dir("balls", "smoke", root=root, run="ref")


def _snapshot(run):
    "`best` and `last` of a run folder, file by file, without the wall-clock fields and its name; and what the folder holds."
    out = {}
    for kind in ("best", "last"):
        for f in sorted((run / kind).iterdir()) if (run / kind).is_dir() else []:
            if f.name == CONFIG_FILE:
                cfg = json.loads(f.read_text())
                cfg.pop("sha256")  # a digest that covers the times below
                cfg["train"].pop("seconds"), cfg["train"].pop("run")  # the run's folder name differs by construction
                for h in cfg["train"]["history"]:
                    h.pop("seconds"), h.pop("load_1min")
                out[f"{kind}/{f.name}"] = cfg
            else:
                out[f"{kind}/{f.name}"] = f.read_bytes()
    out["folder"] = sorted(p.name for p in run.iterdir())
    return out


class _Crash(Exception):
    "What a kill leaves, in-process: nothing after the raising call runs."


def _crash_at(monkeypatch, kind, epoch):
    "Make the save of checkpoint `kind` at `epoch` crash before it writes anything."
    real = train_mod.save_checkpoint

    def save(folder, model, meta, optimizer=None):
        if folder.name == kind and meta["epoch"] == epoch:
            raise _Crash(f"killed before saving {kind} at epoch {epoch}")
        return real(folder, model, meta, optimizer)
    monkeypatch.setattr(train_mod, "save_checkpoint", save)


# 1. `best` lost between saving `last` and saving `best`: the resumed (or finished) run rebuilds it from `last`
def test_best_lost_between_last_and_best_is_rebuilt(root, reference, monkeypatch):
    run = ckpt_dir("balls", "smoke", root=root, run="lost-best")
    for epoch in (1, 3):  # the first best (then missing), and the last one (then stale: epoch 2's)
        shutil.rmtree(run, ignore_errors=True)
        with monkeypatch.context() as m:
            _crash_at(m, "best", epoch)
            with pytest.raises(_Crash):
                train("balls", "smoke", seed=0, root=root, **Q, options=TrainOptions(threads=1, run="lost-best"))
        assert json.loads((run / "last" / CONFIG_FILE).read_text())["train"]["best_epoch"] == epoch
        res = train("balls", "smoke", seed=0, root=root, **Q, options=TrainOptions(threads=1, run="lost-best"))
        assert res["best_epoch"] == 3
        assert load_model(run / "best")[1]["epoch"] == 3
        assert _snapshot(run) == _snapshot(reference)


# 13. a leftover `best.old` (a kill between the two renames of a save) is recovered by the loader and by a finished train
def test_leftover_best_old_is_recovered(root, reference):
    want = (reference / "best" / MODEL_FILE).read_bytes()
    for who in ("loader", "train"):
        run = ckpt_dir("balls", "smoke", root=root, run=f"left-{who}")
        shutil.copytree(reference, run)
        os.replace(run / "best", run / "best.old")  # killed between `best -> best.old` and `best.partial -> best`
        shutil.copytree(run / "last", run / "best.partial")  # the new copy, never put in place
        if who == "loader":
            assert load_model(run / "best", env="balls", profile="smoke")[1]["epoch"] == 3
        else:
            assert train("balls", "smoke", seed=0, root=root, **Q, options=TrainOptions(threads=1, run=f"left-{who}"))["complete"]
        assert (run / "best" / MODEL_FILE).read_bytes() == want
        assert sorted(p.name for p in run.iterdir()) == ["best", "last"]
    run = ckpt_dir("balls", "smoke", root=root, run="left-after")
    shutil.copytree(reference, run)
    shutil.copytree(run / "best", run / "best.old")  # killed after the second rename, before the old copy was deleted
    load_model(run / "best")
    assert sorted(p.name for p in run.iterdir()) == ["best", "last"]


# 11. a numpy integer seed is an integer; a non-integer seed is refused before anything is written
def test_numpy_seed(root):
    res = train("balls", "smoke", seed=np.int64(2), root=root, **Q, options=TrainOptions(threads=1, run="np-seed", stop_after=1))
    run = ckpt_dir("balls", "smoke", root=root, run="np-seed")
    assert sorted(p.name for p in run.iterdir()) == ["best", "last"]
    assert type(res["seed"]) is int and read_checkpoint(run / "last")["meta"]["seed"] == 2
    for bad in (1.5, True, -1, "2"):
        with pytest.raises(ValueError, match="seed must be a non-negative integer"):
            train("balls", "smoke", seed=bad, root=root, **Q, options=TrainOptions(threads=1, run="np-bad"))
    assert not ckpt_dir("balls", "smoke", root=root, run="np-bad").exists()
    cfg = TrainConfig(epochs=np.int64(3), pairs_per_epoch=64, batch_size=16, lr=np.float32(1e-3), val_per_rung=4)
    assert type(cfg.epochs) is int and type(cfg.lr) is float
    json.dumps(cfg.to_dict())


def _copy_data(root, tmp_path):
    dst = tmp_path / "smoke" / "balls"
    shutil.copytree(root / "smoke" / "balls", dst, ignore=shutil.ignore_patterns("ckpt", "*.lock"))
    return dst


# 12. norm.json carries a checksum; a damaged, truncated, incomplete or missing one names itself and the command
def test_damaged_norm_json(root, tmp_path):
    _copy_data(root, tmp_path)
    path = norm_path("balls", "smoke", tmp_path)
    good = path.read_text()
    norm = json.loads(good)
    assert "sha256" in norm and load_norm("balls", "smoke", tmp_path)["state_std"] == norm["state_std"]
    fix = re.escape(f"`hnwm data --env balls --profile smoke --root {tmp_path}`")
    scaled = dict(norm, state_std=[s * 1000 for s in norm["state_std"]])
    no_std = {k: v for k, v in norm.items() if k != "state_std"}
    for content in (json.dumps(scaled), good[:81], json.dumps(no_std), None):
        if content is None:
            path.unlink()
        else:
            path.write_text(content)
        with pytest.raises(ValueError, match=re.escape(str(path)) + ".*" + fix):
            load_norm("balls", "smoke", tmp_path)
        with pytest.raises(ValueError, match=re.escape(str(path)) + ".*" + fix):
            train("balls", "smoke", root=tmp_path, **Q, options=TrainOptions(threads=1))
        assert not (tmp_path / "smoke" / "balls" / "ckpt" / "seed0").exists()  # refused before any epoch
    assert main(["data", "--env", "balls", "--profile", "smoke", "--root", str(tmp_path), "--workers", "0"]) == 0
    assert load_norm("balls", "smoke", tmp_path)["state_std"] == norm["state_std"]


# a. another epoch count on a trained run: the schedule depends on it, so the run is not continued under another one
def test_other_epoch_count_is_refused(root):
    train("balls", "smoke", seed=7, root=root, **Q, options=TrainOptions(threads=1))
    run = ckpt_dir("balls", "smoke", 7, root)
    before = _snapshot(run)
    for epochs in (5, 2):
        with pytest.raises(ValueError, match=f"3-epoch schedule, not {epochs}.*--no-resume"):
            train("balls", "smoke", seed=7, root=root, config=train_config_for("balls", "smoke", epochs=epochs), **Q,
                  options=TrainOptions(threads=1))
    assert main(["train", "--env", "balls", "--profile", "smoke", "--root", str(root), "--seed", "7", "--epochs", "5",
                 "--no-progress"]) == 1
    assert _snapshot(run) == before
    fresh = train("balls", "smoke", seed=7, root=root, config=train_config_for("balls", "smoke", epochs=5), **Q,
                  options=TrainOptions(threads=1, resume=False))
    assert fresh["epochs"] == 5 and [h["epoch"] for h in fresh["history"]] == [1, 2, 3, 4, 5]


# b. a checkpoint of seed 4 copied into seed 3's folder is refused by training and by the loader, naming both seeds
def test_checkpoint_of_another_seed(root):
    train("balls", "smoke", seed=4, root=root, **Q, options=TrainOptions(threads=1))
    shutil.copytree(ckpt_dir("balls", "smoke", 4, root), ckpt_dir("balls", "smoke", 3, root))
    with pytest.raises(ValueError, match="seed 4, not seed 3"):
        train("balls", "smoke", seed=3, root=root, **Q, options=TrainOptions(threads=1))
    for kind in ("best", "last"):
        with pytest.raises(ValueError, match="seed 4, not seed 3"):
            load_model(ckpt_dir("balls", "smoke", 3, root) / kind)
    load_model(ckpt_dir("balls", "smoke", 4, root) / "best")


# A run SIGKILLed at 20 points (after every rename of every save, after each config.json is written, in the middle
# of a file and in the middle of an epoch), then run again, ends with the bytes of an uninterrupted run.
CHILD = r"""
import json, os, signal, sys
from pathlib import Path
import hybrid_nbs.checkpoint as ck
import hybrid_nbs.train as tr

root, run, target, log = sys.argv[1:5]  # target: "<n>" kills after event n, "torn:<n>" in the n-th write, "val:<n>"
events, writes, vals = [], [0], [0]


def event(what, path):
    events.append(f"{what} {Path(path).name}")
    if target == str(len(events)):
        os.kill(os.getpid(), signal.SIGKILL)


class _Os:  # the checkpoint module's os and shutil: every rename and removal is an event
    def __init__(self, mod, name):
        self.mod, self.name = mod, name

    def __getattr__(self, k):
        f = getattr(self.mod, k)
        if (self.name, k) not in (("os", "replace"), ("shutil", "rmtree")):
            return f
        def wrapped(path, *a, **kw):
            out = f(path, *a, **kw)
            event(k, a[0] if k == "replace" else path)
            return out
        return wrapped


real_write = ck._write
def write(path, data):
    writes[0] += 1
    if target == f"torn:{writes[0]}":
        Path(path).write_bytes(data[: len(data) // 2])  # half a file on disk
        os.kill(os.getpid(), signal.SIGKILL)
    real_write(path, data)
    event("write", path)


real_validate = tr.validate
def validate(*a, **kw):
    vals[0] += 1
    if target == f"val:{vals[0]}":
        os.kill(os.getpid(), signal.SIGKILL)
    return real_validate(*a, **kw)


ck.os, ck.shutil, ck._write, tr.validate = _Os(ck.os, "os"), _Os(ck.shutil, "shutil"), write, validate
tr.train("balls", "smoke", seed=0, root=root, progress=False, options=tr.TrainOptions(run=run, threads=1))
Path(log).write_text(json.dumps(events))
"""


def _child(root, run, target, log):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    return subprocess.run([sys.executable, "-c", CHILD, str(root), run, target, str(log)], env=env,
                          capture_output=True, text=True, timeout=120)


def _kill_points(events):
    "20 kill points: after every rename, after every config.json, a torn model and config file, two mid-epoch kills."
    renames = [str(i + 1) for i, e in enumerate(events) if e.startswith("replace")]
    configs = [str(i + 1) for i, e in enumerate(events) if e == f"write {CONFIG_FILE}"]
    writes = [e for e in events if e.startswith("write")]
    torn = [f"torn:{writes.index(f'write {MODEL_FILE}') + 1}", f"torn:{len(writes) // 2 + 1}"]
    return renames + configs + torn + ["val:1", "val:2"]


@pytest.mark.slow  # over 10 s in CI (`make test --durations`)
def test_kill_anywhere_resumes_bit_identical(root, tmp_path):
    r = _child(root, "kill-ref", "0", tmp_path / "events.json")
    assert r.returncode == 0, r.stderr[-3000:]
    events = json.loads((tmp_path / "events.json").read_text())
    ref = _snapshot(ckpt_dir("balls", "smoke", root=root, run="kill-ref"))
    points = _kill_points(events)
    assert len(points) == 20 and len(set(points)) == 20, points
    same = []
    for k, point in enumerate(points):
        run = f"kill-{k}"
        r = _child(root, run, point, tmp_path / f"{run}.json")
        assert r.returncode == -signal.SIGKILL, (point, r.returncode, r.stderr[-3000:])
        res = train("balls", "smoke", seed=0, root=root, **Q, options=TrainOptions(threads=1, run=run))
        assert res["complete"] and res["best_epoch"] == 3
        same.append(_snapshot(ckpt_dir("balls", "smoke", root=root, run=run)) == ref)
    assert sum(same) == 20, [p for p, s in zip(points, same) if not s]


def test_a_full_disk_while_saving_names_the_checkpoint_and_changes_nothing(tmp_path, monkeypatch):
    # before: "No space left on device" with no file named, and a `<name>.partial` folder left behind
    import errno

    import hybrid_nbs.checkpoint as ck
    import numpy as np

    from hybrid_nbs.envs import make_env
    from hybrid_nbs.model import build_model, model_config_for
    env = make_env("balls", "smoke")
    n_p = len(env.param_vector(env.sample_params(np.random.default_rng(0), "train")))
    model = build_model(model_config_for(env, "smoke"), env,
                        norm=dict(state_mean=np.zeros(env.state_shape[-1]), state_std=np.ones(env.state_shape[-1]), param_mean=np.zeros(n_p), param_std=np.ones(n_p)))
    ck.save_checkpoint(tmp_path / "last", model, {"epoch": 1})
    before = {f.name: f.read_bytes() for f in (tmp_path / "last").iterdir()}

    def full(path, data):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(ck, "_write", full)
    with pytest.raises(OSError, match="No space left on device") as e:
        ck.save_checkpoint(tmp_path / "last", model, {"epoch": 2})
    assert e.value.filename == str(tmp_path / "last")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["last"]
    assert {f.name: f.read_bytes() for f in (tmp_path / "last").iterdir()} == before
