"""The hnwm command: argument errors, and a real smoke reproduction of one notebook into a scratch folder."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HNWM = Path(sys.executable).parent / "hnwm"


def run(*args, cwd=ROOT):
    return subprocess.run([HNWM, *args], cwd=cwd, capture_output=True, text=True)


def test_help_lists_commands():
    r = run("--help")
    assert r.returncode == 0 and all(c in r.stdout for c in ("reproduce", "bench", "docs"))


def test_unknown_profile_is_rejected():
    r = run("reproduce", "--profile", "huge")
    assert r.returncode == 2 and "invalid choice: 'huge'" in r.stderr


def test_unknown_notebook_is_a_clear_error():
    r = run("reproduce", "--profile", "smoke", "--only", "no_such_notebook")
    assert r.returncode == 1 and "No notebook" in r.stderr


def test_reproduce_writes_runs_and_figures_outside_nbs(tmp_path):
    before = {p: p.read_bytes() for p in (ROOT / "nbs").rglob("*.ipynb")}
    r = run("reproduce", "--profile", "smoke", "--only", "02a_euler_validation", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr[-2000:]
    assert (tmp_path / "_runs" / "02a_euler_validation.ipynb").is_file()
    assert (tmp_path / "figures" / "euler_shock_tubes.png").stat().st_size > 10_000
    assert "Sod" in (tmp_path / "tables" / "euler_validation.md").read_text()
    assert all(p.read_bytes() == b for p, b in before.items()), "reproduce wrote into nbs/"
    assert not list((ROOT / "nbs").rglob("*.partial")) and not (ROOT / "nbs" / "_runs").exists()


def test_evaluate_without_a_checkpoint_names_the_command(tmp_path):
    r = run("evaluate", "--env", "balls", "--profile", "smoke", "--root", str(tmp_path))
    assert r.returncode == 1 and "hnwm train --env balls --profile smoke --seed 0" in r.stderr
