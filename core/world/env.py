"""``SimPhoneEnv``: the simulated phone as a ``gymnasium.Env`` (id ``gui_agent/SimPhone-v0``).

``reset(seed=..., options={"task": <id or TaskSpec>, "max_steps": K})`` -> ``(obs, info)``;
``step(action)`` -> ``(obs, reward, terminated, truncated, info)``. ``obs`` is the screenshot, a READ-ONLY
HxWx3 uint8 array in screen pixels, new on every call (it may be the frame cache's own copy, hence read-only):
``obs.copy()`` before drawing on it. ``action`` is a
:class:`core.actions.Action` (screen pixels) or a ``mobile_use`` arguments dict (``core.actions.from_mobile_use``);
anything else raises ``ValueError``. An action the phone ignores changes nothing and ``info["ignored"]`` says why.
``reward`` is 1.0 on the step the goal check first succeeds; ``terminated`` = goal reached or the agent ended the
episode (complete / impossible / terminate / answer); ``truncated`` = ``max_steps`` reached (default 20; a
family's ``max_actions`` lowers it: the curriculum's tasks allow as many actions as their gold plan has).
Beyond the shared contract's keys, ``info`` has ``split``, ``route`` (the screen, e.g. ``thread/Alice Kim``),
``gold_record`` (the next gold step as a :class:`core.records.GoldRecord`, ORIGINAL = screen pixels) and
``gold_match`` (after a step: whether the action taken was the gold step, by :func:`core.matching.match`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import gymnasium as gym
import numpy as np

from core.actions import SYSTEM_BUTTONS, Action, from_mobile_use, swipe_to_scroll
from core.geometry import Frame
from core.matching import Predicted, match
from core.records import GoldRecord
from core.world.content import make_content
from core.world.device import SCREENS, make_theme
from core.world.phone import BUTTON_ACTIONS, Phone
from core.world.render import renderer
from core.world.tasks import FAMILIES, GoldStep, TaskSpec, get_task, list_tasks

ENDING_ACTIONS: frozenset[str] = frozenset({"complete", "impossible", "terminate", "answer"})
DEFAULT_MAX_STEPS = 20


class PhoneActionSpace(gym.Space):
    """Every :class:`Action` (or mobile_use dict); ``sample()`` draws a uniformly random phone action on a
    ``width`` x ``height`` screen (tap/long press anywhere, a scroll, a system button, a short typed word,
    complete), from the space's own ``np_random``."""

    def __init__(self, width: int, height: int, seed: int | None = None):
        super().__init__(shape=None, dtype=None, seed=seed)
        self.width, self.height = width, height

    def contains(self, x: Any) -> bool:
        return isinstance(x, Action) or (isinstance(x, dict) and "action" in x)

    def sample(self, mask: Any = None, probability: Any = None) -> Action:
        r = self.np_random
        kind = r.choice(["click"] * 6 + ["long_press", "scroll", "system_button", "type", "complete"])
        if kind in ("click", "long_press"):
            return Action(type=kind, point=(float(r.uniform(0, self.width)), float(r.uniform(0, self.height))))
        if kind == "scroll":
            return Action(type="scroll", direction=str(r.choice(["up", "down", "left", "right"])))
        if kind == "system_button":
            return Action(type="system_button", button=str(r.choice(SYSTEM_BUTTONS)))
        if kind == "type":
            return Action(type="type", text=str(r.choice(["hello", "on my way", "7:30", "coffee"])))
        return Action(type="complete")

    @property
    def is_np_flattenable(self) -> bool:
        return False


def to_action(action: Any) -> Action:
    """An :class:`Action` from an Action or a mobile_use arguments dict; ValueError for anything else."""
    if isinstance(action, Action):
        return action
    if isinstance(action, dict):
        return from_mobile_use(action)
    raise ValueError(f"action must be a core.actions.Action or a mobile_use arguments dict, got {type(action).__name__}")


@lru_cache(maxsize=8)
def _screenshot_space(height: int, width: int) -> gym.spaces.Box:
    return gym.spaces.Box(0, 255, (height, width, 3), np.uint8)


