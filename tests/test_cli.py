"""The hnwm command: argument errors, a real smoke reproduction of one notebook into a scratch folder, and the dry run
(its projection, and the refusal of a run the disk or the memory cannot hold)."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

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


@pytest.mark.parametrize("args, says", [
    (("train", "--epochs", "1" + "0" * 29), "--epochs: 1" + "0" * 29 + " is out of range (allowed: 1 to 1,000,000)"),
    (("train", "--seed", str(2**40)), "--seed: 1099511627776 is out of range (allowed: 0 to 4,294,967,295)"),
    (("train", "--threads", "1e29"), "--threads: '1e29' is not an integer"),
    (("data", "--workers", "1" + "0" * 29), "--workers: 1" + "0" * 29 + " is out of range (allowed: 0 to"),
    (("evaluate", "--starts", "0"), "--starts: 0 is out of range"),
    (("evaluate", "--n-boot", "-5"), "--n-boot: -5 is out of range"),
    (("reproduce", "--jobs", "0"), "--jobs: 0 is out of range"),
    (("dry-run", "--utilisation", "nan"), "--utilisation: nan is out of range (allowed: above 0, up to 1)"),
    (("train", "--memory-gb", "inf"), "--memory-gb: inf is out of range"),
    (("train", "--root", ""), "--root: is empty"),
    (("data", "--sizes", "train=0"), "--sizes: 0 is out of range (allowed: 1 to"),
    (("data", "--sizes", "train=-3"), "--sizes: -3 is out of range"),
    (("data", "--sizes", "bogus=3"), "--sizes: 'bogus=3' is not split=n with a split among train, val"),
    (("data", "--sizes", "train"), "--sizes: 'train' is not split=n"),
])
def test_out_of_range_numbers_are_refused_with_the_allowed_range(args, says):
    # before: a TypeError traceback after a whole epoch (--epochs 1e29 written out), or an OOM kill (--workers)
    r = run(*args)
    assert r.returncode == 2 and says in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_a_subset_beyond_the_plan_is_refused_before_anything_is_written(tmp_path):
    r = run("data", "--env", "balls", "--profile", "smoke", "--root", str(tmp_path / "data"), "--sizes", "train=5")
    assert r.returncode == 1 and "train=5 exceeds the smoke profile's plan of 4 train trajectories" in r.stderr, r.stderr
    assert not (tmp_path / "data").exists()
    ok = run("data", "--env", "balls", "--profile", "smoke", "--root", str(tmp_path / "data"), "--sizes", "train=2",
             "--split", "train", "--workers", "0")
    assert ok.returncode == 0, ok.stderr[-2000:]
    from hybrid_nbs.store import open_store
    assert open_store(tmp_path / "data/smoke/balls/train.zarr")["states"].shape[0] == 2


def test_unknown_notebook_is_a_clear_error():
    r = run("reproduce", "--profile", "smoke", "--only", "no_such_notebook")
    assert r.returncode == 1 and "matches no notebook of the main job" in r.stderr and "hybrid_euler" in r.stderr
    r = run("reproduce", "--profile", "smoke", "--only", "hybird")  # a typo: the names it could have meant
    assert r.returncode == 1 and "did you mean hybrid" in r.stderr, r.stderr
    r = run("reproduce", "--profile", "smoke", "--only", "")  # an empty name would match everything
    assert r.returncode == 1 and "non-empty names" in r.stderr
    r = run("reproduce", "--profile", "smoke", "--only", "training_curves")  # a notebook of the other job
    assert r.returncode == 1 and "it is in the study job: experiments/training_curves.ipynb" in r.stderr


@pytest.mark.notebooks  # executes a job's notebooks
@pytest.mark.slow  # over 10 s in CI (`make test --durations`)
def test_reproduce_writes_runs_and_figures_outside_nbs(tmp_path):
    before = {p: p.read_bytes() for p in (ROOT / "nbs").rglob("*.ipynb")}
    r = run("reproduce", "--profile", "smoke", "--only", "02a_euler_validation", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr[-2000:]
    assert (tmp_path / "_runs" / "02a_euler_validation.ipynb").is_file()
    assert (tmp_path / "figures" / "euler_shock_tubes.png").stat().st_size > 10_000
    assert "Sod" in (tmp_path / "tables" / "euler_validation.md").read_text()
    cost = (tmp_path / "tables" / "reproduce_cost.md").read_text()  # written under --out, never into the checkout
    assert cost.startswith("<!-- smoke profile") and "One run of `make reproduce`" in cost and "(only 02a_euler_validation)" in cost
    assert "tasks run, 0 made by earlier runs" in cost and cost.count("| this run |") == 1  # the others: "not run yet"
    assert f"done: {tmp_path / 'tables' / 'reproduce_cost.md'}" in r.stderr
    assert all(p.read_bytes() == b for p, b in before.items()), "reproduce wrote into nbs/"
    assert not list((ROOT / "nbs").rglob("*.partial")) and not (ROOT / "nbs" / "_runs").exists()


def test_a_smaller_profile_never_writes_over_the_committed_tables(tmp_path):
    "Without --out a smoke reproduce writes to _out/smoke/; a folder holding laptop results is refused as its --out."
    tables = {p: p.read_bytes() for p in (ROOT / "tables").iterdir()}
    r = run("reproduce", "--profile", "smoke", "--only", "02a_euler_validation", "--out", str(ROOT))
    assert r.returncode == 1 and f"{ROOT} holds the laptop results" in r.stderr and "_out/smoke" in r.stderr, r.stderr
    assert {p: p.read_bytes() for p in (ROOT / "tables").iterdir()} == tables
    env = {**os.environ, "HYBRID_NBS_ROOT": str(tmp_path)}  # the project a default --out is taken in
    r = subprocess.run([HNWM, "reproduce", "--profile", "smoke", "--only", "02a_euler_validation"], cwd=ROOT, env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    out = tmp_path / "_out" / "smoke"
    assert (out / "tables" / "euler_validation.md").is_file() and not (tmp_path / "tables").exists()
    assert f"done: {out / 'tables' / 'reproduce_cost.md'}" in r.stderr


def _wait_for(path: Path, text: str, proc, timeout: float = 300):
    "Poll a job's log until it holds `text` (or the job ends)."
    t0 = time.time()
    while time.time() - t0 < timeout and proc.poll() is None:
        if path.is_file() and text in path.read_text():
            return True
        time.sleep(0.2)
    return False


@pytest.mark.notebooks  # executes a job's notebooks
@pytest.mark.slow  # over 10 s in CI (`make test --durations`)
def test_a_job_killed_in_a_lane_or_interrupted_resumes(tmp_path):
    "SIGKILL of one lane's task stops the job naming it; Ctrl-C stops it too; each rerun resumes with what was done."
    log = tmp_path / "_runs" / "main_smoke.log"
    cmd = [HNWM, "reproduce", "--profile", "smoke", "--only", "hybrid_balls", "--out", str(tmp_path), "--jobs", "2"]
    p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert _wait_for(log, "start  train balls seed1", p), "the job never reached the training"
    lane = subprocess.run(["pgrep", "-f", "hybrid_nbs.cli train --env balls --profile smoke --seed 1"],
                          capture_output=True, text=True).stdout.split()
    for pid in lane:
        os.kill(int(pid), signal.SIGKILL)
    _, err = p.communicate(timeout=300)
    assert p.returncode == 1 and "train balls seed1 failed (exit status -9)" in err, err[-2000:]
    cost = (tmp_path / "tables" / "reproduce_cost.md").read_text()  # what the stopped run finished, and that it stopped
    assert "then stopped" in cost and "| data balls | data |" in cost and "not run yet" in cost, cost
    # a job started from a background shell inherits SIGINT ignored, and Python keeps it so: give Ctrl-C its default back
    p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert _wait_for(log, "start  experiments/hybrid_balls.ipynb", p)
    p.send_signal(signal.SIGINT)  # Ctrl-C in the notebook: the job stops its lanes and says how to resume
    _, err = p.communicate(timeout=120)
    assert p.returncode == 130 and "run the same command again to resume" in err, err[-2000:]
    assert not subprocess.run(["pgrep", "-f", str(tmp_path)], capture_output=True).stdout  # no lane left behind
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "reused data balls" in r.stderr and "reused train balls seed0" in r.stderr, r.stderr
    assert "done   experiments/hybrid_balls.ipynb" in r.stderr
    assert (tmp_path / "tables" / "hybrid_balls_mode2.md").is_file()
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)  # a second run right after: all reused
    assert r.returncode == 0 and "reused experiments/hybrid_balls.ipynb" in r.stderr and "done: nothing ran" in r.stderr


def test_a_second_job_in_the_same_folder_is_refused(tmp_path):
    from hybrid_nbs.paths import exclusive
    with exclusive(tmp_path / "_runs" / "job"):  # what a running job holds
        r = run("study", "--profile", "smoke", "--only", "paper_projection", "--out", str(tmp_path))
    assert r.returncode == 1 and f"is using {tmp_path / '_runs' / 'job'} (lock {tmp_path / '_runs' / 'job.lock'})" in r.stderr


def test_evaluate_without_a_checkpoint_names_the_command(tmp_path):
    r = run("evaluate", "--env", "balls", "--profile", "smoke", "--root", str(tmp_path))
    assert r.returncode == 1 and "hnwm train --env balls --profile smoke --seed 0" in r.stderr


def test_dry_run_projects_every_stage_and_saves_it(tmp_path):
    r = run("dry-run", "--profile", "smoke", "--env", "oregonator", "--steps", "1", "--save", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr[-2000:]
    proj = json.loads((tmp_path / "tables" / "smoke_projection.json").read_text())
    assert (proj["profile"], proj["threads"], list(proj["envs"])) == ("smoke", 1, ["oregonator"])
    e = proj["envs"]["oregonator"]
    assert e["data"]["ratio"] > 1 and e["data"]["float16"]["max_rel_err"] <= 2 ** -11 and e["data"]["fits"]
    assert set(e["data"]["splits"]) == {"train", "val", "calib", "test", "ood_near", "ood_far"}
    assert e["data"]["cpu_hours"] > 0 and e["model"]["arch"] == "unet-smoke"
    t = e["model"]["train"]
    assert t["timed_steps"] == 1 and t["precision_here"] == "float32 (CPU)" and t["gpu_hours"] > 0 and t["cpu_hours"] > 0
    assert e["model"]["mode2"]["batch"] == 2 and set(e["commands"]) == {"data", "train", "evaluate"}
    table = (tmp_path / "tables" / "smoke_projection.md").read_text()
    assert "| oregonator | train |" in table and "989 TFLOP/s peak at 30% utilisation (assumed)" in table


def test_a_run_the_disk_or_memory_cannot_hold_stops_before_it_starts(tmp_path, monkeypatch, capsys):
    from hybrid_nbs import cli, dryrun, resources
    monkeypatch.setattr(resources.shutil, "disk_usage", lambda p: SimpleNamespace(free=10 ** 5))  # 0.1 MB free
    with pytest.raises(ValueError, match=r"smoke dry run would not fit \(disk: needs 0\.\d\d GB at .*, 0\.00 GB free"):
        dryrun.dry_run("smoke", "oregonator", scratch=tmp_path / "scratch")
    assert not (tmp_path / "scratch").exists()
    assert cli.main(["data", "--env", "euler", "--profile", "smoke", "--root", str(tmp_path / "data")]) == 1
    assert "hnwm data --profile smoke would not fit (disk: needs" in capsys.readouterr().err
    assert not (tmp_path / "data").exists()  # nothing written
    monkeypatch.undo()
    monkeypatch.setattr(resources, "_mem_available", lambda: 10 ** 3)  # 1 kB of memory
    with pytest.raises(ValueError, match=r"memory: needs 0\.\d\d GB, 0\.00 GB available"):
        dryrun.dry_run("smoke", "balls", scratch=tmp_path / "scratch")
    assert not (tmp_path / "scratch").exists()


def test_no_augment_reaches_the_training_config(monkeypatch):
    "Training augments with the Env's symmetries unless `--no-augment` says otherwise; the flag arrives as augment=False."
    import hybrid_nbs.pipeline as pipeline
    from hybrid_nbs import cli
    seen = {}

    def fake_train_main(env, profile, **kwargs):
        seen.update(kwargs)
        return dict(env=env, epochs=0, best_val=0.0, best_epoch=0, train_seconds=0.0, ckpt="-")
    monkeypatch.setattr(pipeline, "train_main", fake_train_main)
    assert cli.main(["train", "--env", "balls", "--profile", "smoke", "--no-augment"]) == 0 and seen["augment"] is False
    seen.clear()
    assert cli.main(["train", "--env", "balls", "--profile", "smoke"]) == 0 and "augment" not in seen


MYSIM = '''from hybrid_nbs.envs.balls import Balls

print("a user's module may print on import")


class MyBalls(Balls):
    "The balls, as a user's own module in their working folder."
    name = "myballs"
'''


@pytest.mark.notebooks  # executes a job's notebooks
@pytest.mark.slow  # about 40 s: a smoke main job for one environment
def test_reproduce_runs_the_experiments_of_your_own_env(tmp_path):
    "Issue 38: `hnwm reproduce --env module:Class` from the module's folder: one command, named by the Env's name."
    (tmp_path / "mysim.py").write_text(MYSIM)
    env = {k: v for k, v in os.environ.items() if k not in ("HYBRID_NBS_ROOT", "PYTHONPATH")}
    cmd = [HNWM, "reproduce", "--env", "mysim:MyBalls", "--profile", "smoke"]
    r = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    out = tmp_path / "_out" / "smoke" / "myballs"
    made = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file() and "_runs" not in p.parts}
    assert {"tables/claims.md", "tables/pareto_myballs.md", "tables/hybrid_myballs_results.json",
            "figures/pareto_myballs.png", "results/smoke/experiments/hybrid_myballs.ipynb"} <= made, sorted(made)
    assert not any(":" in p for p in made), sorted(made)  # never the import path in a file name
    claims = (out / "tables" / "claims.md").read_text()
    assert "| myballs |" in claims and "| euler |" not in claims  # the ledger holds this environment's rows alone
    again = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert again.returncode == 0 and "done: nothing ran" in again.stderr, again.stderr[-2000:]
    (tmp_path / "mysim.py").write_text(MYSIM + "\n# edited\n")  # the user's code is the job's code: nothing is reused
    edited = subprocess.run(cmd + ["--only", "ledger"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert edited.returncode == 0 and "done: nothing ran" not in edited.stderr, edited.stderr[-2000:]


def test_reproduce_names_a_module_that_does_not_import(tmp_path):
    (tmp_path / "broken.py").write_text("import no_such_package_here\n")
    env = {k: v for k, v in os.environ.items() if k != "HYBRID_NBS_ROOT"}
    r = subprocess.run([HNWM, "reproduce", "--env", "broken:Env", "--profile", "smoke"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode != 0 and "'broken:Env'" in r.stderr and "no_such_package_here" in r.stderr, r.stderr[-2000:]
    assert not (tmp_path / "_out").exists()  # refused before anything is written
