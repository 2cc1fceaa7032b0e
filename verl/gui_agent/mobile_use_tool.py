"""verl's ``mobile_use`` tool for the GUI-agent recipe: one agent recipe, two phone sources, one episode loop.

- The coordinate grid, the tool schema, the screenshot cap and the request messages belong to
  :mod:`core.agent_recipe` (re-exported here: :class:`CoordinateGrid`, :func:`mobile_use_tool_schema`, ...); the
  tool reads the agent recipe file (``config.recipe``, default ``recipe.yaml`` beside this module).
- Sources, behind the shared env contract (``core.world``): the simulated phone or MiniWoB++ (online; ``task_id``
  in the create kwargs) and :class:`ReplayPhoneEnv`, a logged trajectory replayed as a phone (offline, as the
  recipe trains; ``screenshots`` + ``expected_actions`` in the create kwargs).
- :class:`MobileUseTool` (a verl ``BaseTool``, declared in ``mobile_use_tool.yaml``): ``create`` opens a
  :class:`core.rollout.recipe.RecipeSession` on the source (the conversation, answer handling and endings of the
  recipe, the same session ``gui-agent rollout --recipe`` plays); ``execute`` hands one call to it and answers
  with the next screenshot as an image.

Import by file path (``verl/gui_agent`` on ``PYTHONPATH``): this folder has no ``__init__.py`` so it never
shadows the installed ``verl`` package.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from uuid import uuid4

import gymnasium
import numpy as np
from PIL import Image

from core.actions import Action, canonical_action_name, from_mobile_use
from core.agent_recipe import (
    DEFAULT_MAX_SCREENSHOT_PIXELS,
    GRIDS,
    PIXELS,
    RECIPE_ACTIONS,
    AgentRecipe,
    CoordinateGrid,
    cap_screenshot,
    capped_size,
    mobile_use_tool_schema,
    regrid_arguments,
    screen_size,
    tool_call_text,
)
from core.geometry import normalized_distance
from core.numbers import checked_number
from core.rewards.gui_agent import TOOL_NAME
from core.text_match import text_match

#: The recipe file beside this module: what the tool reads when its config names none.
DEFAULT_RECIPE = Path(__file__).resolve().parent / "recipe.yaml"


# --------------------------------------------------------------------------------------------- replay source


def plain(value: Any) -> Any:
    """``value`` as read back from parquet (numpy arrays, structs with null fields) turned into plain lists and
    dicts without ``None`` values."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def _rgb_array(image: Any) -> np.ndarray:
    """HxWx3 uint8 array of a PIL image, image bytes, a ``{"bytes": ...}`` dict or a path."""
    if isinstance(image, Mapping):
        image = image.get("bytes") or image.get("path")
    if isinstance(image, (bytes, bytearray)):
        image = Image.open(io.BytesIO(image))
    elif isinstance(image, str):
        image = Image.open(image)
    if not isinstance(image, Image.Image):
        raise ValueError(f"a screenshot must be a PIL image, image bytes or a path, got {type(image).__name__}")
    return np.asarray(image.convert("RGB"), dtype=np.uint8)


def actions_match(pred: Action, gold: Action, screen: Sequence[float]) -> bool:
    """Does ``pred`` do what ``gold`` does (both in screen pixels)? Same canonical action; points within 14% of the
    screen (GUI-R1 / AndroidControl); text token F1 >= 0.5; same scroll direction."""
    if canonical_action_name(pred.type) != canonical_action_name(gold.type):
        return False
    if gold.point is not None and (pred.point is None or
                                   normalized_distance(pred.point, gold.point, screen[0], screen[1]) >= 0.14):
        return False
    if gold.direction is not None and pred.direction != gold.direction:
        return False
    return gold.text is None or text_match(pred.text or "", gold.text)


