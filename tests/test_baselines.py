"""Baselines: every registry entry's smoke check on every environment, known zeros (identical ensembles, TTA of the identity,
Richardson of the exact ball solver), the registry's rules (ranks, applies), conformal coverage and scaling, the kNN-adaptive
and locally-weighted conformal intervals (guarantee on synthetic data, bad input), and a small end-to-end run on smoke data."""
import math

import numpy as np
import pytest

from hybrid_nbs.baselines import (check_batch, ensemble_map, gradient_map, richardson_map, split_pairs,
                                  step_doubling_map, tta_map)
from hybrid_nbs.data import BuildOptions
from hybrid_nbs.train import TrainOptions
from hybrid_nbs.pipeline import train_ensemble
from hybrid_nbs.baselines_fit import BASELINES, baseline_applies, run_baseline, smoke_check, smoke_resources
from hybrid_nbs.conformal import CalibRows, ConformalCalibration, KnnConformal, calibrate_conformal, calibrate_knn_conformal, conformal_map, conformal_quantile, conformal_rank, fit_conformal, knn_conformal_map
from hybrid_nbs.weighted_conformal import WeightedConformal, calib_folds, calibrate_weighted_conformal, fit_weighted_conformal, weighted_conformal_map
from hybrid_nbs.error_head import (HeadFit, error_head_for, error_head_map, fit_error_head, load_error_head, save_error_head,
                                   training_rows)
from hybrid_nbs.env import params_from_vector
from hybrid_nbs.envs import make_env
from hybrid_nbs.metrics import cell_spearman
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


def test_registry_rules(resources):
    assert "conformal" not in BASELINES and {"sd_intervals", "knn_conformal", "weighted_conformal"} <= set(BASELINES)
    assert {n for n, b in BASELINES.items() if not b.ranks} == {"sd_intervals", "weighted_conformal"}
    assert BASELINES["knn_conformal"].needs == ("model", "knn")
    assert BASELINES["weighted_conformal"].needs == ("model", "head", "weighted")
    for env_name in ENVS:
        r = resources[env_name]
        env = r["env"]
        got = {n: baseline_applies(n, env, r["params"][0]) for n in BASELINES}
        assert got == {n: baseline_applies(n, env, params_from_vector(env, r["params"][0])) for n in BASELINES}
        assert got == {n: baseline_applies(n, env) for n in BASELINES}  # default Params
        want = "n/a (exact solver)" if env_name == "balls" else None
        assert got.pop("richardson") == want and set(got.values()) == {None}
    assert baseline_applies("richardson", "balls") == "n/a (exact solver)"
    with pytest.raises(ValueError, match="Unknown baseline"):
        baseline_applies("conformal", resources["euler"]["env"])
    r = resources["euler"]
    x, p = r["states"], r["params"]
    with pytest.raises(ValueError, match="needs knn="):
        run_baseline("knn_conformal", x, p, 2, model=r["model"])
    with pytest.raises(ValueError, match="needs head, weighted="):
        run_baseline("weighted_conformal", x, p, 2, model=r["model"])
    grad = calibrate_conformal(r["model"], CalibRows(x, p, x), 2, difficulty="gradient", env=r["env"])
    with pytest.raises(ValueError, match="difficulty 'step_doubling'"):
        run_baseline("sd_intervals", x, p, 2, model=r["model"], calibration=grad, env=r["env"])
    # targets reach every conformal baseline
    res = {k: v for k, v in r.items() if k not in ("states", "params", "horizon")}
    for name in ("sd_intervals", "knn_conformal", "weighted_conformal"):
        u = run_baseline(name, x, p, 2, targets=x, **res)
        assert 0 <= u.info["coverage"] <= 1 and u.info["coverage_per_traj"].shape == (len(x),)




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
        q = params_from_vector(env, r["params"][0])
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
    cal = calibrate_conformal(m, CalibRows(x, p, y), 2, alpha=0.1)
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
    x, p, m = r["states"], r["params"], r["model"]
    with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\)"):
        calibrate_conformal(m, CalibRows(x, p, x), 2, alpha=alpha)
    with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\)"):
        calibrate_knn_conformal(m, CalibRows(x, p, x), 2, alpha=alpha)
    with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\)"):
        calibrate_weighted_conformal(r["head"], m, CalibRows(x, p, x), 2, alpha=alpha)
    with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\)"):
        fit_weighted_conformal(np.ones((3, 4)), np.ones((3, 4)), alpha=alpha)


