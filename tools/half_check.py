"""float16 training stores against float32 ones: does storing train and val as float16 move the results?

For each environment it builds a copy of the data whose train and val splits are float16 (`Profile.half_splits`),
trains the same seeds on it that the float32 folder holds (training them there first if they are missing), and scores
both sets of checkpoints on the float32 test split at four start frames and three horizons, in one normalisation
(the float32 seed 0's). Training is on one thread, so each run is bit-for-bit the one a job's lane makes.

    python tools/half_check.py --profile laptop --root data --out /tmp/half euler oregonator balls

It prints, per environment, the best val MSE and the mean test error of each seed under both dtypes and the
difference of their seed means in units of the float32 seeds' standard deviation, and writes them to
`<out>/half_check.json`. The `Profile.half_splits` setting is meant to leave that difference within the seed spread.
"""
import argparse
import dataclasses
import json
import sys
from pathlib import Path

import numpy as np

HORIZONS, STARTS = (4, 16, 64), (0, 16, 32, 48)


def _best(env: str, prof, root: Path, seed: int):
    "The best checkpoint of `seed` under `root`, trained first (one thread, resuming) when it is missing."
    from hybrid_nbs.checkpoint import load_model
    from hybrid_nbs.paths import ckpt_dir
    from hybrid_nbs.train import TrainOptions, train
    train(env, prof, seed=seed, root=root, progress=False, options=TrainOptions(threads=1))
    return load_model(ckpt_dir(env, prof.name, seed, root) / "best")


def check(env: str, profile: str, root: Path, out: Path, seeds: list[int]) -> dict:
    "Train `seeds` on float16 train/val stores under `out` and score them beside the float32 ones of `root`."
    import torch

    from hybrid_nbs.card import write_card
    from hybrid_nbs.core import get_profile
    from hybrid_nbs.data import BuildOptions, build_dataset
    from hybrid_nbs.held_out import load_split
    from hybrid_nbs.paths import store_path
    from hybrid_nbs.store import open_store
    from hybrid_nbs.units import trajectory_error
    torch.set_num_threads(1)
    full = get_profile(profile)
    if full.half_splits:
        raise SystemExit(f"the {profile} profile already stores {full.half_splits} as float16: compare it with a copy "
                         "whose half_splits is empty instead")
    half = dataclasses.replace(full, half_splits=("train", "val"))
    build_dataset(env, half, "all", out, progress=False, options=BuildOptions(workers=0))
    write_card(env, half, out)  # and norm.json, from the float16 train split
    runs = {"float32": [_best(env, full, root, s) for s in seeds], "float16": [_best(env, half, out, s) for s in seeds]}
    ref = runs["float32"][0][0]
    horizons = [h for h in HORIZONS if h <= ref.config.max_horizon]  # the trained range (smoke: up to 16)
    n_frames = int(open_store(store_path(env, full, "test", root), complete=True).attrs["n_frames"])
    data = [load_split(env, full, "test", horizons, root, t0=t0) for t0 in STARTS if t0 + max(horizons) < n_frames]
    res = {}
    for dtype, models in runs.items():
        for model, meta in models:
            row = {"best_val": meta["best_val"]}
            for h in horizons:
                e = np.concatenate([trajectory_error(ref, model.predict(d.states, float(h), d.vectors), d.targets[h]) for d in data])
                row[f"test_h{h}"] = float(e.mean())
            res.setdefault(dtype, []).append(row)
    for key in res["float32"][0]:
        a = np.array([r[key] for r in res["float32"]]); b = np.array([r[key] for r in res["float16"]])
        sd = a.std(ddof=1) if len(a) > 1 else float("nan")
        print(f"{env} {key}: float32 {' / '.join(f'{v:.4g}' for v in a)}, float16 {' / '.join(f'{v:.4g}' for v in b)}; "
              f"seed means differ by {100 * (b.mean() - a.mean()) / a.mean():+.2f}% = {(b.mean() - a.mean()) / sd:+.2f} sd")
    return res


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("envs", nargs="+", help="registered environment names")
    p.add_argument("--profile", default="smoke", help="a profile whose stores are float32 (default smoke)")
    p.add_argument("--root", type=Path, required=True, help="the float32 data folder (built first if missing)")
    p.add_argument("--out", type=Path, required=True, help="a folder for the float16 copy, its trainings and the JSON")
    p.add_argument("--seeds", type=int, default=3, help="seeds 0..N-1 under both dtypes (default 3)")
    a = p.parse_args(argv)
    from hybrid_nbs.data import BuildOptions
    from hybrid_nbs.pipeline import data_main
    out = {}
    for env in a.envs:
        data_main(env, a.profile, "all", a.root, progress=False, options=BuildOptions(workers=0))  # in this process
        out[env] = check(env, a.profile, a.root, a.out, list(range(a.seeds)))
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "half_check.json").write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
