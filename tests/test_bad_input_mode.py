"""Issue 36's hostile inputs to the surrogate, step doubling, Mode 1 / Mode 2 and the solver batch: each refused with one
clear line, or confined to the trajectory it concerns."""
import numpy as np
import pytest
import torch

from hybrid_nbs.baselines import check_batch, predict_raw, step_doubling_map
from hybrid_nbs.core import make_rng
from hybrid_nbs.env import advance_many, layout_of, reference_advance
from hybrid_nbs.envs import make_env
from hybrid_nbs.errormap import step_doubling
from hybrid_nbs.hybrid import HybridSimulator, _solve
from hybrid_nbs.model import build_model, extrapolating
from toys import perturbed

TOP = 16  # the longest horizon the toy models claim to have been trained on


def _toy(env, arch, states, vectors):
    "A surrogate with `states`' statistics and a recorded trained range of 1 to `TOP` frames, its zero layers perturbed."
    axes = (0, 2, 3) if layout_of(env) == "grid" else (0, 1)
    m = build_model(arch, env,
                    norm=dict(state_mean=states.mean(axis=axes), state_std=states.std(axis=axes) + 1e-3, param_mean=vectors.mean(0), param_std=np.ones(vectors.shape[1])),
                    max_horizon=TOP)
    return perturbed(m, seed=1, scale=0.05)


@pytest.fixture(scope="module")
def euler():
    env = make_env("euler", "smoke")
    rng = make_rng(0, "bad-input-mode")
    prm = [env.sample_params(rng, "val") for _ in range(4)]
    S = np.stack([env.initial_state(q, rng) for q in prm])
    V = np.stack([env.param_vector(q) for q in prm])
    return env, prm, S, V, _toy(env, "unet-smoke", S, V)


@pytest.fixture(scope="module")
def balls():
    env = make_env("balls", "smoke")
    prm = [env.Params(restitution=1.0) for _ in range(3)]  # elastic: no inelastic collapse is possible
    S = np.stack([env.initial_state(q, make_rng(1, "balls", i)) for i, q in enumerate(prm)])
    V = np.stack([env.param_vector(q) for q in prm])
    return env, prm, S, V, _toy(env, "mlp-smoke", S, V)


# 3. Mode 2 sends what the environment refuses nowhere: deferred, failed, with the environment's reason
def test_mode2_defers_states_the_environment_refuses(euler, balls):
    env, prm, S, _, model = balls
    far = S.copy()
    far[1, 0, 0] += 50.0  # 50 box lengths outside the box: the network would still answer
    sim = HybridSimulator(env, model)
    with pytest.raises(ValueError, match="outside the box"):
        sim.mode1(far, prm, 4)  # Mode 1 refuses it
    res = sim.mode2(far, prm, 4, threshold=np.inf)  # a threshold that defers nothing the surrogate may score
    assert res.deferred.tolist() == [False, True, False] and res.failed.tolist() == [False, True, False]
    assert "outside the box" in res.errors[1] and np.isnan(res.prediction[1]).all()
    assert np.isfinite(res.prediction[[0, 2]]).all() and np.isinf(res.score[1])

    env, prm, S, _, model = euler
    neg = S.copy()
    neg[2, 0] *= -1  # negative density everywhere
    res = HybridSimulator(env, model).mode2(neg, prm, 4, threshold=np.inf)
    assert res.deferred.tolist() == [False, False, True, False] and res.failed.tolist() == [False, False, True, False]
    assert "non-positive density" in res.errors[2]


# 6. a solver's RuntimeError is that trajectory's failure, not the batch's; and its message names the real cause
def test_solver_runtime_error_fails_one_trajectory(balls):
    env, prm, S, _, model = balls
    fast = S.copy()
    fast[1, :, 3:6] *= 1e8  # elastic and very fast: too many wall impacts in one frame
    out, why = advance_many(env, fast, prm, 2)
    assert list(why) == [1] and "impacts in one frame" in why[1]
    assert "inelastic" not in why[1] and "too fast" in why[1]  # the balls are elastic: no collapse
    np.testing.assert_array_equal(out[0], reference_advance(env, S[0], prm[0], 2))
    assert _solve(env, fast[1], prm[1], 2)[0] is None and "too fast" in _solve(env, fast[1], prm[1], 2)[1]
    res = HybridSimulator(env, model).mode2(fast, prm, 2, threshold=-np.inf)  # every trajectory to the solver
    assert res.failed.tolist() == [False, True, False] and "too fast" in res.errors[1]
    np.testing.assert_array_equal(res.prediction[2], reference_advance(env, S[2], prm[2], 2))


