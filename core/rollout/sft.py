"""Scripted episodes as supervised fine-tuning conversations in an agent recipe's own format.

The conversation of one episode is exactly the one verl's ``gui_agent`` loop builds and trains on
(:class:`~core.rollout.recipe.RecipeSession`: the first user message with the capped screenshot and the recipe's
task prompt, then per turn the answer and the tool's answer with the next screenshot), with the scripted policy's
answers (:meth:`RecipeSession.gold_text`: ``Thought:``, ``Action:`` and one ``mobile_use`` call on the recipe's
grid). The ``mobile_use`` tool schema reaches the model the way the chat template writes it for the loop: the
system turn the Qwen3-VL template renders for ``tools`` (:func:`tools_system_text`, read from the model's own
template), given to the SFT framework as a plain system message so that its token sequence is the loop's.

:func:`write_llamafactory_sft` writes LLaMA-Factory's sharegpt layout: ``<name>.jsonl`` (``messages`` with roles
``system`` / ``user`` / ``assistant`` / ``tool``, ``<image>`` placeholders, ``images`` paths relative to the file),
the screenshots as PNG files beside it and the ``dataset_info.json`` entry (``tool`` is the observation tag: the
template writes it as the Qwen3-VL chat template writes a tool message, ``<tool_response>`` in a user turn).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.agent_recipe import AgentRecipe, message_text

#: The role names of the sharegpt rows (LLaMA-Factory's ``tags``): the tool's answer is the observation turn.
SHAREGPT_TAGS = {"role_tag": "role", "content_tag": "content", "user_tag": "user", "assistant_tag": "assistant",
                 "observation_tag": "tool", "system_tag": "system"}


@dataclass
class Transcript:
    """One scripted episode: ``messages`` (role + typed content, screenshots as PIL images, the chat template's
    layout), whether the scripted answers ``succeeded``, and the task and reset seed it was played on."""

    task_id: str
    seed: int
    messages: list[dict[str, Any]]
    success: bool

    @property
    def images(self) -> list[Any]:
        """Every screenshot of the conversation, in order."""
        return [p["image"] for m in self.messages if not isinstance(m["content"], str)
                for p in m["content"] if p.get("type") == "image"]


def scripted_transcript(env: Any, task: Any, recipe: AgentRecipe, *, seed: int = 0) -> Transcript:
    """Play ``task`` in ``env`` with the scripted policy under ``recipe`` and return its conversation."""
    from core.rollout.recipe import RecipeSession

    session = RecipeSession(env, task, recipe, seed=seed)
    while not session.done:
        session.act(session.gold_text())
    return Transcript(task_id=str(getattr(task, "id", task)), seed=seed, messages=list(session.conversation),
                      success=bool(session.episode.success))


def tools_system_text(tokenizer: Any, recipe: AgentRecipe) -> str:
    """The system turn's text the ``tokenizer``'s chat template writes for the recipe's ``tools`` (no system
    message given, as the agent loop gives none): what lies between ``<|im_start|>system\\n`` and ``<|im_end|>``.
    ``ValueError`` when the template writes no system turn for tools (not a Qwen-style template)."""
    marker = "\x00task\x00"
    text = tokenizer.apply_chat_template([{"role": "user", "content": marker}], tools=recipe.tool_schemas(),
                                         tokenize=False, add_generation_prompt=False)
    start, end = "<|im_start|>system\n", "<|im_end|>"
    head = text.split(marker)[0]
    if start not in head or end not in head:
        raise ValueError("the chat template writes no <|im_start|>system turn for tools: not a Qwen-style template")
    return head.split(start, 1)[1].split(end, 1)[0]


def sharegpt_messages(transcript: Transcript, system: str) -> list[dict[str, str]]:
    """``transcript``'s turns as sharegpt messages: ``system`` first, then text with one ``<image>`` per
    screenshot (a tool turn's content is what the template wraps in ``<tool_response>``)."""
    return [{"role": "system", "content": system}] + [
        {"role": m["role"], "content": message_text(m)} for m in transcript.messages]


def write_llamafactory_sft(transcripts: Iterable[Transcript], out_dir: str | Path, *, name: str, system: str,
                           dataset_info: str | Path | None = None) -> dict[str, Any]:
    """Write ``transcripts`` as LLaMA-Factory's sharegpt dataset ``name`` into ``out_dir`` (``<name>.jsonl``,
    ``images/<name>/<k>.png``) and add ``name`` to ``dataset_info`` (default: ``out_dir/dataset_info.json``),
    the file written atomically. Returns counts: ``episodes``, ``turns`` (assistant turns), ``images``, and
    ``failed`` (scripted episodes that did not succeed: left out, they would teach a wrong answer)."""
    from core.io import atomic_write, atomic_write_json

    out = Path(out_dir)
    images_dir = out / "images" / name
    images_dir.mkdir(parents=True, exist_ok=True)
    counts = {"episodes": 0, "turns": 0, "images": 0, "failed": 0}
    with atomic_write(out / f"{name}.jsonl") as f:
        for t in transcripts:
            if not t.success:
                counts["failed"] += 1
                continue
            paths = []
            for image in t.images:
                rel = Path("images") / name / f"{counts['images']}.png"
                image.save(out / rel)
                paths.append(rel.as_posix())
                counts["images"] += 1
            messages = sharegpt_messages(t, system)
            counts["episodes"] += 1
            counts["turns"] += sum(m["role"] == "assistant" for m in messages)
            f.write(json.dumps({"messages": messages, "images": paths, "task_id": t.task_id, "seed": t.seed},
                               ensure_ascii=False) + "\n")
    info_path = Path(dataset_info) if dataset_info is not None else out / "dataset_info.json"
    info = json.loads(info_path.read_text(encoding="utf-8")) if info_path.exists() else {}
    info[name] = {"file_name": f"{name}.jsonl", "formatting": "sharegpt",
                  "columns": {"messages": "messages", "images": "images"}, "tags": SHAREGPT_TAGS}
    atomic_write_json(info_path, info)
    return counts


def scripted_transcripts(tasks: Sequence[Any], recipe: AgentRecipe, *, env_name: str = "sim-phone",
                         seed: int = 0) -> Iterable[Transcript]:
    """:func:`scripted_transcript` of every task in ``tasks`` (one env, reset seed ``seed``), lazily."""
    from core.rollout.envs import get_env

    env = get_env(env_name).make()
    try:
        for task in tasks:
            yield scripted_transcript(env, task, recipe, seed=seed)
    finally:
        env.close()


__all__ = ["SHAREGPT_TAGS", "Transcript", "scripted_transcript", "scripted_transcripts", "sharegpt_messages",
           "tools_system_text", "write_llamafactory_sft"]