class ReplayPhoneEnv(gymnasium.Env):
    """A logged trajectory played back as a phone (the env contract of ``core.world``, offline).

    ``screenshots[i]`` is the screen before ``expected_actions[i]`` (``mobile_use`` arguments on ``grid``).
    Every action advances to the next logged screenshot (the last one repeats): the screens the model sees are
    the logged ones whatever it does, as in the recipe's offline training. The goal check (``success``, reward
    1.0 the step it first holds) is the offline one: every expected action matched, in order
    (:func:`actions_match`). Ending actions (terminate/answer) terminate; ``max_steps`` truncates.
    """

    metadata = {"render_modes": []}

    def __init__(self, screenshots: Sequence[Any], expected_actions: Sequence[Mapping[str, Any]], *,
                 instruction: str, grid: CoordinateGrid, task_id: str = "replay", max_steps: int = 20):
        if screenshots is None or len(screenshots) == 0:
            raise ValueError("a replayed trajectory needs at least one screenshot")
        self._screens = [_rgb_array(s) for s in screenshots]
        h, w = self._screens[0].shape[:2]
        self.screen_size = (w, h)
        self.instruction, self.task_id, self.default_max_steps = instruction, task_id, max_steps
        self.expected: list[Action] = []
        for i, args in enumerate(plain(list(expected_actions))):
            try:
                self.expected.append(from_mobile_use(
                    regrid_arguments(args, grid, PIXELS, self.screen_size, rounded=False), swipe_as_scroll=True))
            except ValueError as e:
                raise ValueError(f"expected_actions[{i}]: {e}") from None
        self._reset_state(max_steps)

    def _reset_state(self, max_steps: int) -> None:
        self.index, self.matched, self.steps, self.max_steps, self.succeeded = 0, 0, 0, max_steps, False

    def _obs(self) -> np.ndarray:
        return self._screens[min(self.index, len(self._screens) - 1)]

    def _info(self, ignored: str | None = None) -> dict[str, Any]:
        gold = self.expected[self.matched] if self.matched == self.index and self.matched < len(self.expected) else None
        return {"task_id": self.task_id, "family": "replay", "app": None, "instruction": self.instruction,
                "step_instruction": None, "screen_size": self.screen_size, "widgets": [],
                "success": self.succeeded, "gold_action": gold, "gold_box": None, "ignored": ignored,
                "step": self.steps, "state_hash": self.state_hash()}

    def state_hash(self) -> str:
        """The anchor of the current state (GiGPO): the task, the logged screen shown and how many expected actions
        were matched, hashed (the replay's whole state; never its pixels)."""
        return hashlib.sha256(repr((self.task_id, self.index, self.matched)).encode("utf-8")).hexdigest()

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self._reset_state(checked_number((options or {}).get("max_steps", self.default_max_steps),
                                         "options['max_steps']", minimum=1, integer=True))
        return self._obs(), self._info()

    def step(self, action: Action):
        if not isinstance(action, Action):
            raise ValueError(f"action must be a core.actions.Action, got {type(action).__name__}")
        on_track = self.matched == self.index and self.matched < len(self.expected)
        if on_track and actions_match(action, self.expected[self.matched], self.screen_size):
            self.matched += 1
        self.index += 1
        self.steps += 1
        reward = 0.0
        if not self.succeeded and self.expected and self.matched == len(self.expected):
            self.succeeded, reward = True, 1.0
        terminated = self.succeeded or canonical_action_name(action.type) in ("complete", "impossible", "answer")
        truncated = not terminated and self.steps >= self.max_steps
        return self._obs(), reward, terminated, truncated, self._info()


def make_phone_env(create_kwargs: Mapping[str, Any], grid: CoordinateGrid, *, env_name: str = "sim-phone",
                   max_steps: int = 20) -> tuple[Any, Any]:
    """(env, task) for a trajectory: a :class:`ReplayPhoneEnv` when ``create_kwargs`` has ``screenshots``, else
    the online env the row names (``env``: a ``core.rollout`` env, e.g. miniwob) or ``env_name`` on ``task_id``.
    ``ValueError`` naming the missing key."""
    if create_kwargs.get("screenshots") is not None and len(create_kwargs["screenshots"]):
        env = ReplayPhoneEnv(list(create_kwargs["screenshots"]), plain(create_kwargs.get("expected_actions", [])),
                             instruction=str(create_kwargs.get("instruction") or ""), grid=grid,
                             task_id=str(create_kwargs.get("task_id") or "replay"), max_steps=max_steps)
        return env, env.task_id
    if not create_kwargs.get("task_id"):
        raise ValueError("mobile_use create_kwargs need 'task_id' (simulated phone) or 'screenshots' (replay)")
    from core.rollout.envs import get_env

    return get_env(str(create_kwargs.get("env") or env_name)).make(), str(create_kwargs["task_id"])


# --------------------------------------------------------------------------------------------- the verl tool


def _base_tool():
    from verl.tools.base_tool import BaseTool

    return BaseTool


