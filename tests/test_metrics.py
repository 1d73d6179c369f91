"""Metrics on synthetic cases with known answers: perfect, reversed, random, binormal, ties, brute force, curves, CIs."""
import math

import numpy as np
import pytest

from hybrid_nbs.metrics import (at_fraction, auroc, average_precision, cell_auprc, cell_auroc, cell_spearman, deferral,
                                prr, rankdata, sparsification, spearman, top_fraction, traj_auroc)
from hybrid_nbs.metrics_ci import boot_indices, bootstrap_ci, metrics_table, summarise

Phi = lambda z: 0.5 * (1 + math.erf(z / math.sqrt(2)))


def brute_auroc(s, l):
    d = s[l][:, None] - s[~l][None]
    return ((d > 0) + 0.5 * (d == 0)).mean()


def brute_ap(s, l):  # step-wise AP over distinct thresholds (scikit-learn's definition)
    o = np.argsort(-s, kind="stable")
    ss, tp = s[o], np.cumsum(l[o])
    end = np.r_[ss[1:] != ss[:-1], True]
    rec, prec = tp[end] / l.sum(), tp[end] / (np.flatnonzero(end) + 1)
    return float(np.sum(np.diff(np.r_[0.0, rec]) * prec))


def maps(n=12, size=16, noise=0.5, seed=0):
    r = np.random.default_rng(seed)
    err = r.lognormal(0, 1, (n, size, size)) * r.lognormal(0, 0.5, (n, 1, 1))
    return err * np.exp(noise * r.normal(size=err.shape)), err


def test_brute_force_auroc_and_ap_with_ties():
    rng = np.random.default_rng(0)
    for _ in range(300):
        n = int(rng.integers(2, 25))
        s, l = rng.integers(0, 4, n).astype(float), rng.random(n) < 0.4
        if 0 < l.sum() < n:
            assert auroc(s, l) == pytest.approx(brute_auroc(s, l), abs=1e-12)
            assert average_precision(s, l) == pytest.approx(brute_ap(s, l), abs=1e-12)
    S, L = rng.normal(size=(6, 30)), rng.random((6, 30)) < 0.5
    np.testing.assert_allclose(auroc(S, L), [brute_auroc(a, b) for a, b in zip(S, L)], atol=1e-12)
    np.testing.assert_allclose(average_precision(S, L), [brute_ap(a, b) for a, b in zip(S, L)], atol=1e-12)


def test_weights_equal_repetition():
    rng = np.random.default_rng(1)
    s, l, c = rng.integers(0, 5, 15).astype(float), rng.random(15) < 0.4, rng.integers(0, 3, 15)
    rep = np.repeat(np.arange(15), c)
    assert auroc(s, l, c.astype(float)) == pytest.approx(auroc(s[rep], l[rep]), abs=1e-12)
    assert average_precision(s, l, c.astype(float)) == pytest.approx(average_precision(s[rep], l[rep]), abs=1e-12)
    w = rng.integers(0, 3, (4, 15)).astype(float)
    for row, lab in zip(w, top_fraction(s, 0.3, weight=w)):
        r = np.repeat(np.arange(15), row.astype(int))
        np.testing.assert_array_equal(lab[r], top_fraction(s[r], 0.3))


def test_perfect_reversed_tied():
    score, error = maps()
    assert (cell_auroc(error, error) == 1).all() and cell_auroc(error, error, pooled=True) == 1
    assert (cell_auprc(error, error, q=0.25) == 1).all() and cell_auprc(error, error, pooled=True) == 1
    assert (cell_auroc(-error, error) == 0).all() and cell_auroc(-error, error, q=0.25, pooled=True) == 0
    assert (cell_auroc(np.zeros_like(error), error) == 0.5).all()
    assert auroc(np.ones(7), np.arange(7) < 2) == 0.5
    te = error.mean((1, 2))
    assert traj_auroc(te, te) == 1 and prr(te, te) == pytest.approx(1, abs=1e-12)
    sp = sparsification(te, te)
    np.testing.assert_array_equal(sp["model"], sp["oracle"])
    assert sp["ause"] == 0 and sp["ause_rel"] == 0
    assert prr(np.zeros(12), te) == pytest.approx(0, abs=1e-12) and prr(-te, te) < 0


