"""The GUI-agent recipe (verl's mobile-agent recipe, ``../shared/seeds/verl-gui-agent-recipe-README.md``) as ONE
file, and the model request it implies.

The recipe file (``verl/gui_agent/recipe.yaml``) holds every value that decides what the model sees and how an
episode runs: the coordinate ``grid`` of the ``mobile_use`` tool, ``max_turns``, ``max_screenshots``,
``max_screenshot_pixels``, ``on_invalid``, ``aggregation``, ``completion_bonus``, the online ``env``, the task
``prompt`` and the RL method training uses (``adv_estimator``: grpo, gigpo or grpo_nsr, with GiGPO's ``gigpo_gamma``,
``gigpo_step_weight`` and ``gigpo_mode``: docs/rl-algorithms.md). Training reads it (``run_gui_agent.sh``: the agent loop, the tool YAML, the data prep) and
``gui-agent rollout --recipe`` reads it, so online evaluation sees what training optimises.

This module is the one owner of the request: the tool schema (:func:`mobile_use_tool_schema`, written from the
grid), the first user message (:meth:`AgentRecipe.first_message`), the tool turn carrying the next screenshot
(:meth:`AgentRecipe.tool_message`), the feedback turn after an invalid answer (:meth:`AgentRecipe.feedback_message`)
and the screenshot cap (:func:`capped_size`). verl's ``gui_agent`` loop and :class:`core.rollout.recipe.RecipeSession`
both build their conversations from them.

``python -m core.agent_recipe shell RECIPE.yaml`` prints the values as shell assignments (``RECIPE_GRID=grid999``
...) for the run scripts; a bad file is one ``error:`` line naming the key, exit 2.
"""

from __future__ import annotations

import json
import shlex
import sys

if __name__ == "__main__":  # the first command run_gui_agent.sh runs: a wrong Python stops in one line, exit 2
    from core.interpreter import require

    require(command=shlex.join(["python", "-m", "core.agent_recipe", *sys.argv[1:]]))

from collections.abc import Mapping, Sequence  # noqa: E402
from dataclasses import dataclass, field, fields, replace  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from PIL import Image  # noqa: E402

from core.console import quoted  # noqa: E402
from core.geometry import QWEN3VL_FACTOR, smart_resize  # noqa: E402
from core.numbers import NumberError, checked_number  # noqa: E402
from core.rewards.gui_agent import TOOL_NAME  # noqa: E402

#: The recipe's actions (verl GUI-agent README, "Mobile Use Tool").
RECIPE_ACTIONS = ("click", "long_press", "swipe", "type", "answer", "system_button", "wait", "terminate")
_POINT_KEYS = ("coordinate", "coordinate2")
#: Per-screenshot pixel cap (tool answers and the data's first screenshot; 0 = none): 600 Qwen3-VL image tokens of
#: 32 x 32 px. A 1080x2400 phone becomes 512x1152 (576 tokens; 2,550 uncapped), so 20 turns fit the recipe's
#: 16,384-token response budget (19 tool screenshots + 20 answers; tests/test_verl_agent.py counts them with the
#: processor). Coordinates are unaffected: the grid is relative to the screen, whatever size the model sees.
DEFAULT_MAX_SCREENSHOT_PIXELS = 600 * QWEN3VL_FACTOR * QWEN3VL_FACTOR
#: The task prompt of the first user turn (after the first screenshot): ``{instruction}``, ``{width}`` and
#: ``{height}`` (the screen's own pixels) are filled in.
DEFAULT_PROMPT = ("Task: {instruction}\nThe screen is {width}x{height} pixels. Operate it with the mobile_use tool, "
                  "one action per turn. Answer with a line 'Thought: ...', a line 'Action: ...' and exactly one "
                  "<tool_call>.")
