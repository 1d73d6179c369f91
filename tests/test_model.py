"""The surrogate: every registry entry's smoke check, padding modes, translation equivariance, bad input, config round trip."""
import json

import numpy as np
import pytest
import torch

from hybrid_nbs.model import MODELS, SurrogateConfig, UNetConfig, build_model, model_config_for, n_params
from hybrid_nbs.nets import PADDINGS, FiLM, HorizonEmbedding, Normalizer
from hybrid_nbs.model_cost import count_flops, inference_benchmark
from toys import perturbed

torch.set_num_threads(1)


@pytest.fixture(autouse=True)
def _no_grad():
    "Forward passes only; scoped to each test so no other test module inherits disabled gradients."
    with torch.no_grad():
        yield

# Realistic layouts and raw values: Oregonator (u, v) with [f, eps, q, D]; Euler conserved variables with [gamma];
# balls (x, y, z, v, omega) with [restitution, gravity]. Constant parameters have std 0 on purpose.
ENVS = {
    "oregonator": dict(channels=2, mean=[0.1, 0.1], std=[0.2, 0.1], p_mean=[1.25, 0.05, 0.002, 1.0], p_std=[0.4, 0.017, 0.0, 0.0],
                       padding="circular", n=32),
    "euler": dict(channels=4, mean=[1.0, 0.0, 0.0, 2.5], std=[0.4, 0.3, 0.3, 1.2], p_mean=[1.4], p_std=[0.0],
                  padding="replicate", n=32),
    "balls": dict(channels=9, mean=[0, 0, 0.5, 0, 0, 0, 0, 0, 0], std=[0.3, 0.3, 0.3, 1.5, 1.5, 1.5, 0, 0, 0],
                  p_mean=[0.82, -9.75], p_std=[0.07, 0.43], n_balls=3),
}


def make_config(arch, env_name, padding=None, n=None):
    e = ENVS[env_name]
    shape = (e["n_balls"], 9) if env_name == "balls" else (e["channels"], n or e["n"], n or e["n"])
    return SurrogateConfig(arch, env_name, shape, padding or e.get("padding", "zeros"), e["mean"], e["std"],
                           e["p_mean"], e["p_std"])


def raw_state(cfg, batch=2, seed=0):
    g = torch.Generator().manual_seed(seed)
    mean, std = torch.tensor(cfg.state_mean), torch.tensor(cfg.state_std).clamp(min=0.1)
    if cfg.arch.kind == "unet":
        return mean[:, None, None] + std[:, None, None] * torch.randn(batch, *cfg.state_shape, generator=g)
    return mean + std * torch.randn(batch, *cfg.state_shape, generator=g)


def perturb(model, seed=0):
    "Give the zero-initialised layers random weights, so that outputs depend on the input and the conditioning."
    return perturbed(model, seed, zero_only=True)


CASES = [(name, env) for name, arch in MODELS.items() if name.split("-")[1] in ("smoke", "laptop")
         for env in (("balls",) if arch.kind == "mlp" else ("oregonator", "euler"))]


@pytest.mark.parametrize("name,env", CASES, ids=[f"{n}-{e}" for n, e in CASES])
def test_registry_smoke(name, env):
    model = build_model(make_config(MODELS[name], env))
    x = raw_state(model.config)
    z = model.state_norm(x)
    out = model(z, torch.tensor([1.0, 64.0]), torch.tensor(model.config.param_mean))
    assert out.shape == z.shape and out.dtype == torch.float32 and torch.isfinite(out).all()
    assert torch.equal(out, z)  # exact identity at initialisation: the last layer is zero-initialised
    pred = model.predict(x.numpy().astype(np.float64), 3.5, np.array(model.config.param_mean))
    assert pred.dtype == np.float64 and pred.shape == tuple(x.shape)
    np.testing.assert_allclose(pred, x.numpy(), atol=1e-5)


def test_paper_sizes():
    unet = build_model(make_config(MODELS["unet-paper"], "euler"))
    mlp = build_model(make_config(MODELS["mlp-paper"], "balls"))
    assert 3.3e6 < n_params(unet) < 3.9e6  # the paper reports about 3.6 M
    assert mlp.net.blocks.__len__() == 4 and mlp.net.inp.out_features == 256
    z = torch.zeros(1, 4, 32, 32)
    assert torch.equal(unet(z, 2.0, [1.4]), z)


