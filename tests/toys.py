"""Test toys shared by the test files: perturbed surrogates and smoke datasets built once per module."""
import torch

from hybrid_nbs.card import write_card
from hybrid_nbs.data import BuildOptions, build_dataset


def perturbed(model, seed: int = 0, scale: float = 0.05, zero_only: bool = False):
    "`model` with seeded noise of `scale` added to its weights (only to the zero-initialised layers if `zero_only`)."
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        if zero_only:  # outputs then depend on the input and the conditioning, which an identity model's do not
            for m in model.modules():
                if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear)) and not m.weight.any():
                    m.weight.copy_(scale * torch.randn(m.weight.shape, generator=g))
        else:
            for p in model.parameters():
                p.add_(scale * torch.randn(p.shape, generator=g))
    return model.eval()


def smoke_root(tmp_path_factory, envs=("euler",), card: bool = True, name: str = "data"):
    "A fresh data folder with the smoke datasets of `envs` (and their cards and normalisation if `card`)."
    root = tmp_path_factory.mktemp(name)
    for env in envs:
        build_dataset(env, "smoke", "all", root, progress=False, options=BuildOptions(workers=0))
        if card:
            write_card(env, "smoke", root)
    return root
