"""Issue 41, item 3: the held-out evaluation fanned out over a Dask cluster gives the same records, bit for bit."""
import numpy as np
import pytest

from hybrid_nbs.baselines import check_ensemble
from hybrid_nbs.card import load_norm
from hybrid_nbs.data import dask_client
from hybrid_nbs.envs import make_env
from hybrid_nbs.evaluate import SCORED, EvalOptions, baseline_resources, evaluate_env, load_starts
from hybrid_nbs.held_out import eval_design
from hybrid_nbs.model import build_model
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


def test_an_unreachable_scheduler_is_named(tmp_path):
    from hybrid_nbs.pipeline import evaluate_main
    with pytest.raises(ValueError, match="cannot reach the Dask scheduler"):
        evaluate_main("euler", "smoke", root=tmp_path, scheduler="tcp://127.0.0.1:9")
