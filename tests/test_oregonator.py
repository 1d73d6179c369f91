"""Bad input and determinism of the Oregonator environment (fast: n=32)."""
import numpy as np
import pytest

from hybrid_nbs.core import make_rng
from hybrid_nbs.env import advance_many, reference_advance
from hybrid_nbs.envs.oregonator import Oregonator


@pytest.fixture(scope="module")
def env():
    return Oregonator(n=32, L=12.5)


@pytest.fixture(scope="module")
def state(env):
    return env.initial_state(env.Params(), make_rng(0, "ic"), family="spiral")


def test_wrong_shape(env, state):
    with pytest.raises(ValueError, match="shape"):
        env.advance(state[:, :-1], env.Params(), 1)


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_non_finite(env, state, value):
    bad = state.copy(); bad[0, 1, 2] = value
    with pytest.raises(ValueError, match="non-finite"):
        env.advance(bad, env.Params(), 1)


def test_negative_v(env, state):
    bad = state.copy(); bad[1, 0, 0] = -0.5
    with pytest.raises(ValueError, match="v must lie in"):
        env.advance(bad, env.Params(), 1)


@pytest.mark.parametrize("eps", [0.0, -0.01, float("nan")])
def test_bad_eps(eps):
    with pytest.raises(ValueError, match="eps must be"):
        Oregonator.Params(eps=eps)


@pytest.mark.parametrize("n_frames", [0, -1, 1.5])
def test_bad_n_frames(env, state, n_frames):
    with pytest.raises(ValueError, match="n_frames"):
        env.advance(state, env.Params(), n_frames)


def test_unknown_split(env):
    with pytest.raises(ValueError, match="Unknown split"):
        env.sample_params(make_rng(0), "training")


def test_determinism_and_semigroup(env):
    p = env.sample_params(make_rng(1, "oregonator", "ood_far"), "ood_far")
    s0 = env.initial_state(p, make_rng(1, "ic"))
    np.testing.assert_array_equal(s0, env.initial_state(p, make_rng(1, "ic")))
    assert not np.array_equal(s0, env.initial_state(p, make_rng(2, "ic")))
    whole = env.advance(s0, p, 3)
    np.testing.assert_array_equal(whole, env.advance(s0, p, 3))
    np.testing.assert_allclose(whole, env.advance(env.advance(s0, p, 1), p, 2), rtol=0, atol=1e-13)
    assert np.isfinite(whole).all() and whole.min() >= -1e-9


def test_param_vector_and_config(env):
    p = env.Params()
    v = env.param_vector(p)
    assert v.dtype == np.float32 and v.tolist() == pytest.approx([1.4, 0.05, 0.002, 1.0])
    assert Oregonator(**env.config()).config() == env.config()


def _fft_strang(env, state, p, n_frames):
    "The plain FFT form of the split step, D(h/2) R(h) D(h/2) K times per frame, as an independent check."
    from hybrid_nbs.envs.oregonator_scheme import laplacian_symbol, react
    K = env.n_steps(p)
    h = env.frame_dt / K
    half = np.exp(0.5 * h * p.D * laplacian_symbol(env.n, env.dx))
    U, V = state[0].copy(), state[1].copy()
    for _ in range(n_frames * K):
        U = np.fft.irfft2(np.fft.rfft2(U) * half, s=U.shape)
        react(U, V, h, p.f, p.eps, p.q)
        U = np.fft.irfft2(np.fft.rfft2(U) * half, s=U.shape)
    return np.stack([U, V])


@pytest.mark.parametrize("f,eps", [(1.4, 0.05), (0.5, 0.01)])
def test_fused_kernel_matches_fft_split(state, f, eps):
    env = Oregonator(n=32, L=12.5, scheme="strang")  # the split step (the default is the IMEX one)
    p = env.Params(f=f, eps=eps)
    np.testing.assert_allclose(env.advance(state, p, 2), _fft_strang(env, state, p, 2), rtol=0, atol=1e-10)


def test_heat_kernel_small_box_and_mean():
    from hybrid_nbs.envs.oregonator_scheme import heat_kernel
    for n, Dt in ((8, 0.05), (32, 0.0125), (32, 1e-6)):
        c, R = heat_kernel(n, 25 / 64, Dt)
        assert c.shape == (2 * R + 1,) and 2 * R <= n and (c >= 0).all() and abs(c.sum() - 1) < 1e-15


@pytest.mark.parametrize("scheme", ["imex", "strang"])
def test_stiff_ood_corner_stays_bounded(scheme):
    e = Oregonator(n=32, L=12.5, scheme=scheme)
    p = e.Params(f=0.3, eps=0.01)
    s = e.advance(e.initial_state(p, make_rng(4, "ic"), family="spiral"), p, 20)
    assert np.isfinite(s).all() and s.min() >= 0.0 and s.max() < 1.0


@pytest.mark.parametrize("scheme", ["imex", "strang"])
def test_advance_many_side_by_side_is_the_serial_answer(scheme):
    "Two threads, one trajectory each: every row is the serial reference solution bit for bit; a refused row is NaN with why."
    env = Oregonator(n=32, L=12.5, scheme=scheme)
    ps = [env.sample_params(make_rng(6, i), "test") for i in range(5)]
    states = np.stack([env.initial_state(p, make_rng(6, i)) for i, p in enumerate(ps)])
    states[3, 1, 0, 0] = -0.5  # v below its bounds: this row alone is refused
    out, why = advance_many(env, states, ps, 2, workers=2)
    assert list(why) == [3] and "v must lie in" in why[3] and np.isnan(out[3]).all()
    for i in (0, 1, 2, 4):
        np.testing.assert_array_equal(out[i], reference_advance(env, states[i], ps[i], 2))
