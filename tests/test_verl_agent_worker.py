"""verl's worker path for the GUI-agent recipe on CPU: verl 0.9.1's own ``AgentLoopWorker`` (the class its Ray actor
wraps) built from the run script's composed config, driven by a scripted generation server. It loads the loop from
the agent-loop YAML and the tool from the tool YAML, runs ``_run_agent_loop`` / ``_agent_loop_postprocess`` /
``_postprocess`` and returns the ``DataProto`` batch the trainer gets: padding to prompt/response length, masks,
Qwen3-VL position ids over several screenshots, the reward in ``rm_scores``, the reward parts as batch columns."""

from __future__ import annotations

import asyncio
import copy
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

pytestmark = pytest.mark.rl_env

torch = pytest.importorskip("torch")
pytest.importorskip("verl")
np = pytest.importorskip("numpy")

import test_verl_agent as agent  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "verl"))
PROMPT_LENGTH, RESPONSE_LENGTH = 2048, 8192
#: what a policy that never finishes answers: a valid call that keeps the screen (the episode goes on)
WAIT = 'Thought: wait for it.\nAction: wait.\n<tool_call>\n{"name": "mobile_use", "arguments": {"action": "wait", ' \
       '"time": 1}}\n</tool_call>'


@pytest.fixture(scope="module")
def recipe_config(tmp_path_factory):
    """The GPU run script's config as ``main_ppo`` would compose it, on the tiny Qwen3-VL (verl/dry_run.compose)."""
    import dry_run

    env = {**os.environ, "PRINT_ARGS": "1", "DATA_DIR": str(tmp_path_factory.mktemp("data")),
           "MODEL_PATH": str(agent.testing.tiny_qwen3vl_path()), "MAX_PROMPT_LENGTH": str(PROMPT_LENGTH),
           "MAX_RESPONSE_LENGTH": str(RESPONSE_LENGTH), "ROLLOUT_N": "1", "TRAIN_BATCH_SIZE": "2",
           "PPO_MINI_BATCH_SIZE": "2", "N_GPUS": "1", "ROLLOUT_ENGINE": "vllm"}
    args = subprocess.run(["bash", str(ROOT / "verl" / "gui_agent" / "run_gui_agent.sh")], env=env,
                          capture_output=True, text=True, check=True).stdout.splitlines()
    return dry_run.compose(args)


@pytest.fixture(scope="module")
def rope_model():
    """The tiny Qwen3-VL's own ``get_rope_index`` (transformers), the reference for verl's position ids."""
    from transformers import AutoModelForImageTextToText

    return AutoModelForImageTextToText.from_pretrained(agent.testing.tiny_qwen3vl_path()).model


class PolicyServer:
    """verl's LLM server client interface; answers each request with ``policy(tool, session, turn)`` for the
    episode whose instruction the prompt shows (several episodes of a batch run concurrently)."""

    def __init__(self, policy: Callable[..., str]):
        self.policy, self.worker, self.calls = policy, None, []

    async def generate(self, request_id, *, prompt_ids, sampling_params, image_data=None, **kwargs):
        from verl.workers.rollout.replica import TokenOutput

        tokenizer = self.worker.tokenizer
        (tool,) = self.worker.tools
        prompt = tokenizer.decode(prompt_ids)
        (session,) = [s for s in tool.sessions.values() if s.instruction in prompt]
        turn = sum(c["request_id"] == request_id for c in self.calls)
        ids = tokenizer.encode(self.policy(tool, session, turn), add_special_tokens=False) + [agent.testing.IM_END_ID]
        self.calls.append({"request_id": request_id, "prompt_ids": list(prompt_ids), "token_ids": ids,
                           "images": list(image_data or []), "sampling_params": dict(sampling_params)})
        return TokenOutput(token_ids=ids)


def gold(tool, session, turn: int) -> str:
    return agent.session_gold_text(tool, session)


