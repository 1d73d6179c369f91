"""Issue 39: the Env core with capability protocols; an environment written against the old contract keeps working."""
import ast
import dataclasses
from pathlib import Path

import numpy as np
import pytest

from hybrid_nbs.capabilities import CAPABILITIES, offered, solver_settings_of, symmetries_of
from hybrid_nbs.conformance import check_env
from hybrid_nbs.core import check_split
from hybrid_nbs.defaults import SurrogateDefaults
from hybrid_nbs.env import DataSpec, Env, coarser_grid
from hybrid_nbs.symmetry import dihedral_symmetries
from hybrid_nbs.train_config import train_config_for

PACKAGE = Path(__file__).resolve().parents[1] / "hybrid_nbs"


class OldStyleDecay(Env):
    "Written against the contract before DataSpec and the protocols: facts as class attributes, methods of its own."
    name, channel_names = "old_decay", ("u",)
    profile_sizes = {"smoke": dict(n=8)}
    profile_n_frames = {"paper": 5}
    nogil = True

    @dataclasses.dataclass(frozen=True)
    class Params:
        k: float = 1.0

    def __init__(self, n=16, frame_dt=0.05): self.n, self.frame_dt = n, frame_dt
    @property
    def state_shape(self): return (1, self.n, self.n)
    def sample_params(self, rng, split): return self.Params(k=float(rng.uniform(0.5, 4.0 if check_split(split) == "ood_far" else 2.0)))
    def initial_state(self, params, rng): return rng.uniform(0.5, 1.5, self.state_shape)
    def advance(self, state, params, n_frames):
        if not isinstance(n_frames, int) or n_frames < 1:
            raise ValueError(f"n_frames must be a positive integer, got {n_frames!r}")
        return self.check_state(state) * np.exp(-params.k * self.frame_dt * n_frames)
    def invariants(self, state, params): return {"mass": float(state.sum())}
    def param_vector(self, params): return np.array([params.k], np.float32)
    def config(self): return dict(n=self.n, frame_dt=self.frame_dt)
    def family(self, params, state): return "fast" if params.k > 1.25 else "slow"
    def symmetries(self): return dihedral_symmetries()
    def coarsened(self, factor): return coarser_grid(self, factor)
    def surrogate_defaults(self, profile): return SurrogateDefaults(train=(("epochs", 1),))


def test_an_old_contract_env_keeps_its_facts_and_capabilities():
    spec = OldStyleDecay.data_spec
    assert (spec.sizes, spec.n_frames, spec.nogil) == ({"smoke": dict(n=8)}, {"paper": 5}, True)
    assert Env.data_spec == DataSpec()  # the base is untouched
    env = OldStyleDecay(n=8)
    assert offered(env) == ["Coarsening", "Symmetric", "Families"]
    assert env.restrict(np.ones((1, 8, 8)), 2).shape == (1, 4, 4)  # the block means the base class once gave
    assert [s.label for s in solver_settings_of(env)] == ["reference", "n/2", "n/4", "n/8"]
    assert len(symmetries_of(env)) == 8
    assert check_env(env)["family"] in ("fast", "slow")
    assert train_config_for(env, "smoke").epochs == 1  # its own `surrogate_defaults` is honoured


def test_an_old_contract_env_builds_and_trains(tmp_path):
    from hybrid_nbs.data import BuildOptions, build_dataset
    from hybrid_nbs.card import write_card
    from hybrid_nbs.train import TrainOptions, train
    env = OldStyleDecay(n=8)
    build_dataset(env, "smoke", "all", tmp_path, progress=False, options=BuildOptions(workers=0))
    write_card(env, "smoke", tmp_path)
    out = train(env, "smoke", root=tmp_path, progress=False, options=TrainOptions(threads=1))
    assert out["epochs"] == 1 and np.isfinite(out["best_val"])


def _calls(path: Path) -> list[str]:
    return [f"{path.name}:{n.lineno} .{n.func.attr}(" for n in ast.walk(ast.parse(path.read_text()))
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _WITH_DEFAULT]


# capabilities with a default: the code asks `capabilities` (family_of, symmetries_of, ...), never the Env directly
_WITH_DEFAULT = {"family", "symmetries", "augment", "trivial_scores", "solver_settings", "admissible"}


def test_the_package_asks_for_capabilities_through_their_defaults():
    found = [c for f in sorted(PACKAGE.glob("*.py")) if f.name not in ("capabilities.py", "_modidx.py") for c in _calls(f)]
    assert not found, found


def test_every_capability_is_a_runtime_protocol_and_the_core_is_small():
    assert all(getattr(c, "_is_runtime_protocol", False) for c in CAPABILITIES)
    declared = {*Env.__annotations__, *Env.__abstractmethods__}  # what a subclass says about itself
    assert declared == {"name", "channel_names", "Params", "frame_dt", "data_spec", "state_shape", "sample_params",
                        "initial_state", "advance", "invariants", "param_vector", "config"}, declared
    public = {m for m in dir(Env) if not m.startswith("_")}
    helpers = {"check_state", "rollout", "with_settings"}  # inherited: the first two refinable, the third a solver setting
    assert public - declared == helpers, public - declared  # derived facts are functions (`layout_of`, ...)
    optional = {m for c in CAPABILITIES for m in vars(c) if not m.startswith("_")}
    assert not optional & set(vars(Env)), optional & set(vars(Env))  # "not offered" is absence, said one way


@pytest.mark.parametrize("text", ["raise NotImplementedError", "is not Env.", "is Env."])
def test_not_offered_is_said_one_way(text):
    found = [f.name for f in PACKAGE.rglob("*.py") if f.name != "_modidx.py" and text in f.read_text()]
    assert not found, found
