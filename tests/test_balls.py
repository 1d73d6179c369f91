"""Fast checks of `hybrid_nbs.envs.balls`: bad input, determinism, exact composition, no overlap."""
import numpy as np
import pytest

from hybrid_nbs.core import SPLITS, make_rng
from hybrid_nbs.env import rollout
from hybrid_nbs.conformance import check_env
from hybrid_nbs.envs.balls import FLOOR, IC_FAMILIES, PAIR, VX, VZ, Z, Balls, contact_time


@pytest.fixture(scope="module")
def env():
    return Balls()


@pytest.fixture(scope="module")
def case(env):
    p = env.sample_params(make_rng(0, "balls", "train", 0), "train")
    return p, env.initial_state(p, make_rng(0, "balls", "train", 0))


def test_conformance():
    check_env(Balls(n_balls=3))


@pytest.mark.parametrize("edit, message", [
    (lambda s: s.__setitem__((1, slice(0, 3)), s[0, :3] + [0.06, 0, 0]), "overlap"),
    (lambda s: s.__setitem__((0, Z), 0.0), "outside the box"),
    (lambda s: s.__setitem__((0, 0), 0.49), "outside the box"),
    (lambda s: s.__setitem__((2, VX), np.inf), "non-finite"),
    (lambda s: s.__setitem__((2, VZ), np.nan), "non-finite"),
])
def test_bad_state(env, case, edit, message):
    p, s = case
    bad = s.copy()
    edit(bad)
    with pytest.raises(ValueError, match=message):
        env.advance(bad, p, 1)


def test_bad_arguments(env, case):
    p, s = case
    for call, message in [
        (lambda: env.advance(s[:4], p, 1), "shape"),
        (lambda: env.advance(s.astype(int), p, 1), "dtype"),
        (lambda: env.advance(s, p, 0), "n_frames"),
        (lambda: env.advance(s, p, -3), "n_frames"),
        (lambda: env.advance(s, p, 1.5), "n_frames"),
        (lambda: env.advance(s, {"restitution": 0.9}, 1), "Balls.Params"),
        (lambda: Balls(radius=-0.05), "radius"),
        (lambda: Balls(radius=0.0), "radius"),
        (lambda: Balls(n_balls=0), "n_balls"),
        (lambda: Balls(n_balls=400), "too dense"),
        (lambda: Balls(frame_dt=-0.01), "frame_dt"),
        (lambda: Balls(rough=True, tangential=1.5), "tangential"),
        (lambda: Balls.Params(restitution=1.01), "restitution"),
        (lambda: Balls.Params(restitution=-0.2), "restitution"),
        (lambda: Balls.Params(gravity=float("nan")), "gravity"),
        (lambda: Balls.Params(gravity=9.81), "gravity"),
        (lambda: Balls.Params(speed_min=3.0, speed_max=1.0), "speed_max"),
        (lambda: env.sample_params(make_rng(0), "training"), "Unknown split"),
    ]:
        with pytest.raises(ValueError, match=message):
            call()


def test_determinism_and_composition(env, case):
    p, s = case
    whole = env.advance(s, p, 60)
    np.testing.assert_array_equal(whole, env.advance(s, p, 60))
    np.testing.assert_array_equal(whole, env.advance(env.advance(s, p, 23), p, 37))
    traj = env.rollout(s, p, 60)  # the reference solution: every frame rounded to float32 before the next
    np.testing.assert_array_equal(traj, rollout(env, s, p, 60))  # the compiled loop is the shared procedure
    np.testing.assert_array_equal(traj[10:], env.rollout(traj[10], p, 50))  # restarted from a stored frame: the same
    assert traj.dtype == np.float32 and np.abs(traj[10] - env.advance(s, p, 10)).max() < 1e-6
    np.testing.assert_array_equal(s, case[1])  # the input is not modified


def test_two_families_and_gas_draws_kept(env):
    "A gas keeps the draws it had before the cluster family existed; `family` reads a stored (float32) frame 0."
    seen = set()
    for k in range(16):
        p = env.sample_params(make_rng(7, k), "train")
        s = env.initial_state(p, make_rng(7, k))
        fam = env.family(p, s)
        seen.add(fam)
        assert env.family(p, s.astype(np.float32)) == fam
        if fam == "gas":  # the draw of the single family that came before, consumed first and unchanged
            np.testing.assert_array_equal(s, env._gas(p, make_rng(7, k)))
        else:
            moving = np.linalg.norm(s[:, VX:VZ + 1], axis=1) > 0
            assert moving.sum() == 1 and p.speed_min <= np.linalg.norm(s[moving, VX:VZ + 1]) <= p.speed_max
        env.check_state(s)
    assert seen == set(IC_FAMILIES)
    with pytest.raises(ValueError, match="Unknown family"):
        env.initial_state(Balls.Params(), make_rng(0), family="jet")


def test_unique_seeds_and_splits(env):
    states = np.stack([env.initial_state(Balls.Params(), make_rng(0, "balls", "train", k)) for k in range(50)])
    assert len(np.unique(states.reshape(50, -1), axis=0)) == 50
    for split in SPLITS:
        p = env.sample_params(make_rng(1, split), split)
        assert 0 <= p.restitution <= 1 and p.gravity < 0
        env.check_state(env.initial_state(p, make_rng(1, split)))


@pytest.mark.parametrize("split", ["train", "ood_far"])
def test_no_overlap_ever(env, split):
    for k in range(4):
        p = env.sample_params(make_rng(2, split, k), split)
        s = env.initial_state(p, make_rng(2, split, k))
        _, n, log = env.events(s, p, 200)
        assert n == len(log) > 0
        assert log[:, 8].min() > -1e-12 and log[:, 9].max() < 1e-12  # after every impact
        for frame in env.rollout(s, p, 200):  # and at every frame
            env.check_state(frame)


def test_elastic_energy_and_pair_momentum(env):
    p = Balls.Params(restitution=1.0, gravity=0.0)
    s = env.initial_state(p, make_rng(3))
    E0 = env.invariants(s, p)["energy"]
    end, n, log = env.events(s, p, 2_000)
    assert n > 300
    assert abs(env.invariants(end, p)["kinetic"] - E0) / E0 < 1e-12
    jump = np.abs(np.diff(log[:, 4:7], axis=0)).max(axis=1)
    assert jump[log[1:, 1] == PAIR].max() < 1e-12


def test_single_ball_first_bounce():
    one, p = Balls(n_balls=1), Balls.Params(restitution=0.5, gravity=-9.0)
    s = np.zeros((1, 9))
    s[0, Z] = 0.5
    _, n, log = one.events(s, p, 100)
    t1 = np.sqrt(2 * (0.5 - one.radius) / 9.0)
    assert log[0, 1] == FLOOR and abs(log[0, 0] - t1) < 1e-14
    assert abs(log[1, 0] - (t1 + 2 * 0.5 * 9.0 * t1 / 9.0)) < 1e-13


def test_contact_time_exact():
    drop = np.zeros((1, 1, 9)); drop[0, 0, 2] = 0.5
    np.testing.assert_allclose(contact_time(drop, np.array([-9.81]), 0.05), [[np.sqrt(2 * 0.45 / 9.81)]])
    up = drop.copy(); up[0, 0, 5] = 10.0  # reaches the ceiling (z = 0.95) first: 0.45 = 10 t - 4.905 t^2
    t = (10 - np.sqrt(100 - 2 * 9.81 * 0.45)) / 9.81
    np.testing.assert_allclose(contact_time(up, np.array([-9.81]), 0.05), [[t]])