@pytest.fixture(scope="module")
def trained_toy():
    """A perturbed (non-identity) smoke Euler surrogate and 8 random states with noisy targets at horizons 2 and 4."""
    r = smoke_resources("euler", n=8, seed=5)
    m = perturbed(build_model(r["model"].config, seed=3), 3)
    x, p = r["states"], r["params"]
    noise = make_rng(5, "toy-targets").normal(0, 0.02, x.shape) * m.state_norm.std.numpy().reshape(1, -1, 1, 1)
    return dict(r, model=m, y2=m.predict(x, 2, p) + noise, y4=m.predict(x, 4, p) + noise)


def test_knn_conformal(trained_toy, resources):
    t = trained_toy
    m, x, p = t["model"], t["states"], t["params"]
    rows = CalibRows(np.concatenate([x, x]), np.concatenate([p, p]), np.concatenate([t["y2"], t["y4"]]),
                     trajectories=np.r_[np.arange(8), np.arange(8)])
    cal = calibrate_knn_conformal(m, rows, np.r_[np.full(8, 2.0), np.full(8, 4.0)], alpha=0.25, k=4)
    assert isinstance(cal, KnnConformal) and cal.calibrated_horizons == [2.0, 4.0] and cal.embeddings.shape == (16, 8)
    np.testing.assert_allclose(cal.embeddings.mean(0), 0, atol=1e-12)  # standardised by the calibration embeddings
    u = knn_conformal_map(cal, m, x, p, 4, targets=t["y4"])
    near = u.info["neighbours"]
    assert (cal.horizons[near] == 4).all() and u.info["k"] == 4 and "note" not in u.info
    np.testing.assert_array_equal(near[:, 0], np.arange(8) + 8)  # each input's nearest neighbour is itself
    np.testing.assert_array_equal(u.error_map[2], np.sort(cal.errors[near[2]], axis=0)[3])  # ceil(5 * 0.75) = 4th of 4
    assert u.info["rank"] == 4
    sd = step_doubling_map(m, x, p, 4).error_map
    assert np.nanmax(cell_spearman(u.error_map, sd)) < 0.99  # not the step-doubling map rescaled
    assert 0 <= u.info["coverage"] <= 1 and u.info["coverage_per_traj"].shape == (8,)
    with pytest.raises(ValueError, match=r"calibrated at horizons \[2.0, 4.0\], not 8"):
        knn_conformal_map(cal, m, x, p, 8)
    clipped = knn_conformal_map(calibrate_knn_conformal(m, CalibRows(x, p, t["y2"]), 2, k=20), m, x, p, 2)
    assert clipped.info["k"] == 8 and "k clipped from 20 to the 8" in clipped.info["note"]
    assert (clipped.error_map == clipped.error_map[:1]).all()  # every row a neighbour of every input: one width
    assert np.isposinf(clipped.error_map).all()  # rank ceil(9 * 0.9) = 9 > 8 rows: alpha = 0.1 is not supported
    with pytest.raises(ValueError, match="targets have shape"):
        calibrate_knn_conformal(m, CalibRows(x, p, t["y2"][:5]), 2)
    with pytest.raises(ValueError, match="one number or one per row"):
        calibrate_knn_conformal(m, CalibRows(x, p, t["y2"]), np.full(5, 2.0))
    with pytest.raises(ValueError, match="one integer id per row"):
        calibrate_knn_conformal(m, CalibRows(x, p, t["y2"], trajectories=np.zeros(8)), 2)
    with pytest.raises(ValueError, match="horizon must be"):
        calibrate_knn_conformal(m, CalibRows(x, p, t["y2"]), np.r_[np.full(7, 2.0), -1.0])
    with pytest.raises(ValueError, match="k must be"):
        calibrate_knn_conformal(m, CalibRows(x, p, t["y2"]), 2, k=0)
    with pytest.raises(ValueError, match="targets have shape"):
        knn_conformal_map(cal, m, x, p, 4, targets=t["y4"][:3])
    with pytest.raises(ValueError, match="calibration is for"):
        knn_conformal_map(cal, resources["balls"]["model"], x, p, 4)
    with pytest.raises(ValueError, match="cal must be a KnnConformal"):
        knn_conformal_map(object(), m, x, p, 4)
    y_bad = t["y2"].copy()
    y_bad[7] = np.nan  # a row without a finite error is left out ...
    left = calibrate_knn_conformal(m, CalibRows(x, p, y_bad), 2)
    assert len(left.horizons) == 7 and np.isfinite(left.errors).all() and 7 not in left.trajectories
    with pytest.raises(ValueError, match="nothing to calibrate on"):  # ... and so is every row here
        calibrate_knn_conformal(m, CalibRows(x, p, np.full_like(y_bad, np.nan)), 2)