def run_worker(config, policy, tasks, **changes):
    """verl's ``AgentLoopWorker.generate_sequences`` on one row per task; ``changes``: dotted config keys."""
    from omegaconf import OmegaConf

    from verl import DataProto
    from verl.experimental.agent_loop.agent_loop import AgentLoopWorker

    config = copy.deepcopy(config)
    for key, value in changes.items():
        OmegaConf.update(config, key.replace("__", "."), value, force_add=True)  # gui_agent keys over the recipe
    server = PolicyServer(policy)
    worker = AgentLoopWorker(config, llm_client=server)
    server.worker = worker
    rows = [agent.sim_row(t, worker.tools[0].grid) for t in tasks]
    for row in rows:
        del row["agent_name"]  # the rollout.agent.default_agent_loop of the run script picks the loop
    batch = DataProto.from_dict(non_tensors={k: np.array([r[k] for r in rows], dtype=object) for k in rows[0]},
                                meta_info={"validate": False, "global_steps": 1})
    return asyncio.run(worker.generate_sequences(batch)), server, worker


def episode_calls(server, out, i):
    """The server calls of row ``i`` of the batch (matched by the row's first prompt)."""
    prompt = out.batch["prompts"][i][out.batch["attention_mask"][i, :PROMPT_LENGTH].bool()].tolist()
    first = next(c for c in server.calls if c["prompt_ids"] == prompt)
    return [c for c in server.calls if c["request_id"] == first["request_id"]]


@pytest.fixture(scope="module")
def two_tasks():
    from core.world import list_tasks

    tasks = list_tasks("test")
    return [tasks[0], next(t for t in tasks if t.family != tasks[0].family)]


def test_worker_batch_pads_masks_positions_and_rewards(recipe_config, rope_model, two_tasks) -> None:
    from verl.experimental.agent_loop.agent_loop import _agent_loop_registry

    out, server, worker = run_worker(recipe_config, gold, two_tasks)
    assert _agent_loop_registry["gui_agent"]["_target_"] == "gui_agent_loop.GUIAgentLoop"  # from agent_loop.yaml
    processor = worker.processor
    b = out.batch
    assert b["prompts"].shape == (2, PROMPT_LENGTH) and b["responses"].shape == (2, RESPONSE_LENGTH)
    assert b["input_ids"].shape == b["attention_mask"].shape == (2, PROMPT_LENGTH + RESPONSE_LENGTH)
    assert b["position_ids"].shape == (2, 4, PROMPT_LENGTH + RESPONSE_LENGTH)  # text row + Qwen3-VL's 3 M-RoPE rows
    assert list(out.non_tensor_batch["ended_by"]) == ["episode_end", "episode_end"]
    for i in range(2):
        calls = episode_calls(server, out, i)
        n_turns = len(calls)
        assert n_turns >= 2 and len(calls[-1]["images"]) == n_turns  # one screenshot per turn, all in context
        whole = calls[-1]["prompt_ids"] + calls[-1]["token_ids"]  # the final sequence: last prompt + last answer
        n_prompt = len(calls[0]["prompt_ids"])
        prompt_mask, response_mask = b["attention_mask"][i, :PROMPT_LENGTH], b["attention_mask"][i, PROMPT_LENGTH:]
        # prompt left-padded, response right-padded; the unpadded tokens are exactly the episode's
        assert prompt_mask.tolist() == [0] * (PROMPT_LENGTH - n_prompt) + [1] * n_prompt
        n_response = len(whole) - n_prompt
        assert response_mask.tolist() == [1] * n_response + [0] * (RESPONSE_LENGTH - n_response)
        valid = b["attention_mask"][i].bool()
        assert b["input_ids"][i][valid].tolist() == whole
        # response_mask: 1 exactly on the generated answers
        expected = torch.zeros(RESPONSE_LENGTH, dtype=torch.long)
        for c in calls:
            start = len(c["prompt_ids"]) - n_prompt
            expected[start:start + len(c["token_ids"])] = 1
        assert torch.equal(b["response_mask"][i], expected)
        # position ids: row 0 counts tokens, rows 1-3 are the model's own M-RoPE index over all screenshots
        ids = torch.tensor([whole])
        grid_thw = processor.image_processor(images=calls[-1]["images"], return_tensors="pt")["image_grid_thw"]
        assert torch.equal(out.non_tensor_batch["multi_modal_inputs"][i]["image_grid_thw"], grid_thw)
        image_id = processor.tokenizer.convert_tokens_to_ids("<|image_pad|>")
        reference, _ = rope_model.get_rope_index(ids, (ids == image_id).int(), image_grid_thw=grid_thw,
                                                 attention_mask=torch.ones_like(ids))
        positions = b["position_ids"][i][:, valid]
        assert torch.equal(positions[0], torch.arange(len(whole)))
        assert torch.equal(positions[1:], reference[:, 0])
        assert positions[1:].max() < len(whole) - 1  # images compress positions: really multimodal
        # the reward: the loop's score at the last response token, its parts as batch columns
        score = b["rm_scores"][i]
        assert score[n_response - 1] == pytest.approx(2.0) and score.abs().sum() == pytest.approx(2.0)  # gold + bonus
        assert out.non_tensor_batch["gui_agent/success"][i] == 1.0
        assert out.non_tensor_batch["gui_agent/turns"][i] == n_turns
    assert "gui_agent/coord" in out.meta_info["reward_extra_keys"]
    # verl's num_turns = messages: the prompt, an answer per turn, a screenshot between turns
    assert list(out.non_tensor_batch["__num_turns__"]) == [2 * len(episode_calls(server, out, i)) for i in range(2)]


