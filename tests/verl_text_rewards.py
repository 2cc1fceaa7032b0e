"""A verl reward file for the GRPO sign test (``reward.custom_reward_function.path=tests/verl_text_rewards.py``):
verl hands ``compute_score`` the decoded response, so the reward is read from its characters."""


def compute_score(data_source=None, solution_str="", ground_truth=None, extra_info=None, sign=1.0, **kwargs) -> dict:
    """``sign`` x the share of the response's characters whose Unicode code point is even (0.0 for an empty
    response); ``even_share`` is the unsigned share, logged as a reward part."""
    share = sum(1 for c in solution_str if ord(c) % 2 == 0) / len(solution_str) if solution_str else 0.0
    return {"score": float(sign) * share, "even_share": share}