def test_conformal_rank():
    assert [conformal_rank(n, 0.1) for n in (8, 9, 19, 20, 100)] == [9, 9, 18, 19, 91]  # ceil((n + 1)(1 - alpha))
    assert conformal_rank(9, 0.7) == 3  # 10 * (1 - 0.7) is 3.0000000000000004 in floats: not rank 4
    assert conformal_rank(3, 0.9) == 1


def test_conformal_coverage_exchangeable(resources):
    """Lei et al.'s (n + 1) correction: on i.i.d. errors the kNN widths and split conformal cover each cell with
    probability 19/21 >= 0.9 at k = n = 20; the uncorrected 18th of 20 would give 18/21 and fail the first assert."""
    r = resources["euler"]
    m, x, p = r["model"], r["states"], r["params"]
    rng = make_rng(3, "exchangeable-coverage")
    alpha, k, n_rows, reps, draws = 0.1, 20, 50, 30, 16
    cells, dim = x.shape[2:], 2 * x.shape[1]
    scale = rng.lognormal(0, 1, cells)  # each cell its own distribution; rows and test draws i.i.d. within a cell
    hits = {"knn": [], "split": []}
    for _ in range(reps):
        errs = scale * rng.gamma(2.0, size=(n_rows, *cells))
        cal = KnnConformal(rng.normal(size=(n_rows, dim)), np.zeros(dim), np.ones(dim), np.full(n_rows, 2.0), errs,
                           np.arange(n_rows), alpha, k, m.config.env)  # random embeddings: neighbours blind to errors
        u = knn_conformal_map(cal, m, x, p, 2)
        assert u.info["k"] == k and u.info["neighbours"].shape == (len(x), k)
        q = np.array([conformal_quantile(c, alpha) for c in errs[:k].reshape(k, -1).T]).reshape(cells)
        new = scale * rng.gamma(2.0, size=(draws, *u.error_map.shape))
        hits["knn"].append((new <= u.error_map).mean(axis=(0, 1)).ravel())  # per cell, independent across cells
        hits["split"].append((new <= q).mean(axis=(0, 1)).ravel())
    for name, h in hits.items():
        h = np.concatenate(h)
        cov, se = h.mean(), h.std(ddof=1) / math.sqrt(h.size)
        assert cov >= 1 - alpha - 3 * se, (name, cov, se)  # the finite-sample guarantee, within Monte-Carlo error
        assert cov <= 19 / 21 + 4 * se, (name, cov, se)  # and not wider than the rank asks: 19/21 exactly


def test_calib_folds():
    for n in (2, 3, 10, 33):
        a, b = calib_folds(n)
        assert len(a) == n // 2 and len(b) == n - n // 2 and len(a) > 0 < len(b)
        np.testing.assert_array_equal(np.sort(np.r_[a, b]), np.arange(n))
        np.testing.assert_array_equal(calib_folds(n)[0], a)  # deterministic
    assert any(not np.array_equal(calib_folds(10, s)[0], calib_folds(10)[0]) for s in range(1, 5))
    for bad in (1, 0, -3, 2.0, True):
        with pytest.raises(ValueError, match="at least 2 trajectories"):
            calib_folds(bad)