class SimPhoneEnv(gym.Env):
    """The simulated phone (see the module docstring for the API and ``info`` keys)."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 2}

    def __init__(self, render_mode: str | None = "rgb_array", max_steps: int = DEFAULT_MAX_STEPS,
                 task: str | TaskSpec | None = None):
        self.render_mode = render_mode
        self.default_max_steps = max_steps
        self.default_task = task
        self.task: TaskSpec | None = None
        self.phone: Phone | None = None
        self._gold: GoldRecord | None = None
        self.observation_space = _screenshot_space(2400, 1080)
        self.action_space = PhoneActionSpace(1080, 2400)

    # ------------------------------------------------------------------ gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        options = options or {}
        task = options.get("task", self.default_task)
        if task is None:
            train = list_tasks("train")
            task = train[int(self.np_random.integers(len(train)))]
        elif isinstance(task, str):
            task = get_task(task)
        elif not isinstance(task, TaskSpec):
            raise ValueError(f"options['task'] must be a task id or a TaskSpec, got {type(task).__name__}")
        self.task = task
        self.max_steps = int(options.get("max_steps", self.default_max_steps))
        screen = SCREENS[task.screen]
        content = make_content(task.seed)
        self.renderer = renderer(screen, make_theme(task.theme, content.style.accent), task.font_scale)
        self.phone = Phone(screen, content, self.renderer)
        self.family = FAMILIES[task.family]
        if self.family.setup is not None:
            self.family.setup(self.phone, task.params)
        elif task.params.get("start", "home") != "home":
            self.phone.apply(Action(type="open_app", text=task.params["start"]))
        if self.family.max_actions is not None:
            self.max_steps = min(self.max_steps, self.family.max_actions)
        self.steps = 0
        self.rewarded = False
        self.observation_space = _screenshot_space(screen.height, screen.width)
        self.action_space = PhoneActionSpace(screen.width, screen.height, seed=seed)
        return self.render(), self._info(None)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self.phone is None or self.task is None:
            raise RuntimeError("call reset() before step()")
        act = to_action(action)
        matched = self._matches_gold(act)
        ignored = self.phone.apply(act)
        self.steps += 1
        success = self.family.goal(self.phone, self.task.params)
        reward = 1.0 if success and not self.rewarded else 0.0
        self.rewarded = self.rewarded or success
        terminated = success or act.type in ENDING_ACTIONS
        truncated = not terminated and self.steps >= self.max_steps
        info = self._info(ignored, success)
        info["gold_match"] = matched
        return self.render(), reward, terminated, truncated, info

    def render(self) -> np.ndarray:
        """The current screenshot (read-only HxWx3 uint8, screen pixels)."""
        if self.phone is None:
            raise RuntimeError("call reset() before render()")
        return self.renderer.frame(self.phone.widgets(), self.phone.status_h, self.phone.nav_h)

    # ------------------------------------------------------------------ helpers
    def gold(self) -> GoldStep | None:
        """The next gold step from the current state (None when the goal holds)."""
        assert self.phone is not None and self.task is not None
        return self.family.plan(self.phone, self.task.params)

    def _gold_record(self, gold: GoldStep | None) -> GoldRecord | None:
        """``gold`` as the project's typed gold record (screen pixels = ORIGINAL frame)."""
        if gold is None:
            return None
        a, box = gold.action, gold.target.visible_box if gold.target else None
        return GoldRecord(action=a.type, frame=Frame.ORIGINAL, box=tuple(map(float, box)) if box else None,
                          point=a.point, text=a.text, direction=a.direction,
                          image_size=(self.phone.screen.width, self.phone.screen.height))  # type: ignore[union-attr]

    def _matches_gold(self, act: Action) -> bool | None:
        """Whether ``act`` is the gold step of the current state (``core.matching.match``; a swipe counts as its
        scroll, a system button as its press_* action); None when there is no gold step."""
        if self._gold is None:
            return None
        name, direction = act.type, act.direction
        if name == "system_button":
            name = BUTTON_ACTIONS.get((act.button or "").lower(), name)
        elif name == "swipe" and act.point and act.end_point:
            name, direction = "scroll", swipe_to_scroll(act.point, act.end_point)
        pred = Predicted(action=name, point=act.point, text=act.text, direction=direction, frame=Frame.ORIGINAL)
        return match(pred, self._gold).ok

    def _info(self, ignored: str | None, success: bool | None = None) -> dict[str, Any]:
        task, phone = self.task, self.phone
        assert task is not None and phone is not None
        if success is None:
            success = self.family.goal(phone, task.params)
        gold = None if success else self.gold()
        self._gold = self._gold_record(gold)
        return {
            "task_id": task.id, "family": task.family, "app": task.app, "instruction": task.instruction,
            "step_instruction": gold.instruction if gold else None,
            "screen_size": (phone.screen.width, phone.screen.height),
            "widgets": [w.to_info() for w in phone.widgets()],  # fresh dicts: callers may keep or edit them
            "success": success,
            "gold_action": gold.action if gold else None,
            "gold_box": list(gold.target.visible_box) if gold and gold.target else None,
            "ignored": ignored, "step": self.steps, "split": task.split, "route": "/".join(phone.route),
            "gold_record": self._gold, "gold_match": None,
        }


__all__ = ["DEFAULT_MAX_STEPS", "ENDING_ACTIONS", "PhoneActionSpace", "SimPhoneEnv", "to_action"]
