"""verl's ``mobile_use`` tool for the GUI-agent recipe: one coordinate grid, two phone sources, one episode loop.

- :class:`CoordinateGrid`: how the model writes coordinates. ``grid999`` (default, the recipe's 999x999 screen),
  ``grid1000`` (Qwen3-VL's native 0-1000) or ``pixels`` (absolute screen pixels). The SAME setting drives the
  tool schema the model reads, the data prep's expected actions, the dense reward and the tool's execution.
- Sources, behind the shared env contract (``core.world``): the simulated phone (online; ``task_id`` in the
  create kwargs) and :class:`ReplayPhoneEnv`, a logged trajectory replayed as a phone (offline, as the recipe
  trains; ``screenshots`` + ``expected_actions`` in the create kwargs).
- :class:`MobileUseTool` (a verl ``BaseTool``, declared in ``mobile_use_tool.yaml``): ``create`` opens a
  :class:`core.rollout.EpisodeSession` on the source, ``execute`` maps the call's coordinates from the grid to
  Qwen3-VL's 0-1000 and hands it to ``EpisodeSession.act`` (core.parsers + core.geometry + env step + record:
  the one episode loop), and answers with the next screenshot as an image.

Import by file path (``verl/gui_agent`` on ``PYTHONPATH``): this folder has no ``__init__.py`` so it never
shadows the installed ``verl`` package.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from uuid import uuid4

import gymnasium
import numpy as np
from PIL import Image

from core.actions import Action, canonical_action_name, from_mobile_use
from core.geometry import QWEN3VL_FACTOR, normalized_distance, smart_resize
from core.numbers import NumberError, checked_number
from core.rewards.gui_agent import TOOL_NAME
from core.rollout.session import resized_screen
from core.text_match import text_match

#: The recipe's actions (verl GUI-agent README, "Mobile Use Tool").
RECIPE_ACTIONS = ("click", "long_press", "swipe", "type", "answer", "system_button", "wait", "terminate")
#: EpisodeSession template: Qwen3-VL tool calls on the 0-1000 grid (the tool converts the grid to it).
SESSION_TEMPLATE = "qwen3vl-mobile-use"
_POINT_KEYS = ("coordinate", "coordinate2")
#: Per-screenshot pixel cap (tool answers and the data's first screenshot; 0 = none): 600 Qwen3-VL image tokens of
#: 32 x 32 px. A 1080x2400 phone becomes 512x1152 (576 tokens; 2,550 uncapped), so 20 turns fit the recipe's
#: 16,384-token response budget (19 tool screenshots + 20 answers; tests/test_verl_agent.py counts them with the
#: processor). Coordinates are unaffected: the grid is relative to the screen, whatever size the model sees.
DEFAULT_MAX_SCREENSHOT_PIXELS = 600 * QWEN3VL_FACTOR * QWEN3VL_FACTOR


def cap_screenshot(image: Image.Image, max_pixels: int) -> Image.Image:
    """``image`` shrunk to at most ``max_pixels`` by Qwen3-VL's own rule (``smart_resize``, factor 32: the processor
    then leaves it as it is); unchanged when it is already within the cap or ``max_pixels`` is 0."""
    size = capped_size(image.size, max_pixels)
    return image if size == image.size else image.resize(size, Image.Resampling.BICUBIC)


def capped_size(size: tuple[int, int], max_pixels: int) -> tuple[int, int]:
    """The (W, H) a ``size`` screenshot is shown at under ``max_pixels`` (see :func:`cap_screenshot`)."""
    w, h = size
    if not max_pixels or w * h <= max_pixels:
        return size
    new_h, new_w = smart_resize(h, w, factor=QWEN3VL_FACTOR, min_pixels=QWEN3VL_FACTOR ** 2, max_pixels=max_pixels)
    return new_w, new_h


@dataclass(frozen=True)
class CoordinateGrid:
    """The coordinate space of ``mobile_use`` calls: ``grid999`` (x / W * 999), ``grid1000`` (x / W * 1000) or
    ``pixels`` (screen pixels); ``size`` (W, H) instead names a fixed space of a logged dataset's own (name
    ``custom``). Points are (x, y), origin top-left; ``screen`` is (W, H) in pixels."""

    name: str = "grid999"
    size: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        if self.size is None and self.name not in GRIDS:
            raise ValueError(f"unknown coordinate grid {self.name!r}; known: {', '.join(GRIDS)}")

    @classmethod
    def fixed(cls, width: float, height: float) -> CoordinateGrid:
        """A fixed ``width`` x ``height`` space whatever the screen size."""
        return cls("custom", (float(width), float(height)))

    def extent(self, screen: Sequence[float]) -> tuple[float, float]:
        """(width, height) of the coordinate space for a ``screen`` of (W, H) pixels."""
        screen_size(screen)
        if self.size is not None:
            return self.size
        n = GRIDS[self.name]
        return (float(screen[0]), float(screen[1])) if n is None else (float(n), float(n))

    def to_screen(self, xy: Sequence[float], screen: Sequence[float]) -> tuple[float, float]:
        """A grid point in screen pixels."""
        gw, gh = self.extent(screen)
        return float(xy[0]) * screen[0] / gw, float(xy[1]) * screen[1] / gh

    def from_screen(self, xy: Sequence[float], screen: Sequence[float], *, rounded: bool = True) -> list[float]:
        """A screen-pixel point on this grid, rounded to integers (how the model writes it) unless ``rounded`` is
        False."""
        gw, gh = self.extent(screen)
        x, y = float(xy[0]) * gw / screen[0], float(xy[1]) * gh / screen[1]
        return [round(x), round(y)] if rounded else [x, y]

    def box_from_screen(self, box: Sequence[float], screen: Sequence[float]) -> list[float]:
        """A screen-pixel box [x1, y1, x2, y2] on this grid (floats: boxes are not rounded)."""
        gw, gh = self.extent(screen)
        sx, sy = gw / screen[0], gh / screen[1]
        return [box[0] * sx, box[1] * sy, box[2] * sx, box[3] * sy]

    def describe(self) -> str:
        """The sentence the tool schema uses to tell the model how coordinates are written."""
        n = GRIDS[self.name]
        if n is None:
            return "Coordinates are absolute screen pixels: [0, 0] is the top-left corner; the screen size is given in the task."
        return (f"Coordinates are on a relative 0-{n} grid whatever the screen size: [0, 0] is the top-left corner "
                f"and [{n}, {n}] the bottom-right corner.")


GRIDS: dict[str, int | None] = {"grid999": 999, "grid1000": 1000, "pixels": None}


def screen_size(screen: Any) -> tuple[float, float]:
    """``screen`` as (W, H) pixels, both finite and > 0; :class:`core.numbers.NumberError` naming it otherwise
    (a 0x0 screen would divide by zero in every conversion)."""
    if isinstance(screen, (str, bytes)) or not isinstance(screen, Sequence) or len(screen) != 2:
        raise NumberError("screen size", f"must be [width, height], got {screen!r:.60}")
    return (checked_number(screen[0], "screen width", above=0), checked_number(screen[1], "screen height", above=0))


def mobile_use_tool_schema(grid: CoordinateGrid) -> dict[str, Any]:
    """OpenAI function schema of the ``mobile_use`` tool (our wording) for ``grid``; the chat template renders it
    in the system turn."""
    coord = f"[x, y]. {grid.describe()}"
    return {"type": "function", "function": {
        "name": TOOL_NAME,
        "description": ("Use a touchscreen to interact with an Android phone, one action per call, looking at the "
                        "current screenshot. " + grid.describe()),
        "parameters": {"type": "object", "required": ["action"], "properties": {
            "action": {"type": "string", "enum": list(RECIPE_ACTIONS), "description": (
                "click: tap `coordinate`. long_press: press and hold `coordinate` for `time` seconds. swipe: slide "
                "from `coordinate` to `coordinate2`. type: enter `text` into the focused field. answer: give the "
                "answer `text`. system_button: press `button`. wait: wait `time` seconds. terminate: end the task "
                "with `status`.")},
            "coordinate": {"type": "array", "description": f"Point for click, long_press and the swipe start: {coord}"},
            "coordinate2": {"type": "array", "description": f"Where a swipe ends: {coord}"},
            "text": {"type": "string", "description": "Text for type and answer."},
            "time": {"type": "number", "description": "Seconds for long_press and wait."},
            "button": {"type": "string", "enum": ["Back", "Home", "Menu", "Enter"],
                       "description": "System button for system_button."},
            "status": {"type": "string", "enum": ["success", "failure"], "description": "For terminate."},
        }},
    }}


def regrid_arguments(arguments: Mapping[str, Any], src: CoordinateGrid, dst: CoordinateGrid,
                     screen: Sequence[float], *, rounded: bool = True) -> dict[str, Any]:
    """``mobile_use`` arguments with ``coordinate``/``coordinate2`` moved from grid ``src`` to grid ``dst``
    (integers, as a model writes them, unless ``rounded`` is False). Coordinates that are no finite numbers
    (text, NaN, inf, an integer beyond the float range) or land outside the float range are left as they are
    (the parser downstream names them)."""
    out = dict(arguments)
    for key in _POINT_KEYS:
        value = out.get(key)
        if (isinstance(value, (list, tuple)) and len(value) == 2
                and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)):
            try:
                point = [checked_number(v, key) for v in dst.from_screen(
                    src.to_screen([checked_number(v, key) for v in value], screen), screen, rounded=False)]
            except NumberError:
                continue
            out[key] = [round(v) for v in point] if rounded else point
    return out


def tool_call_text(arguments: Mapping[str, Any]) -> str:
    """A canonical ``<tool_call>`` block for ``arguments`` (how ``EpisodeSession.act`` receives a tool call)."""
    return "<tool_call>\n" + json.dumps({"name": TOOL_NAME, "arguments": dict(arguments)}, ensure_ascii=False) + \
        "\n</tool_call>"


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
                    regrid_arguments(args, grid, _PIXELS, self.screen_size, rounded=False), swipe_as_scroll=True))
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
                "step": self.steps}

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


_PIXELS = CoordinateGrid("pixels")


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
    """verl ``BaseTool`` for ``mobile_use``. Config (tool YAML ``config``): ``grid`` (grid999 | grid1000 | pixels),
    ``env`` (``core.rollout`` env name for online tasks, default sim-phone), ``max_steps`` (20),
    ``max_screenshot_pixels`` (:data:`DEFAULT_MAX_SCREENSHOT_PIXELS`; 0 = full screens)."""

    def __init__(self, config: dict, tool_schema: Any = None):
        from verl.tools.schemas import OpenAIFunctionToolSchema

        self.grid = CoordinateGrid(str(config.get("grid", "grid999")))
        self.env_name = str(config.get("env", "sim-phone"))
        self.max_steps = checked_number(config.get("max_steps", 20), "mobile_use config max_steps", minimum=1,
                                        integer=True)
        self.max_screenshot_pixels = checked_number(config.get("max_screenshot_pixels", DEFAULT_MAX_SCREENSHOT_PIXELS),
                                                    "mobile_use config max_screenshot_pixels", minimum=0, integer=True)
        schema = tool_schema or OpenAIFunctionToolSchema.model_validate(mobile_use_tool_schema(self.grid))
        self.config, self.tool_schema, self.name = config, schema, schema.function.name
        self.sessions: dict[str, Any] = {}

    async def create(self, instance_id: str | None = None, create_kwargs: Mapping[str, Any] | None = None,
                     **kwargs: Any):
        """Open an :class:`~core.rollout.EpisodeSession` on the trajectory's source; returns (id, response)."""
        from core.rollout import EpisodeSession
        from verl.tools.schemas import ToolResponse

        instance_id = instance_id or uuid4().hex
        create_kwargs = dict(create_kwargs or {})
        env, task = make_phone_env(create_kwargs, self.grid, env_name=self.env_name, max_steps=self.max_steps)
        self.sessions[instance_id] = EpisodeSession(env, task, template=SESSION_TEMPLATE, max_steps=self.max_steps,
                                                    seed=create_kwargs.get("seed"), episode_id=instance_id)
        return instance_id, ToolResponse()

    def session(self, instance_id: str) -> Any:
        return self.sessions[instance_id]

    def screenshot(self, instance_id: str) -> Image.Image:
        """The current screen as an RGB PIL image, within ``max_screenshot_pixels``."""
        session = self.sessions[instance_id]
        size = capped_size(session.episode.screen_size, self.max_screenshot_pixels)
        return resized_screen(session.obs, size, session.info.get("frame_key"))  # resized once per simulated screen

    async def execute(self, instance_id: str, parameters: dict[str, Any], **kwargs: Any):
        """Apply one call (arguments on the grid). Returns (response, step reward, metrics): the response is the
        next screenshot (and a text note when the phone ignored or rejected the action, or the episode ended)."""
        from verl.tools.schemas import ToolResponse

        session = self.sessions[instance_id]
        args = regrid_arguments(parameters, self.grid, CoordinateGrid("grid1000"), session.episode.screen_size)
        rec = session.act(tool_call_text(args))
        note = (f"Invalid action: {rec.invalid}." if rec.invalid else
                f"The phone ignored the action: {rec.ignored}." if rec.ignored else None)
        metrics = {"invalid": rec.invalid is not None, "ignored": rec.ignored is not None, "success": rec.success,
                   "done": session.done}
        if session.done:
            return ToolResponse(text=note or "The episode is over."), rec.reward, metrics
        return ToolResponse(image=[self.screenshot(instance_id)], text=note), rec.reward, metrics

    async def calc_reward(self, instance_id: str, **kwargs: Any) -> float:
        """1.0 when the task's goal check holds now (simulated phone) / every expected action matched (replay)."""
        return float(self.sessions[instance_id].episode.success)

    async def release(self, instance_id: str, **kwargs: Any) -> None:
        session = self.sessions.pop(instance_id, None)
        if session is not None:
            session.env.close()  # a MiniWoB++ env holds a browser


__all__ = ["DEFAULT_MAX_SCREENSHOT_PIXELS", "GRIDS", "RECIPE_ACTIONS", "TOOL_NAME", "CoordinateGrid", "MobileUseTool",
           "ReplayPhoneEnv", "actions_match", "cap_screenshot", "capped_size", "make_phone_env", "mobile_use_tool_schema",
           "regrid_arguments", "screen_size", "tool_call_text"]