def test_worker_ends_on_the_response_budget(recipe_config, two_tasks) -> None:
    out, server, _ = run_worker(recipe_config, lambda *a: WAIT, two_tasks[:1],
                                actor_rollout_ref__rollout__response_length=1500)
    assert out.non_tensor_batch["ended_by"][0] == "context_budget"
    assert out.non_tensor_batch["gui_agent/context_budget"][0] == 1.0
    assert out.batch["responses"].shape == (1, 1500)
    n_response = int(out.batch["attention_mask"][0, PROMPT_LENGTH:].sum())
    n_prompt = len(server.calls[0]["prompt_ids"])
    # the last answer is in the batch whole; the next screenshot (about 600 tokens) would not have fit
    assert n_response == len(server.calls[-1]["prompt_ids"]) + len(server.calls[-1]["token_ids"]) - n_prompt
    assert n_response + 576 > 1500 and len(server.calls) >= 2


def test_worker_ends_at_max_screenshots(recipe_config, two_tasks) -> None:
    out, server, _ = run_worker(recipe_config, lambda *a: WAIT, two_tasks[:1], gui_agent__max_screenshots=3)
    assert out.non_tensor_batch["ended_by"][0] == "max_screenshots"
    assert len(server.calls) == 3 and [len(c["images"]) for c in server.calls] == [1, 2, 3]
    assert len(out.non_tensor_batch["multi_modal_inputs"][0]["image_grid_thw"]) == 3


@pytest.mark.parametrize("aggregation", ["mean", "last"])
def test_worker_reward_aggregation(recipe_config, two_tasks, aggregation: str) -> None:
    """A first answer without a call (fed back, scores 0), then gold answers: ``last`` scores the final turn only."""
    def late_gold(tool, session, turn: int) -> str:
        return "Thought: not sure.\nAction: none." if turn == 0 else gold(tool, session, turn)

    out, server, _ = run_worker(recipe_config, late_gold, two_tasks[:1], gui_agent__aggregation=aggregation,
                                gui_agent__on_invalid="feedback")
    n_turns = len(server.calls)
    assert out.non_tensor_batch["ended_by"][0] == "episode_end" and n_turns >= 3
    assert out.non_tensor_batch["gui_agent/invalid"][0] == 1.0
    expected = {"mean": (n_turns - 1) / n_turns, "last": 1.0}[aggregation] + 1.0  # + completion bonus
    assert float(out.batch["rm_scores"][0].sum()) == pytest.approx(expected)