# 9. Mode 1 does not hand back NaN without a word
def test_mode1_refuses_non_finite_predictions(euler):
    env, prm, S, _, model = euler
    absurd = [env.Params(gamma=1e30)] * len(S)
    assert not np.isfinite(model.predict(S, 4.0, np.stack([env.param_vector(q) for q in absurd]))).all()
    with pytest.raises(ValueError, match=r"prediction is not finite for trajectories \[0, 1, 2, 3\]"):
        HybridSimulator(env, model).mode1(S, absurd, 4)


# 10. the lower end of the trained range is enforced as the upper one is, with the same opt-in
def test_horizons_below_the_trained_range(euler):
    env, prm, S, V, model = euler
    for h in (1e-12, 0.5):
        with pytest.raises(ValueError, match=f"horizon {h:g} lies below the trained range \\(1 to {TOP} frames\\)"):
            model.predict(S, h, V)
    with pytest.raises(ValueError, match="below the trained range"):
        model.predict(S, [1.0, 2.0, 0.25, 4.0], V)  # one short horizon in the batch is enough
    assert model.predict(S, 1, V).shape == S.shape
    with extrapolating(model):
        assert np.isfinite(model.predict(S, 1e-3, V)).all()  # the explicit opt-in
    for T, splits in ((1e-6, (0.5,)), (1, (0.5,)), (2, (0.25, 0.5, 0.75))):  # T/2 = 0.5 and T/4 = 0.5: below 1 frame
        with pytest.raises(ValueError, match="below the trained range"):
            step_doubling(model, S, V, T, splits)
    with pytest.raises(ValueError, match="step doubling needs T >= 2"):
        step_doubling(model, S, V, 1e-6)
    with pytest.raises(ValueError, match="below the trained range"):
        step_doubling_map(model, S, V, 1e-6)
    assert not step_doubling(model, S, V, 2).info["extrapolated"]
    assert step_doubling(model, S, V, 1, extrapolate=True).info["extrapolated"]  # recorded
    sim = HybridSimulator(env, model)
    with pytest.raises(ValueError, match="below the trained range"):
        sim.mode2(S, prm, 1, threshold=1.0)  # Mode 2's map at h = 1 takes half-frame steps
    assert HybridSimulator(env, model, extrapolate=True).mode2(S, prm, 1, threshold=np.inf).prediction.shape == S.shape


