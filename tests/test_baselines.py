"""Baselines: every registry entry's smoke check on every environment, known zeros (identical ensembles, TTA of the identity,
Richardson of the exact ball solver), conformal coverage and scaling, bad input, and a small end-to-end run on smoke data."""
import numpy as np
import pytest

from hybrid_nbs.baselines import (check_batch, ensemble_map, gradient_map, richardson_map, split_pairs,
                                  step_doubling_map, tta_map)
from hybrid_nbs.pipeline import train_ensemble
from hybrid_nbs.baselines_fit import (BASELINES, ConformalCalibration, calibrate_conformal, conformal_map,
                                      conformal_quantile, error_head_for, error_head_map, fit_conformal, fit_error_head,
                                      load_error_head, run_baseline, save_error_head, smoke_check, smoke_resources,
                                      training_rows)
from hybrid_nbs.core import make_rng, set_threads
from hybrid_nbs.model import build_model
from toys import perturbed

set_threads(1)
ENVS = ("euler", "oregonator", "balls")


@pytest.fixture(scope="module")
def resources():
    return {e: smoke_resources(e) for e in ENVS}


@pytest.mark.parametrize("env_name", ENVS)
@pytest.mark.parametrize("name", sorted(BASELINES))
def test_registry_smoke(resources, env_name, name):
    u = smoke_check(name, resources[env_name])
    assert u.name == name and u.error_map.dtype == np.float64




@pytest.mark.parametrize("env_name", ENVS)
def test_known_zeros(resources, env_name):
    r = resources[env_name]
    x, p, T = r["states"], r["params"], r["horizon"]
    # untrained surrogates are the identity whatever their seed: no spread, no symmetry breaking, no self-inconsistency
    assert ensemble_map(r["models"], x, p, T).error_map.max() < 1e-12
    assert tta_map(r["model"], x, p, T, env=r["env"]).error_map.max() < 1e-5  # float32 rounding of sign flips
    assert step_doubling_map(r["model"], x, p, T).error_map.max() == 0.0
    # members that differ do disagree
    m1, m2 = (perturbed(build_model(r["model"].config, seed=s), s) for s in (1, 2))
    assert ensemble_map([m1, m2], x, p, T).score_mean.min() > 0
    ri = run_baseline("richardson", x, p, T, model=r["model"], env=r["env"])
    assert (ri.error_map == 0).all() if env_name == "balls" else ri.score_mean.min() > 0


def test_symmetries_commute_with_solvers(resources):
    for env_name in ("euler", "balls"):
        r = resources[env_name]
        env, x = r["env"], r["states"][:1]
        q = env.params_from_vector(r["params"][0])
        for g in env.symmetries():
            np.testing.assert_array_equal(g.inverse(g.forward(x)), x)
            np.testing.assert_allclose(g.inverse(env.advance(g.forward(x)[0], q, 3)[None]), env.advance(x[0], q, 3)[None],
                                       atol=1e-9 * np.abs(x).max())




def test_conformal_synthetic():
    assert conformal_quantile(np.arange(1.0, 10.0), 0.1) == 9.0
    assert conformal_quantile(np.arange(1.0, 9.0), 0.1) == np.inf
    rng = make_rng(1, "conformal-test")
    draw = lambda n: (s := rng.lognormal(0, 1, n), s * np.abs(rng.standard_t(3, n)))  # noqa: E731
    for alpha in (0.1, 0.2):
        q, delta = fit_conformal(*reversed(draw(3000)), alpha=alpha)
        cov = np.mean([np.mean(e <= q * (s + delta)) for s, e in (draw(3000) for _ in range(30))])
        assert cov >= 1 - alpha - 0.01, (alpha, cov)
    with pytest.raises(ValueError, match="same shape"):
        fit_conformal(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="delta must be"):
        fit_conformal(np.ones(3), np.ones(3), delta=0.0)


def test_conformal_scaling(resources):
    r = resources["euler"]
    m = perturbed(build_model(r["model"].config, seed=3), 3)
    x, p = r["states"], r["params"]
    y = m.predict(x, 2, p) + 0.01
    cal = calibrate_conformal(m, x, p, y, 2, alpha=0.1)
    u = conformal_map(cal, m, x, p, 2, targets=y)
    np.testing.assert_allclose(u.error_map, cal.q * (step_doubling_map(m, x, p, 2).error_map + cal.delta), rtol=1e-12)
    assert u.info["coverage"] >= 0.9  # in-sample
    with pytest.raises(ValueError, match="holds for horizon 2"):
        conformal_map(cal, m, x, p, 4)
    with pytest.raises(ValueError, match="calibration is for"):
        conformal_map(ConformalCalibration(1.0, 0.1, 0.1, 2.0, "step_doubling", "balls", 1, 1), m, x, p, 2)


