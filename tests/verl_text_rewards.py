"""A verl reward file for the tests' text-reward launches (``reward.custom_reward_function.path=
tests/verl_text_rewards.py``): verl hands ``compute_score`` the decoded response, so the reward is read from its
characters."""


def compute_score(data_source=None, solution_str="", ground_truth=None, extra_info=None, sign=1.0,
                  success_at=None, binary=False, **kwargs) -> dict:
    """``sign`` x the share of the response's characters whose Unicode code point is even (0.0 for an empty
    response); ``even_share`` is the unsigned share, logged as a reward part. With ``success_at``, ``success`` is 1.0
    when the share reaches it (a binary success part for the RL methods' launches) and, with ``binary``, the score is
    that success."""
    share = sum(1 for c in solution_str if ord(c) % 2 == 0) / len(solution_str) if solution_str else 0.0
    out = {"score": float(sign) * share, "even_share": share}
    if success_at is not None:
        out["success"] = float(share >= float(success_at))
        if binary:
            out["score"] = out["success"]
    return out
