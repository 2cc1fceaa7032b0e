"""``SimPhoneEnv``: the simulated phone as a ``gymnasium.Env`` (id ``gui_agent/SimPhone-v0``).

``reset(seed=..., options={"task": <id or TaskSpec>, "max_steps": K})`` -> ``(obs, info)``;
``step(action)`` -> ``(obs, reward, terminated, truncated, info)``. ``obs`` is the screenshot, a READ-ONLY
HxWx3 uint8 array in screen pixels, new on every call (it may be the frame cache's own copy, hence read-only):
``obs.copy()`` before drawing on it. ``action`` is a
:class:`core.actions.Action` (screen pixels) or a ``mobile_use`` arguments dict (``core.actions.from_mobile_use``);
anything else raises ``ValueError``. An action the phone ignores changes nothing and ``info["ignored"]`` says why.
``reward`` is 1.0 on the step the goal check first succeeds; ``terminated`` = goal reached, the agent ended the
episode (complete / impossible / terminate / answer), or the family's action budget is spent (``max_actions``: the
curriculum's tasks allow as many actions as their gold plan has, a failure once used up); ``truncated`` =
``max_steps`` reached (default 20; a whole number >= 1, else ``core.numbers.NumberError`` naming it). ``step()``
after the episode ended raises :class:`EpisodeOverError` (reset first). ``action_space`` is one object for the env's
life: ``reset()`` resizes it to the task's screen and keeps its RNG; the first seeded ``reset()`` seeds it unless it
already has an RNG (a user's ``action_space.seed(7)``, or a ``sample()`` before), so ``reset(seed=s)`` alone makes
sampling repeatable. Unknown ``options`` keys raise ``ValueError`` naming them.
Beyond the shared contract's keys, ``info`` has ``split``, ``route`` (the screen, e.g. ``thread/Alice Kim``),
``gold_record`` (the next gold step as a :class:`core.records.GoldRecord`, ORIGINAL = screen pixels) and
``gold_match`` (after a step: whether the action taken was the gold step, by :func:`core.matching.match`) and
``frame_key`` (the renderer's frame-cache key of ``obs``, hashable: equal keys mean identical screenshots, so
consumers can cache what they derive from a screen, e.g. its model-size copy) and ``state_hash`` (:func:`state_hash`:
the task and the phone's whole state hashed, the anchor of GiGPO's step groups).
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from typing import Any

import gymnasium as gym
import numpy as np

from core.actions import SYSTEM_BUTTONS, Action, from_mobile_use, swipe_to_scroll
from core.geometry import Frame
from core.matching import Predicted, match
from core.numbers import checked_number
from core.records import GoldRecord
from core.world.content import make_content
from core.world.device import SCREENS, make_theme
from core.world.phone import BUTTON_ACTIONS, Phone
from core.world.render import renderer
from core.world.tasks import FAMILIES, GoldStep, TaskSpec, get_task, list_tasks

ENDING_ACTIONS: frozenset[str] = frozenset({"complete", "impossible", "terminate", "answer"})
DEFAULT_MAX_STEPS = 20
RESET_OPTIONS: frozenset[str] = frozenset({"task", "max_steps"})


class PhoneActionSpace(gym.Space):
    """Every :class:`Action` (or mobile_use dict); ``sample()`` draws a uniformly random phone action on a
    ``width`` x ``height`` screen (tap/long press anywhere, a scroll, a system button, a short typed word,
    complete), from the space's own ``np_random``."""

    def __init__(self, width: int, height: int, seed: int | None = None):
        super().__init__(shape=None, dtype=None, seed=seed)
        self.width, self.height = width, height

    def resize(self, width: int, height: int) -> None:
        """Sample on a ``width`` x ``height`` screen from now on; the RNG (and its seed) is kept."""
        self.width, self.height = width, height

    @property
    def seeded(self) -> bool:
        """Whether the RNG exists yet (seeded by the user, or drawn from entropy by a first ``sample()``)."""
        return self._np_random is not None

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


class EpisodeOverError(RuntimeError):
    """``step()`` after the episode ended (terminated or truncated): gymnasium's rule is to ``reset()`` first."""


def checked_max_steps(value: Any, name: str) -> int:
    """``max_steps`` as a whole number >= 1 (0, -3 or 2.9 is a :class:`core.numbers.NumberError` naming it)."""
    return int(checked_number(value, name, minimum=1, integer=True))


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


