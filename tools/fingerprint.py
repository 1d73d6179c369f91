"""Fingerprints of the smoke datasets and of smoke-trained weights, to show that a refactor changed no result.

Builds every split of the three registered environments at the smoke profile in one process (no Dask), trains one
seed-0 surrogate each on one thread, and writes sha256 prefixes of every stored array's values, of `norm.json` and
of the trained weights. Run it on two commits and compare the JSON files:

    python tools/fingerprint.py /tmp/before /tmp/before.json     # on the old commit
    python tools/fingerprint.py /tmp/after /tmp/after.json       # on the new one
    python tools/fingerprint.py --compare /tmp/before.json /tmp/after.json

With `--existing PROFILE`, it builds and trains nothing: it hashes what a job already made under a data folder (every
split's arrays, `norm.json`, the weights of every checkpoint's `best` and `last`), e.g. to show that two lanes made
the same bits as one (`hnwm reproduce --jobs 1` against `--jobs 2` into two folders):

    python tools/fingerprint.py --existing smoke _out/j1/data /tmp/j1.json
"""
import argparse
import hashlib
import json
import os
import sys
from pathlib import Path

ARRAYS = ("states", "params", "seeds", "ic_hash", "digest", "done")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def fingerprint(root: Path) -> dict:
    "Build, train and hash everything under `root` (a fresh folder)."
    os.environ["HYBRID_NBS_PROFILE"] = "smoke"
    import numpy as np
    import torch
    import zarr
    from safetensors.torch import load
    from hybrid_nbs.core import SPLITS  # the commit's own splits (calib from issue 11 on): new splits show as differences
    try:
        from hybrid_nbs.pipeline import data_main, train_main
    except ImportError:  # commits before the pipeline module (b840fd5 and older)
        from hybrid_nbs.data import data_main
        from hybrid_nbs.train import train_main
    torch.set_num_threads(1)
    out = {}
    for env in ("oregonator", "euler", "balls"):
        try:  # the build's options in one object (issue 39), else its keywords (commits before it)
            from hybrid_nbs.data import BuildOptions
            data_main(env, "smoke", root=root, progress=False, options=BuildOptions(workers=0))
        except ImportError:
            data_main(env, "smoke", root=root, workers=0, progress=False)
        for split in SPLITS:
            g = zarr.open_group(root / "smoke" / env / f"{split}.zarr", mode="r")
            for a in ARRAYS:
                out[f"{env}/{split}/{a}"] = _sha(np.ascontiguousarray(g[a][...]).tobytes())
        norm = json.loads((root / "smoke" / env / "norm.json").read_text())
        norm.pop("solver_hash")  # the hash of the solver's source: it changes with any edit of the module
        out[f"{env}/norm"] = _sha(json.dumps(norm, sort_keys=True).encode())
        run = train_main(env, "smoke", seed=0, root=root, resume=False, threads=1, progress=False)
        weights = load((root / "smoke" / env / "ckpt" / "seed0" / "best" / "model.safetensors").read_bytes())
        out[f"{env}/weights"] = _sha(b"".join(weights[k].numpy().tobytes() for k in sorted(weights)))
        out[f"{env}/best_val"] = run["best_val"]
    return out


def hash_existing(root: Path, profile: str) -> dict:
    "Hash every store, normalisation and checkpoint under `root/<profile>/` (built and trained by someone else)."
    import numpy as np
    import zarr
    from safetensors.torch import load
    out = {}
    for env_dir in sorted(p for p in (root / profile).iterdir() if p.is_dir()):
        env = env_dir.name
        for store in sorted(env_dir.glob("*.zarr")):
            g = zarr.open_group(store, mode="r")
            for a in ARRAYS:
                out[f"{env}/{store.stem}/{a}"] = _sha(np.ascontiguousarray(g[a][...]).tobytes())
        norm = json.loads((env_dir / "norm.json").read_text())
        norm.pop("solver_hash")
        out[f"{env}/norm"] = _sha(json.dumps(norm, sort_keys=True).encode())
        for w in sorted(env_dir.glob("ckpt/*/*/model.safetensors")):
            weights = load(w.read_bytes())
            out[f"{env}/{w.parent.parent.name}/{w.parent.name}/weights"] = _sha(
                b"".join(weights[k].numpy().tobytes() for k in sorted(weights)))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("first", help="a fresh data folder, or (with --compare) the first JSON file")
    ap.add_argument("second", help="where to write the JSON, or (with --compare) the second JSON file")
    ap.add_argument("--compare", action="store_true", help="compare two fingerprint files")
    ap.add_argument("--existing", metavar="PROFILE", help="hash what is already under the data folder `first` at PROFILE")
    a = ap.parse_args(argv)
    if a.compare:
        x, y = (json.loads(Path(p).read_text()) for p in (a.first, a.second))
        diff = {k: (x.get(k), y.get(k)) for k in sorted(set(x) | set(y)) if x.get(k) != y.get(k)}
        print(f"{len(x)} and {len(y)} entries; {len(diff)} differ" + "".join(f"\n  {k}: {v}" for k, v in diff.items()))
        return 1 if diff else 0
    res = hash_existing(Path(a.first), a.existing) if a.existing else fingerprint(Path(a.first))
    Path(a.second).write_text(json.dumps(res, indent=1) + "\n")
    print(f"{len(res)} entries written to {a.second}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
