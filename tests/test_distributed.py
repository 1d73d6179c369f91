"""Issue 41, item 3: the held-out evaluation fanned out over a Dask cluster gives the same records, bit for bit."""
import concurrent.futures

import numpy as np
import pytest

from hybrid_nbs.baselines import check_ensemble
from hybrid_nbs.card import load_norm
from hybrid_nbs.data import dask_client
from hybrid_nbs.envs import make_env
from hybrid_nbs import evaluate
from hybrid_nbs.evaluate import SCORED, EvalOptions, baseline_resources, design_for, evaluate_env, load_starts
from hybrid_nbs.held_out import eval_design
from hybrid_nbs.model import build_model, model_config_for
from hybrid_nbs.paths import eval_path
from hybrid_nbs.records import load_records
from toys import smoke_root


@pytest.mark.slow  # a two-worker local cluster and every baseline at smoke
def test_evaluation_on_a_local_cluster_is_bit_identical(tmp_path_factory):
    root = smoke_root(tmp_path_factory)
    env, norm = make_env("euler", "smoke"), load_norm("euler", "smoke", root)
    members = check_ensemble([build_model("unet-smoke", env,
                                          norm=dict(state_mean=norm["state_mean"], state_std=norm["state_std"], param_mean=[1.4], param_std=[1.0]), seed=s).eval()
                              for s in range(3)])
    design = eval_design(16, 17, 33, n_starts=2)
    calib = load_starts(env, "smoke", "calib", design, root)
    resources, _ = baseline_resources(env, members, "smoke", design, calib, root, alpha=0.2)
    here = evaluate_env(env, members[0], "smoke", root, resources=resources, options=EvalOptions(n_starts=2, save=False))
    with dask_client(None, 2) as client:
        there = evaluate_env(env, members[0], "smoke", root, resources=resources,
                             options=EvalOptions(n_starts=2, save=False, client=client))
    assert there["n"] == here["n"] and there["model"] == here["model"]
    for split in ("calib", *SCORED):
        a, b = here["records"][split], there["records"][split]
        assert sorted(a) == sorted(b), split
        for k in a:  # every column, NaNs in the same places
            np.testing.assert_array_equal(a[k], b[k], err_msg=f"{split}: {k}")
    assert there["mode2"] == here["mode2"]
    assert set(there["seconds_per_traj"]["test"]) == set(here["seconds_per_traj"]["test"])  # timings: the same baselines


@pytest.mark.slow  # about 10 s: the Dask connect timeout runs out
def test_an_unreachable_scheduler_is_named(tmp_path):
    from hybrid_nbs.pipeline import evaluate_main
    with pytest.raises(ValueError, match="cannot reach the Dask scheduler"):
        evaluate_main("euler", "smoke", root=tmp_path, scheduler="tcp://127.0.0.1:9")


class _SchedulerLostFrom:
    "A Dask client stand-in whose scheduler goes away when the tasks of split `split` come: they fail as lost ones do."

    def __init__(self, split: str):
        self.split, self.submitted, self.lost = split, [], False

    def submit(self, fn, *args, pure=True):
        future = concurrent.futures.Future()
        design = args[4]  # `_score_remote`'s design, narrowed to one horizon
        self.submitted.append((args[5], *design["horizons"], *design["beyond"]))
        self.lost = self.lost or args[5] == self.split
        if not self.lost:
            future.set_result(fn(*args))
        else:
            future.set_exception(OSError("Timed out trying to connect to tcp://127.0.0.1:8786"))
        return future


def test_a_lost_scheduler_keeps_the_finished_splits_and_a_rerun_scores_the_rest(tmp_path_factory, monkeypatch):
    "Issue 41, bad input: the scheduler goes mid-evaluation; the splits whose every horizon came back stay, the rerun scores the others."
    root = smoke_root(tmp_path_factory, ("balls",))
    env, norm = make_env("balls", "smoke"), load_norm("balls", "smoke", root)
    n_p = len(env.param_vector(env.sample_params(np.random.default_rng(0), "train")))
    model = build_model(model_config_for(env, "smoke"), env, norm=dict(state_mean=norm["state_mean"], state_std=norm["state_std"],
                        param_mean=[0.0] * n_p, param_std=[1.0] * n_p), seed=0).eval()
    opts = dict(n_starts=2, limit=3)
    client = _SchedulerLostFrom("ood_near")
    with pytest.raises(OSError, match="Timed out") as lost:
        evaluate_env(env, model, "smoke", root, options=EvalOptions(**opts, client=client))
    design = design_for(env, model, "smoke", root, n_starts=2)
    hs = design["horizons"] + design["beyond"]
    assert client.submitted == [(sp, h) for sp in ("calib", *SCORED) for h in hs]  # one task per (split, horizon)
    assert "the same evaluation again scores only the rest" in lost.value.__notes__[0]
    parts = eval_path(env, "smoke", 0, root).with_name("parts_seed0")
    assert sorted(p.name for p in parts.iterdir()) == ["calib.npz", "test.npz"]
    assert not eval_path(env, "smoke", 0, root).exists()  # nothing published from a run that did not finish
    scored = []
    real = evaluate.score_one_split
    monkeypatch.setattr(evaluate, "score_one_split", lambda *a, **k: scored.append(a[5]) or real(*a, **k))
    resumed = evaluate_env(env, model, "smoke", root, options=EvalOptions(**opts))
    assert scored == ["ood_near", "ood_far"] and not parts.exists()
    whole = evaluate_env(env, model, "smoke", root, options=EvalOptions(**opts, save=False))
    for split in ("calib", *SCORED):  # the resumed run publishes what an uninterrupted one computes
        rec, _ = load_records(resumed["records"][split])
        assert sorted(rec) == sorted(whole["records"][split]), split
        for k in rec:
            np.testing.assert_array_equal(rec[k], whole["records"][split][k], err_msg=f"{split}: {k}")
    assert resumed["mode2"] == whole["mode2"] and resumed["n"] == whole["n"]
