"""ms-swift ORM plugin: ``swift rlhf --rlhf_type grpo --external_plugins ms-swift/plugin/gui_rewards.py
--reward_funcs r1gui_format r1gui_accuracy`` (or ``r1gui``, ``r1gui_guir1``, ``gaussian``, ``gaussian_accuracy``,
``gui_agent``, ``aitw``...).

Registers one ORM per reward of :mod:`core.rewards.registry` into ``swift.rewards.orms``; each class is named
after its reward, so swift logs ``rewards/<name>/mean``. The dataset needs a ``ground_truth`` (or JSON
``solution``) column, as the swift export writes; knobs come from ``$GUI_REWARD_OPTIONS`` (JSON), e.g.
``{"mode": "guir1"}``, ``{"format_weight": 0.1, "gate_format": true}`` or ``{"alpha": 0.5}`` (gaussian).
"""

from swift.rewards import ORM, orms

from core.rewards.adapters import score_columns
from core.rewards.registry import REWARDS


def _orm_class(reward: str) -> type:
    def __call__(self, completions, **kwargs):
        columns = {k: v for k, v in kwargs.items() if k != "trainer_state"}
        return score_columns(reward, completions, columns)

    return type(reward, (ORM,), {"__call__": __call__, "__doc__": REWARDS[reward].description})


for _name in REWARDS:
    orms[_name] = _orm_class(_name)