# 16. empty and malformed batches, batch sizes and 0-d horizons, refused (or taken) at the boundary
def test_batches_checked_at_the_boundary(euler):
    env, prm, S, V, model = euler
    sim = HybridSimulator(env, model)
    empty = [lambda: step_doubling(model, S[:0], V[:0], 4), lambda: predict_raw(model, S[:0], V[:0], 4),
             lambda: step_doubling_map(model, S[:0], V[:0], 4), lambda: sim.mode1(S[:0], [], 4),
             lambda: sim.mode2(S[:0], [], 4, threshold=1.0), lambda: sim.calibrate(S[:0], [], 4, deferral=0.5)]
    for call in empty:
        with pytest.raises(ValueError, match="empty batch"):
            call()
    for bs in (0, -1, 0.5, True):
        with pytest.raises(ValueError, match="batch_size must be a positive integer"):
            HybridSimulator(env, model, batch_size=bs)  # at construction, not at the first call
        for call in (lambda: step_doubling(model, S, V, 4, batch_size=bs), lambda: predict_raw(model, S, V, 4, batch_size=bs),
                     lambda: step_doubling_map(model, S, V, 4, batch_size=bs)):
            with pytest.raises(ValueError, match="batch_size must be a positive integer"):
                call()
    # a 0-d array is its number
    np.testing.assert_array_equal(step_doubling(model, S, V, np.array(4.0)).error_map, step_doubling(model, S, V, 4.0).error_map)
    np.testing.assert_array_equal(predict_raw(model, S, V, np.array(4.0)), predict_raw(model, S, V, 4.0))
    np.testing.assert_array_equal(step_doubling_map(model, S, V, np.array(4)).score_mean, step_doubling_map(model, S, V, 4).score_mean)
    np.testing.assert_array_equal(sim.mode1(S, prm, np.array(4)).prediction, sim.mode1(S, prm, 4).prediction)
    for h in (np.array([4.0]), np.array([[4.0]]), "4"):
        with pytest.raises(ValueError, match="horizon must be a positive number"):
            step_doubling(model, S, V, h)
    ragged = [S[0], S[1][:, :3]]
    for call in (lambda: model.predict(ragged, 4, V[:2]), lambda: step_doubling(model, ragged, V[:2], 4),
                 lambda: sim.mode1(ragged, prm[:2], 4)):
        with pytest.raises(ValueError, match="is ragged"):
            call()
    with pytest.raises(ValueError, match=r"param_vectors must have shape \(1,\) or \(4, 1\), got \(2, 1\)"):
        step_doubling(model, S, V[:2], 4)
    with pytest.raises(ValueError, match="params must be a sequence of 4 Params"):
        sim.mode1(S, prm[0], 4)  # one Params object, not one per state
    with pytest.raises(ValueError, match="params must be a sequence of 4 Params"):
        sim.mode1(S, V, 4)  # parameter vectors, not Params objects
    with pytest.raises(ValueError, match=r"targets have shape \(2, 4, 32, 32\), expected \(4, 4, 32, 32\)"):
        sim.calibrate(S, prm, 4, error_budget=0.1, targets=S[:2])


# 17. calibrate's error budget and solver errors
def test_calibrate_budget_and_solver_error(euler):
    env, prm, S, V, model = euler
    sim = HybridSimulator(env, model)
    with pytest.raises(ValueError, match=r"error_budget must be a number .*, got nan"):
        sim.calibrate(S, prm, 4, error_budget=float("nan"), targets=S)
    with pytest.raises(ValueError, match="error_budget must be a number"):
        sim.calibrate(S, prm, 4, error_budget="0.1", targets=S)
    with pytest.raises(ValueError, match="below what deferring every trajectory achieves"):
        sim.calibrate(S, prm, 4, error_budget=-1.0, targets=S)  # a number, but unreachable: the old message, now apt
    tau = sim.calibrate(S, prm, 4, error_budget=0.0, targets=S, solver_error=np.zeros(len(S)))
    assert sim.calibrate(S, prm, 4, error_budget=0.0, targets=S, solver_error=0.0) == tau  # one number for every trajectory
    for bad in ([0.0, 0.0], np.zeros((len(S), 1)), [0.0, np.nan, 0.0, 0.0], [0.0, -1.0, 0.0, 0.0]):
        with pytest.raises(ValueError, match="solver_error must be one finite non-negative number or 4"):
            sim.calibrate(S, prm, 4, error_budget=0.0, targets=S, solver_error=bad)


# complex states are refused, never cast to their real part
def test_complex_states_refused(euler):
    env, prm, S, V, model = euler
    Z = S.astype(complex) + 1j
    sim = HybridSimulator(env, model)
    calls = [lambda: model.predict(Z, 4, V), lambda: model.predict(torch.as_tensor(Z), 4, V),
             lambda: step_doubling(model, Z, V, 4), lambda: step_doubling_map(model, Z, V, 4),
             lambda: predict_raw(model, Z, V, 4), lambda: check_batch(env.state_shape, 1, Z, V, 4),
             lambda: sim.mode1(Z, prm, 4), lambda: sim.mode2(Z, prm, 4, threshold=1.0),
             lambda: step_doubling(model, S, V.astype(complex), 4), lambda: sim.calibrate(S, prm, 4, error_budget=0.1, targets=Z)]
    for call in calls:
        with pytest.raises(ValueError, match="must hold real numbers, got complex"):
            call()