class MobileUseTool(_base_tool()):
    """verl ``BaseTool`` for ``mobile_use``. Config (tool YAML ``config``): ``recipe`` (the agent recipe file,
    :class:`core.agent_recipe.AgentRecipe`; empty: :data:`DEFAULT_RECIPE`), and optionally recipe values on top of
    it: ``grid``, ``env``, ``max_steps`` (= the recipe's ``max_turns``), ``max_screenshot_pixels``."""

    def __init__(self, config: dict, tool_schema: Any = None):
        from verl.tools.schemas import OpenAIFunctionToolSchema

        path = config.get("recipe") or DEFAULT_RECIPE
        given = {k: config[k] for k in ("grid", "env", "max_screenshot_pixels") if config.get(k) is not None}
        if config.get("max_steps") is not None:
            given["max_turns"] = config["max_steps"]
        self.recipe = AgentRecipe.load(path)
        if given:
            self.recipe = AgentRecipe.from_mapping(given, source=f"mobile_use config ({path})", base=self.recipe)
        self.grid = self.recipe.coordinate_grid
        self.env_name, self.max_steps = self.recipe.env, self.recipe.max_turns
        self.max_screenshot_pixels = self.recipe.max_screenshot_pixels
        schema = tool_schema or OpenAIFunctionToolSchema.model_validate(mobile_use_tool_schema(self.grid))
        self.config, self.tool_schema, self.name = config, schema, schema.function.name
        self.sessions: dict[str, Any] = {}

    async def create(self, instance_id: str | None = None, create_kwargs: Mapping[str, Any] | None = None,
                     recipe: AgentRecipe | None = None, **kwargs: Any):
        """Open a :class:`core.rollout.recipe.RecipeSession` on the trajectory's source under ``recipe`` (the agent
        loop's; default: the tool's); returns (id, response)."""
        from core.rollout.recipe import RecipeSession
        from verl.tools.schemas import ToolResponse

        recipe = recipe or self.recipe
        instance_id = instance_id or uuid4().hex
        create_kwargs = dict(create_kwargs or {})
        env, task = make_phone_env(create_kwargs, recipe.coordinate_grid, env_name=recipe.env,
                                   max_steps=recipe.max_turns)
        self.sessions[instance_id] = RecipeSession(env, task, recipe, seed=create_kwargs.get("seed"),
                                                   episode_id=instance_id)
        return instance_id, ToolResponse()

    def session(self, instance_id: str) -> Any:
        return self.sessions[instance_id]

    def screenshot(self, instance_id: str) -> Image.Image:
        """The current screen as an RGB PIL image, within ``max_screenshot_pixels``."""
        return self.sessions[instance_id].screenshot()

    async def execute(self, instance_id: str, parameters: dict[str, Any], **kwargs: Any):
        """Apply one call (arguments on the grid) through the session. Returns (response, step reward, metrics):
        the response is the session's next tool turn (the next screenshot, with a note when the phone ignored or
        rejected the action), or a text note when the episode ended."""
        from verl.tools.schemas import ToolResponse

        session = self.sessions[instance_id]
        before = len(session.conversation)
        rec = session.act(tool_call_text(parameters))
        metrics = {"invalid": rec.invalid is not None, "ignored": rec.ignored is not None, "success": rec.success,
                   "done": session.done}
        turn = session.conversation[before + 1:]  # after the answer: the tool turn, when the episode goes on
        if not turn or turn[0]["role"] != "tool":
            note = session.recipe.action_note(rec.invalid, rec.ignored)
            return ToolResponse(text=note or "The episode is over."), rec.reward, metrics
        parts = turn[0]["content"]
        text = next((p["text"] for p in parts if p["type"] == "text"), None)
        return ToolResponse(image=[p["image"] for p in parts if p["type"] == "image"], text=text), rec.reward, \
            metrics

    async def calc_reward(self, instance_id: str, **kwargs: Any) -> float:
        """1.0 when the task's goal check holds now (simulated phone) / every expected action matched (replay)."""
        return float(self.sessions[instance_id].episode.success)

    async def release(self, instance_id: str, **kwargs: Any) -> None:
        session = self.sessions.pop(instance_id, None)
        if session is not None:
            session.env.close()  # a MiniWoB++ env holds a browser


__all__ = ["DEFAULT_MAX_SCREENSHOT_PIXELS", "DEFAULT_RECIPE", "GRIDS", "RECIPE_ACTIONS", "TOOL_NAME", "CoordinateGrid", "MobileUseTool",
           "ReplayPhoneEnv", "actions_match", "cap_screenshot", "capped_size", "make_phone_env", "mobile_use_tool_schema",
           "regrid_arguments", "screen_size", "tool_call_text"]
