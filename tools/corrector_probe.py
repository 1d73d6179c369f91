"""A look at the corrected coarse solve before its sweep: one seed per coarsening factor, on the val plane only.

The corrector's study (`nbs/experiments/corrector*.ipynb`, in `make study`) trains the factors and sizes this probe
leaves in the running, three seeds each, and touches test once for its pick. This probe trains seed 0 of the default size for each factor asked
(one thread, checkpoints `ckpt/probe-k<k>-seed0`), then places them and the environment's default surrogate (seed 0,
trained first if missing) on the **val** accuracy-cost plane at the longest trained horizon beside every solver
setting: error, CPU time per trajectory at batch 1 and 32 on one thread, the equal-cost error ratio against the
solver front, and the equal-accuracy speedup (`speed.equal_accuracy_speedup`: the front's cost at the same error). No interval: one seed.

    python tools/corrector_probe.py train euler 2,4,8 --root data      # one process per factor list (a lane)
    python tools/corrector_probe.py plane euler 2,4,8 --root data      # on a quiet machine: it times

Results go to `<out>/<profile>_<env>_<phase>.json` (default out: the current folder).
"""
import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np


def train_probes(env: str, profile, root: Path | None, factors: list[int]) -> dict:
    "Train (or resume) seed 0 of the default-size corrector at each factor; its best val MSE and what it cost."
    from hybrid_nbs.checkpoint import load_model
    from hybrid_nbs.train import TrainOptions, train, train_config_for
    out = {}
    for k in factors:
        t = time.perf_counter()
        r = train(env, profile, seed=0, root=root, config=train_config_for(env, profile.name, coarse_factor=k),
                  progress=False, options=TrainOptions(run=f"probe-k{k}-seed0", threads=1))
        coarse = load_model(Path(r["ckpt"]) / "best")[1]["coarse"]
        out[k] = dict(wall_s=round(time.perf_counter() - t, 1), best_val=r["best_val"], train_seconds=r["train_seconds"],
                      cache_seconds=coarse.get("cache_seconds"), failed_starts=coarse["failed_starts"])
        print(env, f"k={k}", out[k], flush=True)
    return out


def plane(env_name: str, profile, root: Path | None, factors: list[int], repeats: int) -> dict:
    "Every probe and the default surrogate on the val plane at the longest trained horizon, one thread."
    from hybrid_nbs.checkpoint import load_model
    from hybrid_nbs.envs import make_env
    from hybrid_nbs.evaluate import design_for, load_split
    from hybrid_nbs.paths import ckpt_dir
    from hybrid_nbs.pipeline import train_main
    from hybrid_nbs.speed import accuracy_cost_plane, equal_accuracy_speedup, equal_cost_error_ratio, pareto_front
    env = make_env(env_name, profile)
    train_main(env_name, profile.name, seed=0, root=root, threads=1, progress=False)  # resumes: nothing once trained
    models = {f"k{k}": [load_model(ckpt_dir(env, profile.name, root=root, run=f"probe-k{k}-seed0") / "best")[0]]
              for k in factors}
    models["surrogate"] = [load_model(ckpt_dir(env, profile.name, 0, root) / "best")[0]]
    h = design_for(env, models["surrogate"][0], profile, root)["h_max"]
    val, calib = load_split(env, profile, "val", [h], root), load_split(env, profile, "calib", [h], root)
    rows = [r for r in accuracy_cost_plane(env, models, val, calib, deferrals=(), batch_sizes=(1, 32),
                                           repeats=repeats)["rows"] if r.get("h") == h]
    solver = [dict(method=r["method"], cpu=float(np.mean(r["cpu"])), error=float(np.mean(r["error"])))
              for r in rows if r["kind"] == "solver" and r["status"] == "ok"]
    cost, err = np.array([s["cpu"] for s in solver]), np.array([s["error"] for s in solver])
    front = pareto_front(cost, err)
    out = dict(h=h, n_val=len(val.states), solver=solver, models=[])
    for r in rows:
        if r["kind"] == "solver":
            continue
        e, c = float(np.nanmean(r["error"])), float(np.mean(r["cpu"]))
        ratio, kind = equal_cost_error_ratio(cost[front], err[front], e, c)
        speedup, s_kind = equal_accuracy_speedup(cost, err, e, c)  # the front's cost at this error, as the ledger's
        out["models"].append(dict(method=r["method"], error=e, cpu=c, ratio=ratio, ratio_kind=kind, speedup=speedup,
                                  speedup_kind=s_kind))
        print(f"{env_name} {r['method']}: val error {e:.3g}, {1e3 * c:.2f} ms per trajectory, equal-cost error ratio "
              f"{ratio:.3g} ({kind}), equal-accuracy speedup {speedup:.3g}x ({s_kind})", flush=True)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("phase", choices=("train", "plane"))
    p.add_argument("env", help="a grid environment that offers coarsening")
    p.add_argument("factors", help="coarsening factors, comma-separated (e.g. 2,4,8)")
    p.add_argument("--profile", default=None, help="default: $HYBRID_NBS_PROFILE")
    p.add_argument("--root", type=Path, default=None, help="the data folder (default the project's data/)")
    p.add_argument("--repeats", type=int, default=3, help="warm interleaved calls per timed job (plane)")
    p.add_argument("--out", type=Path, default=Path("."), help="where the JSON goes")
    a = p.parse_args(argv)
    from hybrid_nbs.coarse import check_coarsenable
    from hybrid_nbs.core import get_profile, set_threads
    from hybrid_nbs.envs import make_env
    prof = get_profile(a.profile)
    check_coarsenable(make_env(a.env, prof))
    factors = [int(k) for k in a.factors.split(",")]
    set_threads(1)
    res = (train_probes(a.env, prof, a.root, factors) if a.phase == "train"
           else plane(a.env, prof, a.root, factors, a.repeats))
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / f"{prof.name}_{a.env}_{a.phase}.json").write_text(json.dumps(res, indent=1, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())