def test_weighted_conformal_guarantee():
    rng = make_rng(2, "weighted-test")
    def draw(n, cells=64):
        sigma = rng.lognormal(0, 1, (n, cells))
        return sigma * rng.lognormal(0, 0.7, (n, 1)) * np.abs(rng.standard_t(3, (n, cells))), sigma
    for alpha, beta in ((0.1, 0.9), (0.2, 0.8)):
        hits = []
        for _ in range(150):
            e, s = draw(49)
            q, delta, scores = fit_weighted_conformal(e, s, alpha, beta)
            assert scores.shape == (49,)
            e_new, s_new = draw(60)
            hits.append(np.mean(np.mean(e_new <= q * (s_new + delta), axis=1) >= beta))
        assert 1 - alpha - 0.02 <= np.mean(hits) <= 1 - alpha + 1 / 50 + 0.02, (alpha, np.mean(hits))
    e, s = draw(6)
    ids = np.repeat([3, 7, 9], 2)  # two rows per trajectory: one score over both rows' cells
    _, _, by_traj = fit_weighted_conformal(e, s, 0.5, 0.9, 0.1, ids)
    _, _, joined = fit_weighted_conformal(e.reshape(3, -1), s.reshape(3, -1), 0.5, 0.9, 0.1)
    np.testing.assert_array_equal(by_traj, joined)
    assert fit_weighted_conformal(e, s, 0.1)[0] == np.inf  # 6 trajectories cannot support 90%
    assert fit_weighted_conformal(e, s, 0.5, beta=1.0)[2].max() == (e / (s + 0.1 * s.mean())).max()  # beta = 1: the worst cell
    for bad in (0.0, -0.1, 1.01):
        with pytest.raises(ValueError, match=r"beta must be in \(0, 1\]"):
            fit_weighted_conformal(e, s, beta=bad)
    with pytest.raises(ValueError, match="same shape"):
        fit_weighted_conformal(e, s[:, :3])
    with pytest.raises(ValueError, match="finite and non-negative"):
        fit_weighted_conformal(-e, s)
    with pytest.raises(ValueError, match="one integer id per row"):
        fit_weighted_conformal(e, s, trajectories=[0, 1])
    with pytest.raises(ValueError, match="delta must be"):
        fit_weighted_conformal(e, s, delta=0.0)