PROMPT_FIELDS = ("instruction", "width", "height")
AGGREGATIONS = ("mean", "last")
ON_INVALID = ("end", "feedback")
#: The recipe README's names for the coordinate space (``gui_agent.screen_width/height``: 999).
SCREEN_KEYS = ("screen_width", "screen_height")
#: ``adv_estimator`` of the agent recipe: verl's GRPO, GiGPO's step-level credit, GRPO with negative samples for
#: all-fail groups (docs/rl-algorithms.md; the run scripts pass it as ``algorithm.adv_estimator``).
ADV_ESTIMATORS = ("grpo", "gigpo", "grpo_nsr")


def capped_size(size: tuple[int, int], max_pixels: int) -> tuple[int, int]:
    """The (W, H) a ``size`` screenshot is shown at under ``max_pixels``: unchanged within the cap (or with
    ``max_pixels`` 0), else Qwen3-VL's own rule (``smart_resize``, factor 32: the processor then leaves it)."""
    w, h = size
    if not max_pixels or w * h <= max_pixels:
        return size
    new_h, new_w = smart_resize(h, w, factor=QWEN3VL_FACTOR, min_pixels=QWEN3VL_FACTOR ** 2, max_pixels=max_pixels)
    return new_w, new_h


def cap_screenshot(image: Image.Image, max_pixels: int) -> Image.Image:
    """``image`` at :func:`capped_size` (Pillow bicubic, as ``core.rollout.session.resized_screen``)."""
    size = capped_size(image.size, max_pixels)
    return image if size == image.size else image.resize(size, Image.Resampling.BICUBIC)


# --------------------------------------------------------------------------------------------- the grid


GRIDS: dict[str, int | None] = {"grid999": 999, "grid1000": 1000, "pixels": None}


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


GRID1000 = CoordinateGrid("grid1000")
PIXELS = CoordinateGrid("pixels")


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


# --------------------------------------------------------------------------------------------- the recipe

class AgentRecipeError(ValueError):
    """A bad recipe file or value; the message names the file and the key."""


