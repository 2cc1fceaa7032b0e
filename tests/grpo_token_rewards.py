"""A reward that depends only on the sampled token ids, for GRPO correctness tests (``VLM-R1/grpo.py`` loads it by
path: ``--reward_funcs tests/grpo_token_rewards.py:even_token_share``)."""


def even_token_share(prompts=None, completions=(), completion_ids=(), **columns) -> list[float]:
    """The share of each completion's tokens whose id is even (0.0 for an empty completion)."""
    return [sum(1 for t in ids if t % 2 == 0) / len(ids) if len(ids) else 0.0 for ids in completion_ids]


def mean_token_id(prompts=None, completions=(), completion_ids=(), **columns) -> list[float]:
    """Each completion's mean token id as a fraction of the tiny model's vocabulary (151,936); two random
    completions practically never tie, so every group of a random policy has a non-zero advantage."""
    return [sum(ids) / len(ids) / 151_936 if len(ids) else 0.0 for ids in completion_ids]
