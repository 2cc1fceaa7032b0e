"""The seed commands that used to end in an upstream traceback (issue 38, item 8): `make merge-verl` checks verl's
checkpoint and its output folder before verl's merger runs (one line, exit 2), merges, and says so when the same
merge is asked again; the project's `llamafactory-cli` shim checks the model its config names, as the make targets'
pre-flight does, instead of LLaMA-Factory's hub retries."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
RL = REPO / ".venvs" / "rl"
SKIP_ENVS = ["-o", ".venvs/rl/.ready", "-o", ".venvs/llamafactory/.ready", "-o", ".venvs/base/.ready"]


def merge(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "-s", *SKIP_ENVS, "merge-verl", *args], cwd=REPO, capture_output=True,
                          text=True, check=False)


def fake_actor(actor: Path, world_size: int = 1, shards: int | None = None, hf: bool = True) -> Path:
    """An actor folder as verl's FSDP checkpoint manager lays it out (files only; no weights)."""
    actor.mkdir(parents=True)
    (actor / "fsdp_config.json").write_text(json.dumps({"FSDP_version": 2, "world_size": world_size}))
    for rank in range(world_size if shards is None else shards):
        (actor / f"model_world_size_{world_size}_rank_{rank}.pt").write_bytes(b"")
    if hf:
        (actor / "huggingface").mkdir()
        (actor / "huggingface" / "config.json").write_text("{}")
    return actor


def one_line(r: subprocess.CompletedProcess) -> str:
    lines = [line for line in r.stderr.splitlines() if line.startswith("merge-verl: ")]
    assert r.returncode == 2 and len(lines) == 1, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    return lines[0]


def test_merge_verl_names_what_is_missing(tmp_path):
    assert "set CKPT=" in one_line(merge())
    assert one_line(merge(f"CKPT={tmp_path / 'none'}", f"OUT={tmp_path / 'out'}")).endswith(": no such folder")
    assert "holds no verl FSDP checkpoint" in one_line(merge(f"CKPT={tmp_path}", f"OUT={tmp_path / 'out'}"))
    actor = fake_actor(tmp_path / "run" / "global_step_4" / "actor", world_size=2, shards=1)
    line = one_line(merge(f"CKPT={tmp_path / 'run'}", f"OUT={tmp_path / 'out'}"))
    assert "model shard model_world_size_2_rank_1.pt missing" in line and str(actor) in line
    bare = fake_actor(tmp_path / "bare" / "actor", hf=False)
    assert "no huggingface/config.json" in one_line(merge(f"CKPT={bare}", f"OUT={tmp_path / 'out'}"))
    (bare / "fsdp_config.json").unlink()
    assert "no fsdp_config.json" in one_line(merge(f"CKPT={bare.parent}", f"OUT={tmp_path / 'out'}"))


def test_merge_verl_never_writes_into_a_folder_it_did_not_write(tmp_path):
    actor = fake_actor(tmp_path / "run" / "global_step_1" / "actor")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    line = one_line(merge(f"CKPT={actor}", f"OUT={mine}"))
    assert "exists and was not written by make merge-verl" in line
    other = tmp_path / "other"
    other.mkdir()
    (other / ".merge-verl.json").write_text(json.dumps({"from": str(tmp_path / "elsewhere")}))
    assert "holds the merge of another checkpoint" in one_line(merge(f"CKPT={actor}", f"OUT={other}"))
    assert (mine / "notes.txt").read_text() == "mine" and sorted(p.name for p in mine.iterdir()) == ["notes.txt"]


def test_merge_verl_takes_the_newest_step_of_a_run(tmp_path):
    run = tmp_path / "run"
    for step in (2, 10, 9):
        fake_actor(run / f"global_step_{step}" / "actor")
    r = subprocess.run([str(RL / "bin" / "python"), "scripts/merge_verl.py", "check", str(run), str(tmp_path / "o")],
                       cwd=REPO, capture_output=True, text=True, check=False)
    assert r.returncode == 0 and r.stdout.strip() == str(run / "global_step_10" / "actor")
    assert "the newest of 3 steps, global_step_10" in r.stderr
    (run / "latest_checkpointed_iteration.txt").write_text("9")
    r = subprocess.run([str(RL / "bin" / "python"), "scripts/merge_verl.py", "check", str(run), str(tmp_path / "o")],
                       cwd=REPO, capture_output=True, text=True, check=False)
    assert r.stdout.strip() == str(run / "global_step_9" / "actor")