@pytest.mark.parametrize("alpha", [0.0, 1.0, -0.1, 1.5])
def test_alpha_out_of_range(resources, alpha):
    r = resources["euler"]
    with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\)"):
        calibrate_conformal(r["model"], r["states"], r["params"], r["states"], 2, alpha=alpha)


def test_bad_inputs(resources):
    r, rb = resources["euler"], resources["balls"]
    x, p, model = r["states"], r["params"], r["model"]
    for name in BASELINES:
        res = {k: v for k, v in r.items() if k not in ("states", "params", "horizon")}
        with pytest.raises(ValueError, match="expected"):
            run_baseline(name, x[:, :2], p, 2, **res)
        with pytest.raises(ValueError, match="horizon must be"):
            run_baseline(name, x, p, 0, **res)
        with pytest.raises(ValueError, match="horizon must be"):
            run_baseline(name, x, p, -4, **res)
    with pytest.raises(ValueError, match="param_vectors must be"):
        ensemble_map(r["models"], x, p[:2], 2)
    with pytest.raises(ValueError, match="member 1 has env"):
        ensemble_map([model, rb["model"]], x, p, 2)
    with pytest.raises(ValueError, match="at least 2"):
        ensemble_map([model], x, p, 2)
    with pytest.raises(ValueError, match="needs models="):
        run_baseline("ensemble", x, p, 2, model=model)
    with pytest.raises(ValueError, match="Unknown baseline"):
        run_baseline("mc_dropout", x, p, 2, model=model)
    with pytest.raises(ValueError, match="positive integer"):
        richardson_map(r["env"], x, p, 2.5)
    with pytest.raises(ValueError, match="needs env="):
        gradient_map(rb["model"], rb["states"], rb["params"], 2)
    with pytest.raises(ValueError, match="source must be"):
        gradient_map(model, x, p, 2, source="both")
    with pytest.raises(ValueError, match="numpy array"):
        check_batch(model.config.state_shape, 1, x.tolist(), p, 2)
    with pytest.raises(ValueError, match="non-finite"):
        check_batch(model.config.state_shape, 1, np.full_like(x, np.nan), p, 2)
    with pytest.raises(ValueError, match="head must be"):
        error_head_map(error_head_for(rb["model"]), model, x, p, 2)


def test_end_to_end_smoke_data(tmp_path):
    """Smoke data, a two-member ensemble, an error head on held-out train rows, conformal on val, all on test."""
    from hybrid_nbs.checkpoint import load_model
    from hybrid_nbs.pipeline import data_main
    from hybrid_nbs.paths import ckpt_dir
    data_main("euler", "smoke", "all", root=tmp_path, workers=0, progress=False)
    members = train_ensemble("euler", "smoke", k=2, root=tmp_path, threads=1)
    model, meta = load_model(ckpt_dir("euler", "smoke", 0, tmp_path) / "best", env="euler", profile="smoke")
    x, p, y, rows = split_pairs("euler", "smoke", "test", 4, root=tmp_path, per_traj=2)
    assert x.shape == (4, 4, 32, 32) and rows.shape == (4, 2)
    assert ensemble_map(members, x, p, 4).score_mean.min() > 0
    head, rep = fit_error_head(model, "euler", "smoke", tmp_path, meta=meta, n_pairs=32, epochs=3)
    used = training_rows(meta, 4, 17)
    assert len(used) == rep["excluded_training_rows"] > 0 and not {tuple(r) for r in rep["rows"]} & used
    u = error_head_map(head, model, x, p, 4)
    assert u.error_map.shape == (4, 32, 32) and np.isfinite(u.error_map).all()
    save_error_head(head, tmp_path / "head", rep)
    np.testing.assert_array_equal(error_head_map(load_error_head(tmp_path / "head")[0], model, x, p, 4).error_map, u.error_map)
    with pytest.raises(ValueError, match="must not be 'test'"):
        fit_error_head(model, "euler", "smoke", tmp_path, split="test")
    with pytest.raises(ValueError, match="made for environment path"):
        fit_error_head(model, "balls", "smoke", tmp_path)
    xv, pv, yv, _ = split_pairs("euler", "smoke", "val", 4, root=tmp_path, per_traj=4)
    cal = calibrate_conformal(model, xv, pv, yv, 4)
    cm = conformal_map(cal, model, x, p, 4, targets=y)
    assert 0 <= cm.info["coverage"] <= 1 and cm.info["coverage_per_traj"].shape == (4,)