def test_reward_parts_reach_the_per_step_metrics(recipe_config, two_tasks) -> None:
    """The run script selects the ``gui_agent`` trainer mode and registers it through Ray's setup hook; its per-step
    metrics are the means of the reward parts verl's worker put in each sample's ``extra_fields``."""
    import importlib

    import gui_agent_trainer

    assert recipe_config.trainer.v1.trainer_mode == gui_agent_trainer.TRAINER_MODE
    module, _, name = recipe_config.ray_kwargs.ray_init.runtime_env.worker_process_setup_hook.rpartition(".")
    assert getattr(importlib.import_module(module), name) is gui_agent_trainer.register

    def first_wrong(tool, session, turn: int) -> str:
        return WAIT if turn == 0 else gold(tool, session, turn)

    out, server, _ = run_worker(recipe_config, first_wrong, two_tasks, gui_agent__on_invalid="feedback")
    metrics = gui_agent_trainer.reward_part_metrics(out.non_tensor_batch["reward_extra_info"])
    parts = ("type", "coord", "text", "format", "completion_bonus", "turns", "invalid", "success", "context_budget")
    for part in parts:
        column = out.non_tensor_batch[f"gui_agent/{part}"].astype(float)
        assert metrics[f"gui_agent/{part}/mean"] == pytest.approx(column.mean())
    assert metrics["gui_agent/turns/mean"] == pytest.approx(len(server.calls) / 2)
    assert 0 < metrics["gui_agent/type/mean"] < 1  # the first wait is the wrong type on these tasks
    assert metrics["gui_agent/success/mean"] == 1.0
    timing = gui_agent_trainer.episode_timing_metrics(out.non_tensor_batch["timing_s"])
    assert set(timing) == {f"timing_s/episode/{part}/mean" for part in ("generate", "phone", "reward", "tokens")}
    assert all(v > 0 for v in timing.values()), timing
    assert gui_agent_trainer.episode_timing_metrics([None, {"phone": 1, "reward": 0.5}, {"phone": 2.0},
                                                     {"flag": True, "why": "text"}]) == \
        {"timing_s/episode/phone/mean": 1.5, "timing_s/episode/reward/mean": 0.5}
    assert gui_agent_trainer.reward_part_metrics([None, {"gui_agent/turns": 3, "other": 1}, {"other": 0.5},
                                                  {"flag": True, "why": "text"}]) == \
        {"gui_agent/turns/mean": 3.0, "reward/other/mean": 0.75}


def test_gui_agent_trainer_is_verls_sync_trainer_under_its_own_mode() -> None:
    pytest.importorskip("transfer_queue")  # verl's v1 trainer module imports it (verl's verl-core extra)
    import gui_agent_trainer

    from verl.trainer.ppo.v1 import PPOTrainerSync, get_trainer_cls

    gui_agent_trainer.register()
    gui_agent_trainer.register()
    assert issubclass(get_trainer_cls("gui_agent"), PPOTrainerSync)


def test_worker_caps_each_turn_at_max_tokens_per_turn(recipe_config, two_tasks) -> None:
    """``gui_agent.max_tokens_per_turn`` reaches the server as every turn's ``max_tokens``; unset, verl's sampling
    parameters go as they are; a bad value is one error naming the key."""
    import gui_agent_loop

    _, server, _ = run_worker(recipe_config, lambda *a: WAIT, two_tasks[:1], gui_agent__max_screenshots=2,
                              gui_agent__max_tokens_per_turn=24)
    assert len(server.calls) == 2 and all(c["sampling_params"]["max_tokens"] == 24 for c in server.calls)
    _, server, _ = run_worker(recipe_config, lambda *a: WAIT, two_tasks[:1], gui_agent__max_screenshots=2)
    assert all("max_tokens" not in c["sampling_params"] for c in server.calls)
    for bad in (-1, 2.5, "24", True):
        with pytest.raises(ValueError, match="gui_agent.max_tokens_per_turn must be a whole number >= 0"):
            gui_agent_loop.GUIAgentConfig.max_tokens_per_turn({"max_tokens_per_turn": bad})
    assert gui_agent_loop.GUIAgentConfig.max_tokens_per_turn({"max_tokens_per_turn": 0}) is None


def test_mask_segments_cut_a_response_into_trained_and_untrained_runs() -> None:
    import gui_agent_trainer

    def decode(ids):
        return "".join(chr(96 + i) for i in ids)

    segments = gui_agent_trainer.mask_segments([1, 2, 3, 4, 5, 6], [1, 1, 0, 0, 0, 1], decode)
    assert segments == [{"trained": True, "tokens": 2, "text": "ab"}, {"trained": False, "tokens": 3, "text": "cde"},
                        {"trained": True, "tokens": 1, "text": "f"}]
    assert gui_agent_trainer.mask_segments([], [], decode) == []
    with pytest.raises(ValueError, match="3 response tokens but 2 mask values"):
        gui_agent_trainer.mask_segments([1, 2, 3], [1, 0], decode)
