"""Issue 41, item 2: a profile stores its training splits as float16, read back as float32; the dtype is refused on mismatch."""
import dataclasses

import numpy as np
import pytest
import torch

from hybrid_nbs import data
from hybrid_nbs.core import get_profile
from hybrid_nbs.data import BuildOptions, build_dataset, store_bytes
from hybrid_nbs.held_out import load_split
from hybrid_nbs.pairs import PairSource
from hybrid_nbs.paths import store_path
from hybrid_nbs.store import open_store, read_trajectory

SMOKE = get_profile("smoke")
HALF = dataclasses.replace(SMOKE, half_splits=("train", "val"))  # the smoke sizes, stored as the paper profile stores them
ONE = BuildOptions(workers=0, sizes=dict(train=4, val=2))


@pytest.fixture(scope="module")
def roots(tmp_path_factory):
    "The smoke Euler train and val splits built twice: float32 (the smoke profile) and float16 (`HALF`)."
    out = {}
    for name, prof in (("f32", SMOKE), ("f16", HALF)):
        out[name] = tmp_path_factory.mktemp(name)
        for split in ("train", "val"):
            build_dataset("euler", prof, split, out[name], progress=False, options=ONE)
    return out


def test_float16_frames_are_the_float32_frames_rounded_in_half_the_bytes(roots):
    a, b = (open_store(store_path("euler", "smoke", "train", roots[k]), complete=True) for k in ("f32", "f16"))
    assert (a["states"].dtype, b["states"].dtype) == (np.float32, np.float16)
    for i in range(a["states"].shape[0]):  # the same trajectories, each frame rounded once from the float32 frame
        np.testing.assert_array_equal(read_trajectory(b, i), read_trajectory(a, i).astype(np.float16))
    ratio = store_bytes(store_path("euler", "smoke", "train", roots["f32"]) / "states") / \
        store_bytes(store_path("euler", "smoke", "train", roots["f16"]) / "states")
    assert 1.5 < ratio < 3.0, ratio  # about half the bytes (compression differs a little between the two)


def test_training_reads_float16_back_as_float32(roots):
    pairs = np.array([[0, 0, 1], [1, 3, 8], [3, 2, 4]])
    for memory_gb in (4.0, 0.0):  # the split in memory, and read batch by batch from the store
        (x16, y16, *_), = PairSource(store_path("euler", "smoke", "train", roots["f16"]), memory_gb).batches(pairs, 3)
        (x32, y32, *_), = PairSource(store_path("euler", "smoke", "train", roots["f32"]), memory_gb).batches(pairs, 3)
        assert x16.dtype == y16.dtype == torch.float32
        torch.testing.assert_close(x16, x32.half().float(), rtol=0, atol=0)
        torch.testing.assert_close(y16, y32.half().float(), rtol=0, atol=0)


def test_a_store_of_the_other_dtype_is_refused(roots):
    with pytest.raises(ValueError, match="holds float16 frames, but float32 ones are expected: the smoke profile stores "
                                         "train as float32"):
        build_dataset("euler", SMOKE, "train", roots["f16"], progress=False, options=ONE)  # resuming it
    with pytest.raises(ValueError, match="holds float32 frames, but float16 ones are expected"):
        build_dataset("euler", HALF, "train", roots["f32"], progress=False, options=ONE)
    with pytest.raises(ValueError, match="holds float16 frames, but float32 ones are expected: the scored pairs are re-solved"):
        load_split("euler", "smoke", "val", [2], roots["f16"])  # a held-out reader takes float32 stores only


def test_a_trajectory_float16_would_blur_is_refused_before_it_is_written(tmp_path, monkeypatch):
    monkeypatch.setattr(data, "HALF_BOUND", 1e-9)  # any rounding is too much: every trajectory exceeds it
    with pytest.raises(RuntimeError, match=r"float16 would round its frames by .* of a channel.s spread .*store this split as float32"):
        build_dataset("euler", HALF, "train", tmp_path, progress=False, options=ONE)
    g = open_store(store_path("euler", "smoke", "train", tmp_path))
    assert not g["done"][...].any()  # nothing half-written is marked done


def test_only_training_splits_may_be_float16():
    with pytest.raises(ValueError, match="half_splits may name only"):
        dataclasses.replace(SMOKE, half_splits=("train", "calib"))
    assert get_profile("paper").half_splits == ("train", "val") and get_profile("laptop").half_splits == ()
