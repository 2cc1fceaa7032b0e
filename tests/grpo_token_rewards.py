"""A reward that depends only on the sampled token ids, for GRPO correctness tests (``VLM-R1/grpo.py`` loads it by
path: ``--reward_funcs tests/grpo_token_rewards.py:even_token_share``)."""


def even_token_share(prompts=None, completions=(), completion_ids=(), **columns) -> list[float]:
    """The share of each completion's tokens whose id is even (0.0 for an empty completion)."""
    return [sum(1 for t in ids if t % 2 == 0) / len(ids) if len(ids) else 0.0 for ids in completion_ids]
