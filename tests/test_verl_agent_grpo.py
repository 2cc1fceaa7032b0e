"""One GRPO update on CPU on the gui_agent loop's multi-turn episodes with verl's own loss functions (GRPO
outcome advantage, vanilla clipped policy loss with its token-mean aggregation) and the tiny Qwen3-VL: gradients reach
exactly the model-generated tokens (response_mask 1), never the screenshots/tool turns, and the update raises
the likelihood of the best episode."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.rl_env
torch = pytest.importorskip("torch")
pytest.importorskip("verl")
pytest.importorskip("gymnasium")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import test_verl_agent as agent  # noqa: E402

qwen3_dir, processor, model, held_out_tasks = agent.qwen3_dir, agent.processor, agent.model, agent.held_out_tasks


def response_log_probs(model, processor, out, *, keep_logits: bool = False):
    """Per-token log-probs of the episode's response under ``model`` (and the logits, grad retained)."""
    ids = torch.tensor([out.prompt_ids + out.response_ids])
    vision = processor.image_processor(images=out.multi_modal_data["images"], return_tensors="pt")
    logits = model(input_ids=ids, attention_mask=torch.ones_like(ids), pixel_values=vision["pixel_values"],
                   image_grid_thw=vision["image_grid_thw"],
                   mm_token_type_ids=torch.tensor(processor.create_mm_token_type_ids(ids.tolist()))).logits
    if keep_logits:
        logits.retain_grad()
    p, r = len(out.prompt_ids), len(out.response_ids)
    logp = torch.log_softmax(logits[0, p - 1:p + r - 1].float(), dim=-1)
    return logp.gather(-1, ids[0, p:].unsqueeze(-1)).squeeze(-1), logits


def test_one_grpo_update_on_multi_turn_episodes(processor, model, held_out_tasks) -> None:
    import numpy as np
    from omegaconf import OmegaConf
    from verl.trainer.ppo.core_algos import compute_grpo_outcome_advantage, get_policy_loss_fn

    task = held_out_tasks[0]
    group, policies = [], {
        "gold": None,
        "wrong_then_stop": iter(["Thought: t\nAction: a\n" + agent.mut.tool_call_text(
            {"action": "click", "coordinate": [5, 990]}), "Thought: t\nAction: a\n" + agent.mut.tool_call_text(
            {"action": "terminate", "status": "success"})]),
        "invalid": iter(["no idea"]),
    }
    for answers in policies.values():
        loop = agent.make_loop(processor)
        answer = (lambda loop=loop: agent.gold_text(loop)) if answers is None else (lambda a=answers: next(a))
        group.append(agent.run_episode(loop, agent.ScriptedServer(processor.tokenizer, answer),
                                       agent.sim_row(task, loop.tool.grid)))
    rewards = [o.reward_score for o in group]
    assert rewards[0] > rewards[1] >= rewards[2]
    assert sum(group[0].response_mask) < len(group[0].response_mask)  # multi-turn: tool turns inside the response

    model.train()
    width = max(len(o.response_ids) for o in group)
    mask = torch.zeros(len(group), width)
    scores = torch.zeros(len(group), width)
    for i, o in enumerate(group):
        mask[i, :len(o.response_mask)] = torch.tensor(o.response_mask, dtype=torch.float)
        scores[i, len(o.response_ids) - 1] = o.reward_score
    advantages, _ = compute_grpo_outcome_advantage(scores, mask, np.array([task.id] * len(group)))
    assert advantages[0, 0] > 0 > advantages[2, 0]

    log_probs, all_logits = torch.zeros(len(group), width), []
    for i, o in enumerate(group):
        lp, logits = response_log_probs(model, processor, o, keep_logits=True)
        log_probs = log_probs.index_put((torch.tensor([i]), torch.arange(len(lp))), lp)
        all_logits.append(logits)
    before_gold = log_probs[0, mask[0] == 1].sum().item()
    actor_cfg = OmegaConf.create({"clip_ratio": 0.2, "clip_ratio_low": 0.2, "clip_ratio_high": 0.2,
                                  "clip_ratio_c": 3.0, "loss_agg_mode": "token-mean",
                                  "global_batch_info": {"dp_size": 1, "batch_num_tokens": int(mask.sum())}})
    pg_loss, _ = get_policy_loss_fn("vanilla")(old_log_prob=log_probs.detach(), log_prob=log_probs,
                                               advantages=advantages, response_mask=mask,
                                               loss_agg_mode="token-mean", config=actor_cfg)
    loss = pg_loss
    model.zero_grad(set_to_none=True)
    loss.backward()

    for i, o in enumerate(group):
        p, r = len(o.prompt_ids), len(o.response_ids)
        # the logit at position t predicts token t + 1: response token k is predicted at p - 1 + k
        grad = all_logits[i].grad[0, p - 1:p + r - 1].abs().sum(-1)
        touched = (grad > 0).tolist()
        assert touched == [bool(m) for m in o.response_mask], i
        assert all_logits[i].grad[0, :p - 1].abs().sum() == 0  # nothing in the prompt
    grads = [q.grad for q in model.parameters() if q.grad is not None]
    assert grads and any(g.abs().sum() > 0 for g in grads)
    assert model.model.visual.patch_embed.proj.weight.grad.abs().sum() > 0  # screenshots feed the loss

    with torch.no_grad():
        for q in model.parameters():
            if q.grad is not None:
                q -= 1e-2 * q.grad
        after, _ = response_log_probs(model, processor, group[0])
    assert after[torch.tensor(group[0].response_mask) == 1].sum().item() > before_gold
