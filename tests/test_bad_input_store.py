"""Hostile inputs at the data layer (issue 36): a Dask scheduler address that accepts TCP but never speaks Dask, or
answers with junk, and stores copied onto another split's path."""
import shutil
import socket
import threading
import time

import pytest

from hybrid_nbs.data import BuildOptions, CONNECT_SECONDS, build_dataset, dask_client
from hybrid_nbs.store import open_store
from hybrid_nbs.paths import store_path


def _peer(reply: bytes):
    "A TCP server on a free port that accepts every connection and sends `reply` (nothing: b'') without closing."
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    held = []

    def serve():
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            held.append(c)  # kept open: a silent peer never hangs up
            if reply:
                c.sendall(reply)
    threading.Thread(target=serve, daemon=True).start()
    return srv, f"tcp://127.0.0.1:{srv.getsockname()[1]}"


@pytest.mark.slow  # over 10 s in CI (`make test --durations`)
@pytest.mark.parametrize("reply", [b"", b"\xff" * 64], ids=["silent", "junk"])
def test_a_scheduler_that_does_not_speak_dask_is_named_within_the_timeout(reply):
    # before: the silent peer hung `hnwm data` for ever (500 s in the issue), the junk one raised a raw MemoryError
    srv, addr = _peer(reply)
    t = time.perf_counter()
    try:
        with pytest.raises(ValueError, match=f"cannot reach the Dask scheduler at {addr}"):
            with dask_client(addr):
                pass
    finally:
        srv.close()
    assert time.perf_counter() - t < CONNECT_SECONDS + 10


@pytest.mark.parametrize("source, target", [("calib", "train"), ("ood_far", "test")])
def test_a_store_copied_over_another_split_is_refused(tmp_path, source, target):
    # before: `hnwm train` trained on calib, and `hnwm evaluate` reported OOD-far as test, both with rc 0
    build_dataset("balls", "smoke", source, tmp_path, progress=False, options=BuildOptions(workers=0))
    shutil.copytree(store_path("balls", "smoke", source, tmp_path), store_path("balls", "smoke", target, tmp_path))
    with pytest.raises(ValueError, match=f"split: recorded '{source}', path says '{target}'"):
        open_store(store_path("balls", "smoke", target, tmp_path), complete=True)


def test_a_failed_write_names_the_file_and_leaves_nothing_half_written(tmp_path, monkeypatch):
    # before: "No space left on device" with no file named, and a records_*.partial.npz left behind
    import errno
    from pathlib import Path

    import numpy as np

    from hybrid_nbs.records import save_records
    target = tmp_path / "eval" / "records_seed0_test.npz"
    save_records(target, {"error": np.ones(3)}, {"split": "test"})
    before = target.read_bytes()

    def full(self, data):
        self.write_text("half")  # the bytes that did land before the disk filled
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(Path, "write_bytes", full)
    with pytest.raises(OSError, match="No space left on device") as e:
        save_records(target, {"error": np.zeros(3)}, {"split": "test"})
    assert e.value.filename == str(target)
    assert sorted(p.name for p in target.parent.iterdir()) == [target.name] and target.read_bytes() == before


def test_what_a_user_module_prints_stays_out_of_the_json_lines(tmp_path):
    # before: the module's import-time print landed on stdout between hnwm data's JSON records
    import json
    import subprocess
    import sys
    from pathlib import Path
    (tmp_path / "noisy_env.py").write_text("from hybrid_nbs.envs.balls import Balls\n"
                                           "print('loading the noisy simulator')\n\n\n"
                                           "class Noisy(Balls):\n    name = 'noisy'\n")
    r = subprocess.run([Path(sys.executable).with_name("hnwm"), "data", "--env", "noisy_env:Noisy", "--profile", "smoke",
                        "--split", "val", "--workers", "0", "--root", str(tmp_path / "data")],
                       cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert [json.loads(line)["split"] for line in r.stdout.splitlines()] == ["val"]
    assert "loading the noisy simulator" in r.stderr


def test_a_simulator_that_ends_on_nan_is_not_stored_as_finished(tmp_path):
    # before: a NaN last frame was marked done, then reported at training as disk corruption with advice (--verify)
    # that cannot help
    import numpy as np

    from hybrid_nbs.envs.balls import Balls

    class LastFrameNaN(Balls):
        name = "last_frame_nan"

        def rollout(self, state, params, n_frames):  # blows up late: check_env's short rollouts pass
            x = super().rollout(state, params, n_frames)
            if n_frames > 8:
                x[-1] = np.nan
            return x
    with pytest.raises(RuntimeError, match=r"returned a non-finite frame \d+ of \d+ on trajectory 0 .*fix the simulator, then"):
        build_dataset(LastFrameNaN(), "smoke", "val", tmp_path, progress=False, options=BuildOptions(workers=0))
    g = open_store(store_path("last_frame_nan", "smoke", "val", tmp_path))
    assert not g["done"][...].any()
