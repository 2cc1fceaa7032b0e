"""verl reward file: ``reward.custom_reward_function.path=verl/reward_fn.py``, ``.name=compute_score``.

Pick the reward and its knobs with ``reward.custom_reward_function.reward_kwargs``, e.g.
``{reward: r1gui, mode: guir1}``, ``{reward: r1gui, format_weight: 0.1, gate_format: true}``,
``{reward: gui_agent}``, ``{reward: gaussian, alpha: 0.5}``. Or use a name below directly (``.name=r1gui_guir1``). Every call returns
``{"score": ..., **parts}`` with the same keys for every sample. Logic lives in :mod:`core.rewards`.
"""

from functools import partial

from core.rewards.adapters import verl_compute_score as compute_score

r1gui = partial(compute_score, reward="r1gui")
r1gui_guir1 = partial(compute_score, reward="r1gui_guir1")
gaussian = partial(compute_score, reward="gaussian")
gui_agent = partial(compute_score, reward="gui_agent")
aitw = partial(compute_score, reward="aitw")

__all__ = ["aitw", "compute_score", "gaussian", "gui_agent", "r1gui", "r1gui_guir1"]