def test_defaults_per_profile():
    assert model_config_for("oregonator", "paper").name == "unet-paper"
    assert model_config_for("balls", "laptop").name == "mlp-laptop"
    with pytest.raises(ValueError, match="neither a registered name"):
        model_config_for("navier", "smoke")


def test_horizon_embedding_separates_ladder():
    e = HorizonEmbedding()(2.0 ** torch.arange(7))
    assert torch.pdist(e).min() > 1.0
    assert torch.isfinite(HorizonEmbedding()(torch.tensor([0.25, 1.5, 200.0]))).all()


def test_film_is_identity_at_init_and_conditioning_is_an_argument():
    film, h = FiLM(8, 4), torch.randn(3, 4, 5, 5)
    assert torch.equal(film(h, torch.randn(3, 8)), h)
    assert not any(isinstance(v, torch.Tensor) for k, v in vars(film).items() if not k.startswith("_"))


def test_conditioning_changes_output():
    model = perturb(build_model(make_config(MODELS["unet-smoke"], "oregonator")))
    z = torch.randn(1, 2, 32, 32)
    p = torch.tensor(model.config.param_mean)
    assert not torch.allclose(model(z, 1.0, p), model(z, 64.0, p))
    assert not torch.allclose(model(z, 4.0, p), model(z, 4.0, p + torch.tensor([0.5, 0.0, 0.0, 0.0])))


@pytest.mark.parametrize("padding", PADDINGS)
def test_padding_modes(padding):
    model = build_model(make_config(MODELS["unet-smoke"], "euler", padding=padding))
    convs = [m for m in model.modules() if isinstance(m, torch.nn.Conv2d) and m.kernel_size == (3, 3)]
    assert convs and all(c.padding_mode == padding for c in convs)
    perturb(model)
    assert torch.isfinite(model(torch.randn(2, 4, 16, 16), 8.0, [1.4])).all()


@pytest.mark.parametrize("arch", ["unet-smoke", "unet-laptop"])
def test_circular_unet_is_translation_equivariant(arch):
    model = perturb(build_model(make_config(MODELS[arch], "oregonator", n=32)))
    f = 2 ** (len(MODELS[arch].widths) - 1)
    z, p = torch.randn(2, 2, 32, 32), torch.tensor(model.config.param_mean)
    out = model(z, 4.0, p)
    for sy, sx in ((f, 0), (0, 3 * f), (-2 * f, f)):
        torch.testing.assert_close(model(z.roll((sy, sx), (2, 3)), 4.0, p), out.roll((sy, sx), (2, 3)), atol=1e-5, rtol=1e-5)


def test_replicate_unet_is_not_periodic():
    model = perturb(build_model(make_config(MODELS["unet-smoke"], "euler")))
    z = torch.randn(1, 4, 32, 32)
    assert not torch.allclose(model(z.roll(4, 3), 4.0, [1.4]), model(z, 4.0, [1.4]).roll(4, 3), atol=1e-4)


def test_resolution_agnostic_grid():
    model = build_model(make_config(MODELS["unet-laptop"], "oregonator"))
    for n in (16, 64, 96):
        assert model(torch.zeros(1, 2, n, n), 1.0, model.config.param_mean).shape == (1, 2, n, n)


def test_bad_inputs():
    model = build_model(make_config(MODELS["unet-laptop"], "oregonator"))  # 3 levels: n must be divisible by 4
    p = model.config.param_mean
    cases = [
        (lambda: model(torch.zeros(1, 2, 30, 32), 1.0, p), "not divisible"),
        (lambda: model(torch.zeros(1, 3, 32, 32), 1.0, p), "channels"),
        (lambda: model(torch.zeros(2, 32, 32), 1.0, p), "shape"),
        (lambda: model(torch.zeros(1, 2, 32, 32), 0.0, p), "horizon"),
        (lambda: model(torch.zeros(1, 2, 32, 32), -4.0, p), "horizon"),
        (lambda: model(torch.zeros(2, 2, 32, 32), [1.0, 2.0, 4.0], p), "horizon"),
        (lambda: model(torch.zeros(1, 2, 32, 32), float("nan"), p), "horizon"),
        (lambda: model(torch.zeros(1, 2, 32, 32), 1.0, p[:2]), "params"),
        (lambda: model(torch.full((1, 2, 32, 32), float("nan")), 1.0, p), "non-finite"),
        (lambda: model.predict(np.full((2, 32, 32), np.inf), 1.0, p), "non-finite"),
    ]
    for fn, msg in cases:
        with pytest.raises(ValueError, match=msg):
            fn()
    balls = build_model(make_config(MODELS["mlp-smoke"], "balls"))
    with pytest.raises(ValueError, match="shape"):
        balls(torch.zeros(1, 4, 9), 1.0, [0.8, -9.8])
    with pytest.raises(ValueError, match="Unknown model"):
        build_model("unet-huge")
    with pytest.raises(ValueError, match="needs env"):
        build_model("unet-smoke")


