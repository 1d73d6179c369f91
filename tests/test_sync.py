"""The committed package, notebooks and README are exactly what nbdev-export, nbdev-clean and `hnwm readme`
(tools/readme.py) produce."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def _tracked():
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [f for f in out.decode().split("\0") if f]


def test_export_and_clean_change_nothing(tmp_path):
    files = _tracked()
    for f in files:  # a scratch copy: the test never touches the working tree
        dst = tmp_path / f
        dst.parent.mkdir(parents=True, exist_ok=True)
        if (ROOT / f).is_file():
            shutil.copy2(ROOT / f, dst)
    subprocess.run([BIN / "nbdev-export"], cwd=tmp_path, check=True, capture_output=True)
    subprocess.run([BIN / "nbdev-clean"], cwd=tmp_path, check=True, capture_output=True)
    changed = [f for f in files if f.startswith(("nbs/", "hybrid_nbs/")) and f.endswith((".py", ".ipynb"))
               and (tmp_path / f).read_bytes() != (ROOT / f).read_bytes()]
    new = sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / "hybrid_nbs").rglob("*.py")
                 if str(p.relative_to(tmp_path)) not in files)
    assert not changed, f"nbdev-export / nbdev-clean would change {changed}: run them and commit"
    assert not new, f"nbdev-export writes untracked modules {new}: commit them"


def test_readme_is_current():
    "README.md is what the development tool tools/readme.py renders from nbs/index.ipynb."
    import importlib.util
    spec = importlib.util.spec_from_file_location("readme", ROOT / "tools" / "readme.py")
    readme = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(readme)
    assert (ROOT / "README.md").read_text() == readme.render_readme(ROOT / "nbs" / "index.ipynb"), "run `hnwm readme`"