def test_weighted_conformal_map(trained_toy, resources):
    t = trained_toy
    m, x, p = t["model"], t["states"], t["params"]
    head = error_head_for(m, seed=1)
    cal = calibrate_weighted_conformal(head, m, CalibRows(x, p, t["y2"], trajectories=np.arange(8) // 2), 2, alpha=0.25, beta=0.8)
    assert isinstance(cal, WeightedConformal) and (cal.n_traj, cal.n_rows, cal.horizon) == (4, 8, 2.0)
    assert np.isfinite(cal.q)  # ceil(5 * 0.75) = 4 <= 4 trajectories
    u = weighted_conformal_map(cal, head, m, x, p, 2, targets=t["y2"], trajectories=np.arange(8) // 2)
    sigma = error_head_map(head, m, x, p, 2).error_map
    np.testing.assert_allclose(u.error_map, cal.q * (sigma + cal.delta), rtol=1e-12)
    assert u.info["beta"] == 0.8 and u.info["traj_coverage"] == 1.0  # in-sample: each trajectory's score is <= q ...
    per_row = weighted_conformal_map(cal, head, m, x, p, 2, targets=t["y2"])  # ... rows judged one by one need not be
    assert 0 <= per_row.info["traj_coverage"] <= 1 and per_row.info["coverage_per_traj"].shape == (8,)
    with pytest.raises(ValueError, match="holds for horizon 2"):
        weighted_conformal_map(cal, head, m, x, p, 4)
    with pytest.raises(ValueError, match="not the error head this calibration"):
        weighted_conformal_map(cal, error_head_for(m, seed=2), m, x, p, 2)
    with pytest.raises(ValueError, match="cal must be a WeightedConformal"):
        weighted_conformal_map(ConformalCalibration(1.0, 0.1, 0.1, 2.0, "step_doubling", "euler", 1, 1), head, m, x, p, 2)
    with pytest.raises(ValueError, match="targets have shape"):
        calibrate_weighted_conformal(head, m, CalibRows(x, p, t["y2"][:2]), 2)
    with pytest.raises(ValueError, match="one integer id per row"):
        calibrate_weighted_conformal(head, m, CalibRows(x, p, t["y2"], trajectories=[0]), 2)
    with pytest.raises(ValueError, match=r"beta must be in \(0, 1\]"):
        calibrate_weighted_conformal(head, m, CalibRows(x, p, t["y2"]), 2, beta=0)
    with pytest.raises(ValueError, match="head must be an ErrorHead"):
        calibrate_weighted_conformal(error_head_for(resources["balls"]["model"]), m, CalibRows(x, p, t["y2"]), 2)
    assert calibrate_weighted_conformal(head, m, CalibRows(x, p, t["y2"]), 2, alpha=0.1).q == np.inf  # 8 rows: too few for 90%


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


@pytest.mark.slow  # about 16 s: builds, trains and calibrates on smoke data
def test_end_to_end_smoke_data(tmp_path):
    """Smoke data, a two-member ensemble, an error head on held-out train rows, conformal on val, all on test."""
    from hybrid_nbs.checkpoint import load_model
    from hybrid_nbs.pipeline import data_main
    from hybrid_nbs.paths import ckpt_dir
    data_main("euler", "smoke", "all", root=tmp_path, progress=False, options=BuildOptions(workers=0))
    members = train_ensemble("euler", "smoke", k=2, root=tmp_path, options=TrainOptions(threads=1))
    model, meta = load_model(ckpt_dir("euler", "smoke", 0, tmp_path) / "best", env="euler", profile="smoke")
    x, p, y, rows = split_pairs("euler", "smoke", "test", 4, root=tmp_path, per_traj=2)
    assert x.shape == (4, 4, 32, 32) and rows.shape == (4, 2)
    assert ensemble_map(members, x, p, 4).score_mean.min() > 0
    head, rep = fit_error_head(model, "euler", "smoke", tmp_path, meta=meta, fit=HeadFit(n_pairs=32, epochs=3))
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
    xv, pv, yv, rv = split_pairs("euler", "smoke", "val", 4, root=tmp_path, per_traj=4)
    cal = calibrate_conformal(model, CalibRows(xv, pv, yv), 4)
    cm = conformal_map(cal, model, x, p, 4, targets=y)
    assert 0 <= cm.info["coverage"] <= 1 and cm.info["coverage_per_traj"].shape == (4,)
    # the locally-weighted intervals: head on one fold of val, quantile on the other
    fold_a, fold_b = calib_folds(2)
    head_a, rep_a = fit_error_head(model, "euler", "smoke", tmp_path, split="val", trajectories=fold_a,
                                   fit=HeadFit(n_pairs=16, epochs=2))
    assert {r[0] for r in rep_a["rows"]} == set(fold_a.tolist()) and rep_a["trajectories"] == fold_a.tolist()
    with pytest.raises(ValueError, match="trajectories must be"):
        fit_error_head(model, "euler", "smoke", tmp_path, split="val", trajectories=[5])
    b = np.isin(rv[:, 0], fold_b)
    wc = calibrate_weighted_conformal(head_a, model, CalibRows(xv[b], pv[b], yv[b], trajectories=rv[b, 0]), 4, alpha=0.5)
    wm = run_baseline("weighted_conformal", x, p, 4, model=model, head=head_a, weighted=wc, targets=y)
    assert np.isfinite(wm.error_map).all() and 0 <= wm.info["traj_coverage"] <= 1
    knn = calibrate_knn_conformal(model, CalibRows(xv, pv, yv, trajectories=rv[:, 0]), 4)
    km = run_baseline("knn_conformal", x, p, 4, model=model, knn=knn, targets=y)
    assert km.info["k"] == 8 and "clipped" in km.info["note"] and 0 <= km.info["coverage"] <= 1