@pytest.mark.slow
def test_merge_verl_merges_with_verls_merger_and_is_idempotent(tmp_path):
    """A checkpoint laid out as verl saves one (the cached tiny model's tensors as rank 0 of world size 1): merged
    tensor for tensor, then the same command again is 'up to date', exit 0, and a newer save merges again."""
    torch = pytest.importorskip("torch")
    from safetensors.torch import load_file

    from core.testing import tiny_qwen25vl_path

    source = tiny_qwen25vl_path()
    actor = tmp_path / "run" / "global_step_2" / "actor"
    (actor / "huggingface").mkdir(parents=True)
    for f in source.iterdir():
        if f.suffix != ".safetensors" and f.is_file():
            shutil.copy(f, actor / "huggingface" / f.name)
    weights = load_file(source / "model.safetensors")
    torch.save(weights, actor / "model_world_size_1_rank_0.pt")
    (actor / "fsdp_config.json").write_text(json.dumps({"FSDP_version": 2, "world_size": 1}))
    out = tmp_path / "merged"
    r = merge(f"CKPT={tmp_path / 'run'}", f"OUT={out}")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert f"merge-verl: {actor} -> {out}" in r.stdout and f"merge-verl: wrote {out}" in r.stdout
    merged = load_file(out / "model.safetensors")
    assert merged.keys() == weights.keys()  # in the config's dtype (verl's merger casts)
    assert all(torch.equal(merged[k], weights[k].to(merged[k].dtype)) for k in weights)
    assert json.loads((out / ".merge-verl.json").read_text())["from"] == str(actor.resolve())
    again = merge(f"CKPT={tmp_path / 'run'}", f"OUT={out}")
    assert again.returncode == 0 and "is up to date" in again.stderr and "->" not in again.stdout
    later = (out / ".merge-verl.json").stat().st_mtime + 5
    os.utime(actor / "model_world_size_1_rank_0.pt", (later, later))
    assert f"-> {out}" in merge(f"CKPT={tmp_path / 'run'}", f"OUT={out}").stdout


@pytest.fixture
def shim(tmp_path) -> Path:
    """The shim installed as make_env.sh installs it, beside the real rl python, in front of a stand-in
    LLaMA-Factory that prints what it was asked to run."""
    venvs = tmp_path / "repo" / ".venvs"
    rl_bin = venvs / "rl" / "bin"
    rl_bin.mkdir(parents=True)
    shutil.copy2(REPO / "scripts" / "llamafactory-cli", rl_bin / "llamafactory-cli")
    (rl_bin / "python").symlink_to(RL / "bin" / "python")
    shutil.copy(RL / "pyvenv.cfg", venvs / "rl" / "pyvenv.cfg")
    (venvs / "rl" / "lib").symlink_to(RL / "lib")
    (venvs / "llamafactory" / "bin").mkdir(parents=True)
    real = venvs / "llamafactory" / "bin" / "llamafactory-cli"
    real.write_text('#!/bin/sh\necho "ran HF_HUB_OFFLINE=$HF_HUB_OFFLINE $*"\n')
    real.chmod(0o755)
    return rl_bin / "llamafactory-cli"


def run_shim(shim: Path, *args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.endswith("_OFFLINE")}
    return subprocess.run([str(shim), *args], cwd=cwd, capture_output=True, text=True, check=False,
                          env={**base, "HF_HOME": str(cwd / "hf-home"), **env})


def test_llamafactory_cli_checks_the_yamls_model_as_make_does(shim, tmp_path):
    yaml = tmp_path / "sft.yaml"
    yaml.write_text("model_name_or_path: Qwen/Qwen2.5-VL-3B-Instruct  # seed\nstage: sft\n")
    r = run_shim(shim, "train", str(yaml), cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == "", r.stdout + r.stderr
    assert r.stderr.strip().splitlines() == [
        "llamafactory-cli: model_name_or_path=Qwen/Qwen2.5-VL-3B-Instruct is not in the Hugging Face cache "
        f"({tmp_path / 'hf-home' / 'hub'}): download it with `make download-model MODEL=Qwen/Qwen2.5-VL-3B-Instruct`,"
        " or set model_name_or_path= a local model folder"]
    # A later override wins; a local folder passes, and LLaMA-Factory runs offline with every argument.
    (tmp_path / "model").mkdir()
    r = run_shim(shim, "train", str(yaml), f"model_name_or_path={tmp_path / 'model'}", "bf16=false", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"ran HF_HUB_OFFLINE=1 train {yaml} model_name_or_path={tmp_path / 'model'} bf16=false"
    r = run_shim(shim, "train", str(yaml), "--model_name_or_path", "/nonexistent", cwd=tmp_path)
    assert r.returncode == 2 and "model_name_or_path=/nonexistent: no such folder" in r.stderr
    # Downloads allowed by the user: the Hub id passes to LLaMA-Factory.
    r = run_shim(shim, "train", str(yaml), cwd=tmp_path, HF_HUB_OFFLINE="0")
    assert r.returncode == 0 and r.stdout.startswith("ran HF_HUB_OFFLINE=0 train"), r.stderr


def test_llamafactory_cli_names_a_missing_config_and_leaves_other_commands_alone(shim, tmp_path):
    r = run_shim(shim, "train", "examples/none.yaml", cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.strip() == "llamafactory-cli: examples/none.yaml: no such config file"
    r = run_shim(shim, "version", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.strip() == "ran HF_HUB_OFFLINE=1 version"


@pytest.mark.parametrize("value", ["x';touch {p};'", "`touch {p}`", "$$(touch {p})", 'x"; touch {p}; "'])
def test_merge_verl_values_never_reach_a_shell(tmp_path, value):
    marker = tmp_path / "evaluated"
    for args in ([f"CKPT={value.format(p=marker)}", f"OUT={tmp_path / 'o'}"],
                 [f"CKPT={tmp_path}", f"OUT={value.format(p=marker)}"]):
        r = merge(*args)
        assert r.returncode == 2 and not marker.exists(), r.stderr