def test_independent_score_is_at_chance():
    score, error = maps(n=40, seed=2)
    noise = np.random.default_rng(3).random(error.shape)
    est, lo, hi = bootstrap_ci(lambda a, b: cell_auroc(a, b, pooled=True), noise, error, n_boot=200)
    assert lo <= 0.5 <= hi and abs(est - 0.5) < 0.03
    assert abs(cell_auprc(noise, error, pooled=True) - 0.1) < 0.02  # chance AP is the prevalence q


def test_binormal_auroc():
    rng = np.random.default_rng(4)
    n = 20_000
    for d in (0.5, 1.0, 2.0):
        s = np.r_[rng.normal(d, 1, n), rng.normal(0, 1, n)]
        l = np.r_[np.ones(n, bool), np.zeros(n, bool)]
        assert auroc(s, l) == pytest.approx(Phi(d / math.sqrt(2)), abs=0.01)


def test_ranks_and_spearman():
    np.testing.assert_array_equal(rankdata(np.array([2.0, 2.0, 1.0, 5.0])), [2.5, 2.5, 1.0, 4.0])
    x = np.random.default_rng(5).normal(size=(5, 40))
    np.testing.assert_allclose(spearman(x, np.exp(x) + x ** 3), 1.0, atol=1e-12)
    np.testing.assert_allclose(spearman(x, -x), -1.0, atol=1e-12)
    score, error = maps()
    np.testing.assert_allclose(cell_spearman(np.log(error), error), 1.0, atol=1e-12)
    assert np.isnan(spearman(np.ones(4), np.arange(4.0)))
    assert spearman(np.array([1.0, 2, 3, 4]), np.array([1.0, 3, 2, 4])) == pytest.approx(0.8)


def test_top_fraction():
    np.testing.assert_array_equal(top_fraction(np.arange(10.0), 0.25), np.arange(10) >= 7)  # ceil(2.5) = 3
    assert top_fraction(np.arange(30.0), 0.1).sum() == 3
    np.testing.assert_array_equal(top_fraction(np.array([[3.0, 1, 2, 0], [0, 1, 2, 3]]), 0.5), [[1, 0, 1, 0], [0, 0, 1, 1]])


def test_deferral_endpoints_and_random_gate():
    rng = np.random.default_rng(6)
    e, ref = rng.lognormal(0, 1, 20), rng.uniform(0, 0.05, 20)
    s = e * rng.lognormal(0, 0.5, 20)
    d = deferral(s, e, ref, n_random=4000, seed=1)
    assert d["model"][0] == pytest.approx(e.mean()) and d["oracle"][0] == pytest.approx(e.mean())
    assert d["model"][-1] == pytest.approx(ref.mean()) and d["oracle"][-1] == pytest.approx(ref.mean())
    np.testing.assert_allclose(d["random"], e.mean() + d["fractions"] * (ref.mean() - e.mean()), atol=1e-12)
    np.testing.assert_allclose(d["random_draws"].mean(0), d["random"], atol=0.03 * e.mean())
    assert (d["oracle"] <= d["model"] + 1e-12).all() and 0 < d["prr"] < 1
    assert at_fraction(deferral(s, e), "random", 0.25) == pytest.approx(0.75 * e.mean())
    # vectorised over replicates: the same as row by row
    S, E = rng.random((3, 20)), rng.random((3, 20))
    np.testing.assert_allclose(prr(S, E), [prr(a, b) for a, b in zip(S, E)])


def test_sparsification_ties_are_random_in_expectation():
    e = np.arange(10.0)
    sp = sparsification(np.zeros(10), e)
    np.testing.assert_allclose(sp["model"], sp["random"])
    assert sp["ause_rel"] == pytest.approx(1.0)
    sp = sparsification(e, e)
    np.testing.assert_allclose(sp["oracle"], [np.mean(e[: 10 - k]) for k in range(10)])


