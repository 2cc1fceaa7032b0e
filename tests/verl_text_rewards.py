"""A verl reward file for the tests' text-reward launches (``reward.custom_reward_function.path=
tests/verl_text_rewards.py``): verl hands ``compute_score`` the decoded response, so the reward is read from its
characters."""

import zlib


def compute_score(data_source=None, solution_str="", ground_truth=None, extra_info=None, sign=1.0,
                  success_rate=None, binary=False, **kwargs) -> dict:
    """``sign`` x the share of the response's characters whose Unicode code point is even (0.0 for an empty
    response); ``even_share`` is the unsigned share, logged as a reward part.

    With ``success_rate``, ``success`` is 1.0 when the CRC-32 of the response's UTF-8 bytes, as a fraction of 2**32,
    lies below it: a coin of that probability per distinct response, fixed by the response text and independent of
    the model (the RL methods' launches need successes and failures at known rates, not a policy that earns them).
    A list of rates gives each prompt its own, indexed by the prompt's ``extra_info["index"]``. With ``binary``, the
    score is that success."""
    share = sum(1 for c in solution_str if ord(c) % 2 == 0) / len(solution_str) if solution_str else 0.0
    out = {"score": float(sign) * share, "even_share": share}
    if success_rate is not None:
        rate = success_rate if isinstance(success_rate, (int, float)) else success_rate[int(extra_info["index"])]
        out["success"] = float(zlib.crc32(solution_str.encode("utf-8")) < float(rate) * 2**32)
        if binary:
            out["score"] = out["success"]
    return out