def test_zero_std_gives_finite_normalisation():
    norm = Normalizer([1.4], [0.0], axis=-1)
    assert torch.equal(norm(torch.tensor([[1.4]])), torch.zeros(1, 1))
    assert torch.isfinite(norm(torch.tensor([[1.67]]))).all()
    with pytest.raises(ValueError, match="non-negative"):
        Normalizer([0.0], [-1.0])


def test_bad_configs():
    with pytest.raises(ValueError, match="multiples of groups"):
        UNetConfig("x", widths=(12, 20))
    with pytest.raises(ValueError, match="padding"):
        make_config(MODELS["unet-smoke"], "euler", padding="reflect")
    with pytest.raises(ValueError, match="channels"):
        SurrogateConfig(MODELS["unet-smoke"], "euler", (4, 32, 32), "zeros", [0.0], [1.0], [1.4], [0.0])
    with pytest.raises(ValueError, match="does not suit"):
        SurrogateConfig(MODELS["mlp-smoke"], "euler", (4, 32, 32), "zeros", [0.0] * 4, [1.0] * 4, [1.4], [0.0])


@pytest.mark.parametrize("name,env", CASES, ids=[f"{n}-{e}" for n, e in CASES])
def test_config_round_trip_rebuilds_the_model(name, env):
    cfg = make_config(MODELS[name], env)
    d = json.loads(json.dumps(cfg.to_dict()))
    back = SurrogateConfig.from_dict(d)
    assert back == cfg
    a, b = perturb(build_model(cfg)), build_model(back, seed=1)
    b.load_state_dict(a.state_dict())
    x = a.state_norm(raw_state(cfg))
    assert torch.equal(a(x, 8.0, cfg.param_mean), b(x, 8.0, cfg.param_mean))


def test_from_dict_rejects_unknown_and_missing_keys():
    d = make_config(MODELS["unet-smoke"], "oregonator").to_dict()
    for bad, msg in [(d | {"extra": 1}, "unknown keys"), ({k: v for k, v in d.items() if k != "padding"}, "missing keys"),
                     (d | {"arch": d["arch"] | {"depth": 3}}, "unknown keys"), (d | {"arch": {**d["arch"], "kind": "vit"}}, "arch.kind"),
                     (d | {"arch": {k: v for k, v in d["arch"].items() if k != "widths"}}, "missing keys"), ([1, 2], "mapping")]:
        with pytest.raises(ValueError, match=msg):
            SurrogateConfig.from_dict(bad)


def test_build_seed_is_deterministic_and_leaves_rng_alone():
    cfg = make_config(MODELS["mlp-smoke"], "balls")
    torch.manual_seed(123)
    before = torch.rand(1)
    torch.manual_seed(123)
    a, b = build_model(cfg, seed=7), build_model(cfg, seed=7)
    assert torch.equal(torch.rand(1), before)
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))


def test_flops_and_benchmark():
    model = build_model(make_config(MODELS["unet-smoke"], "oregonator"))
    one = count_flops(model)
    assert one > 0 and count_flops(model, batch=3) == 3 * one
    before = torch.get_num_threads()
    rows = inference_benchmark(model, batch_sizes=(1, 2), threads=(1,), min_time=0.0, min_reps=1)
    assert [r["batch"] for r in rows] == [1, 2] and all(r["forward_per_s"] > 0 for r in rows)
    assert torch.get_num_threads() == before  # the caller's thread count is restored