@dataclass(frozen=True)
class AgentRecipe:
    """The recipe's values (see the module docstring); ``source`` names where they were read (for messages)."""

    grid: str = "grid999"
    max_turns: int = 20
    max_screenshots: int = 20
    max_screenshot_pixels: int = DEFAULT_MAX_SCREENSHOT_PIXELS
    on_invalid: str = "end"
    aggregation: str = "mean"
    completion_bonus: float = 1.0
    env: str = "sim-phone"
    prompt: str = DEFAULT_PROMPT
    adv_estimator: str = "grpo"
    gigpo_gamma: float = 0.95
    gigpo_step_weight: float = 1.0
    gigpo_mode: str = "mean_norm"
    source: str = field(default="defaults", compare=False)

    def __post_init__(self) -> None:
        def bad(key: str, why: str) -> AgentRecipeError:
            return AgentRecipeError(f"{self.source}: {key}: {why}")

        for key, choices in (("grid", GRIDS), ("on_invalid", ON_INVALID), ("aggregation", AGGREGATIONS)):
            value = getattr(self, key)  # a list or a mapping is no choice (and unhashable): named, never a TypeError
            if not isinstance(value, str) or value not in choices:
                raise bad(key, f"must be one of {', '.join(choices)}, got {quoted(value)}")
        if not isinstance(self.env, str) or not self.env:
            raise bad("env", f"must be an env name (sim-phone, miniwob), got {quoted(self.env)}")
        numbers = {"max_turns": {"minimum": 1, "integer": True}, "max_screenshots": {"minimum": 1, "integer": True},
                   "max_screenshot_pixels": {"minimum": 0, "integer": True}, "completion_bonus": {"minimum": 0}}
        for name, rule in numbers.items():  # frozen: set through object.__setattr__
            try:
                object.__setattr__(self, name, checked_number(getattr(self, name), name, **rule))
            except NumberError as e:  # its message names the key
                raise AgentRecipeError(f"{self.source}: {e}") from None
        if not isinstance(self.adv_estimator, str) or self.adv_estimator not in ADV_ESTIMATORS:
            raise bad("adv_estimator", f"must be one of {', '.join(ADV_ESTIMATORS)}, got {quoted(self.adv_estimator)}")
        from core.rl.gigpo import check_options

        try:
            gigpo = check_options(gamma=self.gigpo_gamma, step_weight=self.gigpo_step_weight, mode=self.gigpo_mode,
                                  prefix="gigpo_")
        except ValueError as e:  # names gigpo_gamma / gigpo_step_weight / gigpo_mode
            raise AgentRecipeError(f"{self.source}: {e}") from None
        object.__setattr__(self, "gigpo_gamma", gigpo["gamma"])
        object.__setattr__(self, "gigpo_step_weight", gigpo["step_weight"])
        if not isinstance(self.prompt, str):
            raise bad("prompt", f"must be text, got {type(self.prompt).__name__}")
        try:
            self.prompt.format(instruction="x", width=1, height=1)
        except (KeyError, IndexError, ValueError, AttributeError, TypeError) as e:  # {width[0]}: a TypeError
            raise bad("prompt", f"only {{{'}, {'.join(PROMPT_FIELDS)}}} can be filled in, as they are ("
                                f"{type(e).__name__}: {quoted(str(e))})") from None
        if "{instruction}" not in self.prompt:
            raise bad("prompt", "must contain {instruction} (the task)")

    @classmethod
    def keys(cls) -> tuple[str, ...]:
        """The keys a recipe file may hold (besides the README's ``screen_width``/``screen_height``)."""
        return tuple(f.name for f in fields(cls) if f.name != "source")

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any] | None, *, source: str = "recipe",
                     base: AgentRecipe | None = None) -> AgentRecipe:
        """``base`` (default: the defaults) with ``values`` applied. ``screen_width`` / ``screen_height`` (the
        recipe README's names, 999 there) are read as the grid they describe: 999 x 999 is ``grid999``, 1000 x 1000
        ``grid1000``; any other size, or one that disagrees with ``grid``, is an error naming ``grid``. Unknown
        keys: an error naming them."""
        values = dict(values or {})
        size = [values.pop(k) for k in SCREEN_KEYS if k in values]
        unknown = sorted(set(values) - set(cls.keys()), key=str)  # keys of any YAML type (1, null) sort too
        if unknown:
            raise AgentRecipeError(f"{source}: unknown key(s) {quoted(unknown)}; known: "
                                   f"{sorted({*cls.keys(), *SCREEN_KEYS})}")
        if size:
            named = {(n, n): name for name, n in GRIDS.items() if n is not None}
            try:
                grid = named[tuple(float(v) for v in size)] if len(size) == 2 else None
            except (TypeError, ValueError, KeyError):
                grid = None
            if grid is None:
                raise AgentRecipeError(
                    f"{source}: screen_width/screen_height {quoted(size)}: the coordinate space is set by grid (grid999 = "
                    f"999 x 999, the recipe's; grid1000 = 1000 x 1000; pixels = screen pixels); give both as 999 "
                    f"or 1000, or set grid")
            if values.setdefault("grid", grid) != grid:
                raise AgentRecipeError(f"{source}: screen_width/screen_height {quoted(size)} mean grid {grid!r} but "
                                       f"grid is {quoted(values['grid'])}: set one of them")
        return replace(base or cls(), source=source, **values)

    @classmethod
    def load(cls, path: str | Path) -> AgentRecipe:
        """The recipe file at ``path`` (YAML mapping); :class:`AgentRecipeError` naming the file and key."""
        from core.recipes import RecipeError, load_recipe

        try:
            data = load_recipe(path)
        except RecipeError as e:
            raise AgentRecipeError(str(e)) from None
        except Exception as e:  # noqa: BLE001 - a YAML syntax error: one line naming the file
            raise AgentRecipeError(f"{path}: not a readable YAML recipe: {str(e).splitlines()[0]}") from None
        return cls.from_mapping(data, source=str(path))

    @property
    def coordinate_grid(self) -> CoordinateGrid:
        return CoordinateGrid(self.grid)

    # ------------------------------------------------------------------------------------- the request

    def tool_schemas(self) -> list[dict[str, Any]]:
        """The ``tools`` of every chat-template call: the ``mobile_use`` schema on the recipe's grid."""
        return [mobile_use_tool_schema(self.coordinate_grid)]

    def task_text(self, instruction: str, screen: Sequence[int]) -> str:
        """The first user turn's text: :attr:`prompt` for ``instruction`` on a ``screen`` of (W, H) pixels (the
        screen's own size, not the capped screenshot's)."""
        return self.prompt.format(instruction=instruction, width=int(screen[0]), height=int(screen[1]))

    def first_message(self, instruction: str, screen: Sequence[int], image: Any = None) -> dict[str, Any]:
        """The first user message: the screenshot (``image``, a capped PIL image; omitted: a bare image slot, as
        the data's ``raw_prompt`` column stores it) then :meth:`task_text`."""
        slot = {"type": "image"} if image is None else {"type": "image", "image": image}
        return {"role": "user", "content": [slot, {"type": "text", "text": self.task_text(instruction, screen)}]}

    @staticmethod
    def tool_message(images: Sequence[Any], note: str | None = None) -> dict[str, Any]:
        """The tool's answer to an executed call: the next screenshot(s), then ``note`` (why the phone ignored or
        rejected the action) when there is one."""
        content: list[dict[str, Any]] = [{"type": "image", "image": img} for img in images]
        if note:
            content.append({"type": "text", "text": note})
        return {"role": "tool", "content": content}

    @staticmethod
    def feedback_message(problem: str) -> dict[str, Any]:
        """The user turn after an answer that was not exactly one ``mobile_use`` call (``on_invalid: feedback``)."""
        return {"role": "user", "content": (
            f"Your answer was not executed: {problem}. Answer with a Thought: line, an Action: line and exactly one "
            f"<tool_call> to {TOOL_NAME}.")}

    @staticmethod
    def action_note(invalid: str | None, ignored: str | None) -> str | None:
        """The text beside the next screenshot: the env rejected (``invalid``) or ignored the executed call."""
        return f"Invalid action: {invalid}." if invalid else \
            f"The phone ignored the action: {ignored}." if ignored else None

    def shell_lines(self) -> list[str]:
        """``RECIPE_<KEY>=value`` lines (shell-quoted) of every value, for the run scripts."""
        return [f"RECIPE_{k.upper()}={shlex.quote(str(getattr(self, k)))}" for k in self.keys()]


def message_text(message: Mapping[str, Any]) -> str:
    """A chat message as ``core.inference`` requests carry it: text with one ``<image>`` placeholder per image part
    (typed parts joined in order)."""
    from core.prompts import IMAGE_PLACEHOLDER

    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(IMAGE_PLACEHOLDER if p.get("type") == "image" else str(p.get("text", "")) for p in content or ())


__all__ = ["ADV_ESTIMATORS", "AGGREGATIONS", "DEFAULT_MAX_SCREENSHOT_PIXELS", "DEFAULT_PROMPT", "GRID1000", "GRIDS", "ON_INVALID",
           "PIXELS", "RECIPE_ACTIONS", "SCREEN_KEYS", "AgentRecipe", "AgentRecipeError", "CoordinateGrid",
           "cap_screenshot", "capped_size", "message_text", "mobile_use_tool_schema", "regrid_arguments",
           "screen_size", "tool_call_text"]


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) != 2 or argv[0] != "shell":
        print("usage: python -m core.agent_recipe shell RECIPE.yaml", file=sys.stderr)
        return 2
    try:
        recipe = AgentRecipe.load(argv[1])
    except AgentRecipeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print("\n".join(recipe.shell_lines()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
