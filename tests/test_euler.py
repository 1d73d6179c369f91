"""Euler: bad input, positivity on random trajectories from every split, and the exact-solution targets."""
import numpy as np
import pytest

from hybrid_nbs.core import SPLITS, make_rng
from hybrid_nbs.env import advance_many, reference_advance
from hybrid_nbs.envs.euler import ENERGY, RHO, Euler, riemann_state, RIEMANN_CONFIGS, to_primitive
from hybrid_nbs.envs.euler_exact import riemann_cell_averages, shock_tube


@pytest.fixture(scope="module")
def env():
    return Euler(n=32)


@pytest.mark.parametrize("mutate, message", [
    (lambda s: s[:, :16], r"expected \(4, 32, 32\)"),
    (lambda s: s.astype(np.int64), "floating dtype"),
    (lambda s: np.where(np.arange(4)[:, None, None] == RHO, np.nan, s), "non-finite"),
    (lambda s: np.where(np.arange(4)[:, None, None] == ENERGY, np.inf, s), "non-finite"),
    (lambda s: s * np.array([-1.0, 1, 1, 1])[:, None, None], "non-positive density"),
    (lambda s: s * np.array([1.0, 1, 1, 0])[:, None, None], "non-positive pressure"),
    (lambda s: list(s), "numpy array"),
])
def test_bad_state(env, mutate, message):
    good = riemann_state(32, RIEMANN_CONFIGS[3][0])
    with pytest.raises(ValueError, match=message):
        env.advance(mutate(good), env.Params(), 1)


@pytest.mark.parametrize("n_frames", [0, -1, 1.5, True, "2"])
def test_bad_n_frames(env, n_frames):
    with pytest.raises(ValueError, match="n_frames"):
        env.advance(riemann_state(32, RIEMANN_CONFIGS[3][0]), env.Params(), n_frames)


@pytest.mark.parametrize("kwargs, message", [(dict(frame_dt=0.0), "frame_dt"), (dict(frame_dt=-1e-3), "frame_dt"),
                                             (dict(n=0), "n must"), (dict(bc="wall"), "bc must"),
                                             (dict(limiter="superbee2"), "limiter"), (dict(cfl=1.2), r"cfl must be in \(0, 1.0\]"),
                                             (dict(scheme="muscl-hancock", cfl=0.9), "cfl"), (dict(scheme="weno"), "scheme")])
def test_bad_constructor(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Euler(**kwargs)


def test_unknown_split(env):
    with pytest.raises(ValueError, match="Unknown split"):
        env.sample_params(make_rng(0), "training")


def test_random_trajectories_stay_positive_without_retries():
    """Every split's initial conditions stay strictly positive over a rollout, with no step ever repeated."""
    env = Euler(n=32)
    for split in SPLITS:
        for k in range(4):
            rng = make_rng(7, "euler", split, k)
            prm = env.Params() if split == "train" and k == 0 else env.sample_params(rng, split)
            traj = env.rollout(env.initial_state(prm, rng), prm, 16)
            rho, _, _, p = to_primitive(traj.transpose(1, 0, 2, 3))
            assert rho.min() > 0 and p.min() > 0, (split, k)
    assert env._stepper.retries == 0


def test_initial_states_unique_across_splits():
    env = Euler(n=32)
    seen = set()
    for split in SPLITS:
        for k in range(20):
            rng = make_rng(0, "euler", split, k)
            seen.add(env.initial_state(env.sample_params(rng, split), rng).tobytes())
    assert len(seen) == len(SPLITS) * 20


def test_sod_beats_first_order_target_at_128():
    env = Euler(n=128)
    left, right = (1.0, 0.0, 1.0), (0.125, 0.0, 0.1)
    s = shock_tube(env, left, right, 0.2, "y")
    l1 = np.abs(s[RHO][:, 64] - riemann_cell_averages(left, right, 128, 0.2)[0]).mean()
    assert l1 <= 0.007, l1


def test_shock_tube_rejects_bad_axis(env):
    with pytest.raises(ValueError, match="axis"):
        shock_tube(env, (1, 0, 1), (0.125, 0, 0.1), 0.1, axis="z")


def test_advance_many_side_by_side_is_the_serial_answer():
    "Two threads, each trajectory on one with its own work arrays: every row is the serial reference solution bit for bit."
    env = Euler(n=32)
    ps = [env.sample_params(make_rng(5, i), "test") for i in range(5)]
    states = np.stack([env.initial_state(p, make_rng(5, i)) for i, p in enumerate(ps)])
    states[1, RHO, 0, 0] = -1.0  # this row alone is refused
    out, why = advance_many(env, states, ps, 3, workers=2)
    assert list(why) == [1] and "non-positive density" in why[1] and np.isnan(out[1]).all()
    for i in (0, 2, 3, 4):
        np.testing.assert_array_equal(out[i], reference_advance(env, states[i], ps[i], 3))
