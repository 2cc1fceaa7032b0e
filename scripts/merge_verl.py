"""`make merge-verl`'s pre-flight and record: verl's FSDP checkpoint -> a Hugging Face folder (mk/merge.mk).

    python scripts/merge_verl.py check CKPT OUT    print the actor folder to merge (stdout), or one line and exit 2;
                                                   exit 10 (saying so on stderr) when OUT is already this merge
    python scripts/merge_verl.py mark ACTOR OUT    after the merge: record in OUT which checkpoint it holds

CKPT is the actor folder verl saved (``.../global_step_N/actor``: ``fsdp_config.json``, one
``model_world_size_W_rank_R.pt`` per rank, ``huggingface/``), its ``global_step_N`` folder, or the run folder
holding ``global_step_N`` folders (the newest step is taken: ``latest_checkpointed_iteration.txt``, else the
largest N). OUT is a new (or empty) folder, or one this target wrote before: ``OUT/.merge-verl.json`` names the
checkpoint it holds. Standard library only (it runs before verl is imported, in under a second).
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

WHO = "merge-verl"
MARK = ".merge-verl.json"
UP_TO_DATE = 10
USAGE = "set CKPT=<verl checkpoint: the actor folder, its global_step_N folder or the run folder> and OUT=<new folder>"


class Refused(Exception):
    """One line for the user; exit 2."""


def actor_folder(ckpt: Path) -> tuple[Path, str]:
    """The actor folder CKPT names, and how it was found (said when it is not CKPT itself)."""
    if not ckpt.exists():
        raise Refused(f"CKPT={ckpt}: no such folder")
    if not ckpt.is_dir():
        raise Refused(f"CKPT={ckpt} is a file; give the checkpoint folder ({USAGE})")
    if (ckpt / "fsdp_config.json").is_file():
        return ckpt, ""
    if (ckpt / "actor").is_dir():
        return ckpt / "actor", ""
    steps = {int(m.group(1)): p for p in ckpt.iterdir() if p.is_dir() and (m := re.fullmatch(r"global_step_(\d+)", p.name))}
    if steps:
        latest = ckpt / "latest_checkpointed_iteration.txt"
        text = latest.read_text(encoding="utf-8").strip() if latest.is_file() else ""
        step = int(text) if text.isdigit() and int(text) in steps else max(steps)
        how = f"the newest of {len(steps)} steps" if len(steps) > 1 else "its one step"
        return steps[step] / "actor", f" ({how}, global_step_{step})"
    if ckpt.name == "huggingface" and (ckpt.parent / "fsdp_config.json").is_file():
        raise Refused(f"CKPT={ckpt} is the actor's config folder; give its parent, {ckpt.parent}")
    raise Refused(f"CKPT={ckpt} holds no verl FSDP checkpoint (no fsdp_config.json, actor/ or global_step_N/ in it)")


def check_actor(actor: Path) -> int:
    """The actor folder's world size, once every file the merger reads is there."""
    config = actor / "fsdp_config.json"
    if not actor.is_dir():
        raise Refused(f"{actor}: no such folder (the checkpoint has no actor/)")
    if not config.is_file():
        megatron = " (a Megatron checkpoint? this target merges FSDP ones)" if (actor / "dist_ckpt").exists() else ""
        raise Refused(f"{actor}: no fsdp_config.json, so not a verl FSDP actor checkpoint{megatron}")
    try:
        world_size = json.loads(config.read_text(encoding="utf-8"))["world_size"]
    except (OSError, ValueError, KeyError, TypeError):
        raise Refused(f"{config}: not a JSON object with world_size") from None
    if not isinstance(world_size, int) or isinstance(world_size, bool) or world_size < 1:
        raise Refused(f"{config}: world_size {world_size!r} is not a positive integer")
    missing = [f"model_world_size_{world_size}_rank_{r}.pt" for r in range(world_size)
               if not (actor / f"model_world_size_{world_size}_rank_{r}.pt").is_file()]
    if missing:
        raise Refused(f"{actor}: model shard {missing[0]} missing ({len(missing)} of the {world_size} that "
                      f"fsdp_config.json's world_size {world_size} needs; an interrupted save?)")
    if not (actor / "huggingface" / "config.json").is_file():
        raise Refused(f"{actor}: no huggingface/config.json (verl saves the model's config and tokenizer there; "
                      f"the merger builds the model from it)")
    return world_size


def newest_input(actor: Path) -> float:
    return max(p.stat().st_mtime for p in [actor / "fsdp_config.json", *actor.glob("model_world_size_*_rank_*.pt")])


def check_output(out: Path, actor: Path) -> bool:
    """True when OUT already holds this merge, up to date; raises when OUT is not this target's to write."""
    if not out.exists():
        return False
    if not out.is_dir():
        raise Refused(f"OUT={out} is a file; give a new folder")
    if not any(out.iterdir()):
        return False
    mark = out / MARK
    try:
        source = json.loads(mark.read_text(encoding="utf-8"))["from"]
    except (OSError, ValueError, KeyError, TypeError):
        raise Refused(f"OUT={out} exists and was not written by make merge-verl (no {MARK}): choose another OUT, "
                      f"or move it away") from None
    if Path(source) != actor.resolve():
        raise Refused(f"OUT={out} holds the merge of another checkpoint ({source}): choose another OUT, or remove "
                      f"it to merge {actor} there")
    return mark.stat().st_mtime >= newest_input(actor) and (out / "config.json").is_file()


def check(ckpt: str, out: str) -> int:
    if not ckpt.strip() or not out.strip():
        raise Refused(USAGE)
    actor, how = actor_folder(Path(ckpt))
    check_actor(actor)
    if check_output(Path(out), actor):
        print(f"{WHO}: {out} is up to date (merged from {actor}); nothing to do", file=sys.stderr)  # stdout: the actor
        return UP_TO_DATE
    print(actor)
    if how:
        print(f"{WHO}: CKPT={ckpt}: {actor}{how}", file=sys.stderr)
    return 0


def mark(actor: str, out: str) -> int:
    record = Path(out) / MARK
    tmp = record.with_name(record.name + ".tmp")
    tmp.write_text(json.dumps({"from": str(Path(actor).resolve()), "by": "make merge-verl"}) + "\n", encoding="utf-8")
    os.replace(tmp, record)
    print(f"{WHO}: wrote {out} (a Hugging Face folder: gui-agent infer --model {out}, make infer MODEL_PATH={out})")
    return 0


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[0] not in {"check", "mark"}:
        print("usage: python scripts/merge_verl.py check CKPT OUT | mark ACTOR OUT", file=sys.stderr)
        return 2
    try:
        return check(argv[1], argv[2]) if argv[0] == "check" else mark(argv[1], argv[2])
    except Refused as e:
        print(f"{WHO}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
