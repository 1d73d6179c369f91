"""Cheap inference levers for a trained surrogate's network, at one thread: eager, `torch.compile`, TorchScript.

`Surrogate.predict` already feeds the U-Net channels-last tensors. This times the network alone (the part a lever
changes) on val states at the longest trained horizon, at batch 1 and 32, with `timing.time_interleaved` (warm,
interleaved, one thread), against two compiled forms: `torch.compile` (Inductor, which needs a C compiler) and
`torch.jit.optimize_for_inference` of a traced module. For each it reports the median milliseconds per call, the
largest difference from the eager output as a fraction of that output's standard deviation (bit-close or not), and
what compiling cost once.

    python tools/inference_levers.py --profile laptop --root data euler oregonator
"""
import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np


def levers(env: str, profile: str, root: Path, repeats: int) -> dict:
    "Milliseconds per call and the largest output difference of each form of seed 0's network, batch 1 and 32."
    import torch

    from hybrid_nbs.checkpoint import load_model
    from hybrid_nbs.held_out import load_split
    from hybrid_nbs.paths import ckpt_dir
    from hybrid_nbs.timing import time_interleaved
    model, _ = load_model(ckpt_dir(env, profile, 0, root) / "best")
    d = load_split(env, profile, "val", [1], root)
    net, out = model.net.eval(), {}
    for b in (1, 32):
        rows = np.arange(b) % len(d.states)
        with torch.no_grad():
            x = model.state_norm(torch.as_tensor(d.states[rows], dtype=torch.float32))
            if model.grid:
                x = x.contiguous(memory_format=torch.channels_last)  # as `Surrogate.predict` feeds it
            cond = model.conditioning(float(model.config.max_horizon), torch.as_tensor(d.vectors[rows], dtype=torch.float32), b)
            eager = net(x, cond)
            t0 = time.perf_counter()
            compiled = torch.compile(net, dynamic=False)
            compiled(x, cond)
            setup = {"compile": time.perf_counter() - t0}
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the tracer's notes on Python control flow it froze
                scripted = torch.jit.optimize_for_inference(torch.jit.trace(net, (x, cond)))
            scripted(x, cond)
            setup["jit"] = time.perf_counter() - t0
            forms = {"eager": net, "compile": compiled, "jit": scripted}
            calls = 20 if b == 1 else 3  # calls per timed job, so that each lasts tens of milliseconds
            jobs = {k: (lambda f=f: [f(x, cond) for _ in range(calls)]) for k, f in forms.items()}
            timed, _ = time_interleaved(jobs, repeats=repeats, n_threads=1)
            out[f"b{b}"] = {k: dict(ms_per_call=1e3 * float(np.median(timed[k].wall)) / calls,
                                    max_diff_over_std=float((f(x, cond) - eager).abs().max() / eager.std()),
                                    setup_s=setup.get(k, 0.0)) for k, f in forms.items()}
        for k, v in out[f"b{b}"].items():
            print(f"{env} batch {b} {k}: {v['ms_per_call']:.3g} ms per call, max difference {v['max_diff_over_std']:.1e} "
                  f"of the output's std, set up in {v['setup_s']:.1f} s", flush=True)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("envs", nargs="+", help="environments with a trained seed 0")
    p.add_argument("--profile", default="laptop")
    p.add_argument("--root", type=Path, default=None, help="the data folder (default the project's data/)")
    p.add_argument("--repeats", type=int, default=5, help="warm interleaved rounds")
    p.add_argument("--out", type=Path, default=None, help="a JSON file for the numbers")
    a = p.parse_args(argv)
    res = {env: levers(env, a.profile, a.root, a.repeats) for env in a.envs}
    if a.out:
        a.out.write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
