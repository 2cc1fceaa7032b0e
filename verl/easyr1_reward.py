"""EasyR1 reward file: ``worker.reward.reward_function=verl/easyr1_reward.py:compute_score``.

Works with ``reward_type=batch`` (list of ``{"response", "ground_truth"}`` in, list of score dicts out) and
``sequential`` (one dict in, one out). ``worker.reward.reward_function_kwargs`` pick the reward and knobs:
``{"reward": "r1gui", "mode": "guir1"}``, ``{"reward": "gaussian", "alpha": 0.5}``. Each score dict has ``overall`` plus the parts.
"""

from functools import partial

from core.rewards.adapters import easyr1_compute_score as compute_score

r1gui_guir1 = partial(compute_score, reward="r1gui_guir1")
gui_agent = partial(compute_score, reward="gui_agent")
gaussian = partial(compute_score, reward="gaussian")

__all__ = ["compute_score", "gaussian", "gui_agent", "r1gui_guir1"]