def test_bootstrap_coverage():
    truth, hits = Phi(1 / math.sqrt(2)), 0
    for rep in range(100):
        r = np.random.default_rng(100 + rep)
        lab = r.random(60) < 0.5
        _, lo, hi = bootstrap_ci(auroc, r.normal(lab.astype(float), 1.0), lab, n_boot=500, seed=rep, batch=500)
        hits += lo <= truth <= hi
    assert 85 <= hits <= 100
    rho = 0.6  # bivariate normal: Spearman = (6/pi) asin(rho/2)
    truth, hits = 6 / math.pi * math.asin(rho / 2), 0
    for rep in range(100):
        z = np.random.default_rng(300 + rep).multivariate_normal([0, 0], [[1, rho], [rho, 1]], 80)
        _, lo, hi = bootstrap_ci(spearman, z[:, 0], z[:, 1], n_boot=500, seed=rep, batch=500)
        hits += lo <= truth <= hi
    assert 85 <= hits <= 100


def test_summarise_pooled_matches_explicit_resampling_and_table():
    score, error = maps(n=6, size=5, seed=7)
    ball_s, ball_e = score.reshape(6, -1)[:, :6], error.reshape(6, -1)[:, :6]  # per-ball maps (N, n_balls) work too
    out = summarise(score, error, n_boot=60, seed=3)
    for q, name in ((0.1, "auroc"), (0.25, "auprc")):
        fn = cell_auroc if name == "auroc" else cell_auprc
        ci = bootstrap_ci(lambda a, b: fn(a, b, q, pooled=True), score, error, n_boot=60, seed=3)
        np.testing.assert_allclose(out[f"cell_{name}_top{round(100 * q)}_pooled"], ci, atol=1e-12)
    ci = bootstrap_ci(lambda a, b: traj_auroc(a.mean((1, 2)), b.mean((1, 2))), score, error, n_boot=60, seed=3)
    np.testing.assert_allclose(out["traj_auroc_top25"], ci, atol=1e-12)
    assert out["defer25_random_ratio"][0] == pytest.approx(0.75)
    assert set(summarise(ball_s, ball_e, n_boot=20)) == set(out)
    table = metrics_table({"test": out, "ood": {"prr": (0.9123, 0.87444, 0.9411)}}, columns=["prr", "traj_spearman"])
    assert "| ood | 0.912 [0.874, 0.941] | – |" in table.splitlines()
    np.testing.assert_array_equal(boot_indices(5, 3, seed=1), boot_indices(5, 3, seed=1))


@pytest.mark.parametrize("call, message", [
    (lambda: auroc(np.zeros(3), np.zeros(4, bool)), "does not match score shape"),
    (lambda: auroc(np.zeros(3), np.array([0.2, 1, 0])), "boolean"),
    (lambda: cell_auroc(np.zeros((2, 3)), np.zeros((2, 4))), "score has shape (2, 3) but error"),
    (lambda: cell_auroc(np.zeros(3), np.zeros(3)), "at least 2 dimension"),
    (lambda: cell_auroc(np.zeros((2, 3)), np.full((2, 3), np.nan)), "error contains 6 non-finite"),
    (lambda: cell_auroc(np.zeros((2, 3)), np.zeros((2, 3)), q=0), "q must be a fraction"),
    (lambda: traj_auroc(np.zeros(3), np.zeros(3), q=1.5), "q must be a fraction"),
    (lambda: deferral(np.zeros(3), np.zeros(3), np.zeros(2)), "solver_error has shape"),
    (lambda: deferral(np.zeros(3), np.zeros(3), n_random=-1), "n_random must be a positive integer"),
    (lambda: sparsification(np.zeros(1), np.zeros(1)), "at least 2 items"),
    (lambda: bootstrap_ci(auroc, np.zeros(3), np.zeros(2, bool)), "common first axis"),
    (lambda: bootstrap_ci(auroc, np.zeros(3), np.zeros(3, bool), n_boot=0), "n_boot must be a positive integer"),
    (lambda: bootstrap_ci(auroc, np.zeros(3), np.zeros(3, bool), level=1.0), "level must lie"),
    (lambda: bootstrap_ci("auroc", np.zeros(3)), "metric_fn must be callable"),
    (lambda: summarise(np.zeros((1, 4)), np.zeros((1, 4))), "at least 2 trajectories"),
    (lambda: summarise(np.zeros((3, 4)), np.zeros((3, 4)), per_traj_score=np.zeros(2)), "per_traj_score has shape"),
    (lambda: metrics_table([]), "non-empty mapping"),
])
def test_bad_input(call, message):
    with pytest.raises(ValueError, match=None) as info:
        call()
    assert message in str(info.value)