def state_hash(task_id: str, phone: Phone) -> str:
    """The anchor of a state: a hex SHA-256 of the task id and :meth:`Phone.state_key` (never of pixels), equal
    exactly when two screens are the same state of the same task (GiGPO's anchor states, :mod:`core.rl.gigpo`)."""
    return hashlib.sha256(repr((task_id, phone.state_key())).encode("utf-8")).hexdigest()


class SimPhoneEnv(gym.Env):
    """The simulated phone (see the module docstring for the API and ``info`` keys)."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 2}

    def __init__(self, render_mode: str | None = "rgb_array", max_steps: int = DEFAULT_MAX_STEPS,
                 task: str | TaskSpec | None = None):
        self.render_mode = render_mode
        self.default_max_steps = checked_max_steps(max_steps, "max_steps")
        self.ended = False
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
        unknown = sorted(map(str, set(options) - RESET_OPTIONS))
        if unknown:
            raise ValueError(f"unknown reset option(s) {', '.join(map(repr, unknown))}; known: {sorted(RESET_OPTIONS)}")
        max_steps = checked_max_steps(options.get("max_steps", self.default_max_steps), "options['max_steps']")
        task = options.get("task", self.default_task)
        if task is None:
            train = list_tasks("train")
            task = train[int(self.np_random.integers(len(train)))]
        elif isinstance(task, str):
            task = get_task(task)
        elif not isinstance(task, TaskSpec):
            raise ValueError(f"options['task'] must be a task id or a TaskSpec, got {type(task).__name__}")
        self.task, self.max_steps = task, max_steps  # options checked: the env changes only now
        screen = SCREENS[task.screen]
        content = make_content(task.seed)
        self.renderer = renderer(screen, make_theme(task.theme, content.style.accent), task.font_scale)
        self.phone = Phone(screen, content, self.renderer)
        self.family = FAMILIES[task.family]
        if self.family.setup is not None:
            self.family.setup(self.phone, task.params)
        elif task.params.get("start", "home") != "home":
            self.phone.apply(Action(type="open_app", text=task.params["start"]))

        self.steps = 0
        self.rewarded = False
        self.ended = False
        self.observation_space = _screenshot_space(screen.height, screen.width)
        self.action_space.resize(screen.width, screen.height)  # the same space: a user's seed survives resets
        if seed is not None and not self.action_space.seeded:
            self.action_space.seed(seed)  # seeded once, by the first seeded reset, unless the user seeded it
        obs = self.render()
        return obs, {**self._info(None), "frame_key": self._frame_key}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self.phone is None or self.task is None:
            raise RuntimeError("call reset() before step()")
        if self.ended:
            raise EpisodeOverError(f"episode of task {self.task.id} is over (terminated or truncated at step "
                                   f"{self.steps}); call reset() before step()")
        act = to_action(action)
        matched = self._matches_gold(act)
        ignored = self.phone.apply(act)
        self.steps += 1
        success = self.family.goal(self.phone, self.task.params)
        reward = 1.0 if success and not self.rewarded else 0.0
        self.rewarded = self.rewarded or success
        spent = self.family.max_actions is not None and self.steps >= self.family.max_actions
        terminated = success or spent or act.type in ENDING_ACTIONS
        truncated = not terminated and self.steps >= self.max_steps
        self.ended = terminated or truncated
        info = self._info(ignored, success)
        info["gold_match"] = matched
        obs = self.render()
        info["frame_key"] = self._frame_key
        return obs, reward, terminated, truncated, info

    def render(self) -> np.ndarray:
        """The current screenshot (read-only HxWx3 uint8, screen pixels)."""
        if self.phone is None:
            raise RuntimeError("call reset() before render()")
        widgets, status_h, nav_h = self.phone.widgets(), self.phone.status_h, self.phone.nav_h
        self._frame_key = self.renderer.signature(widgets, status_h, nav_h)
        return self.renderer.frame(widgets, status_h, nav_h)

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
            "gold_record": self._gold, "gold_match": None, "state_hash": state_hash(task.id, phone),
        }


__all__ = ["DEFAULT_MAX_STEPS", "ENDING_ACTIONS", "EpisodeOverError", "PhoneActionSpace", "SimPhoneEnv",
           "checked_max_steps", "state_hash", "to_action"]
