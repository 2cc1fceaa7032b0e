"""The simulated phone: a deterministic, seedable Android-like phone rendered with Pillow, as a gymnasium env.

``SimPhoneEnv`` (registered as ``gui_agent/SimPhone-v0``), the task registry (``list_tasks(split)``,
``get_task(id)``, ``TaskSpec``) and the unified-parquet export. Importing this package imports gymnasium, numpy
and Pillow only (never torch). Names follow the shared env/rollout contract; nothing was renamed.
"""

from __future__ import annotations

import gymnasium

from core.world.env import ENDING_ACTIONS, SimPhoneEnv, to_action
from core.world.tasks import FAMILIES, SPLIT_NAMES, GoldStep, TaskSpec, get_task, list_tasks, make_task, task_variants

ENV_ID = "gui_agent/SimPhone-v0"
if ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point="core.world.env:SimPhoneEnv")

__all__ = ["ENDING_ACTIONS", "ENV_ID", "FAMILIES", "SPLIT_NAMES", "GoldStep", "SimPhoneEnv", "TaskSpec", "get_task",
           "list_tasks", "make_task", "task_variants", "to_action"]
