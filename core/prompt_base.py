"""The bottom of the prompt registry: :class:`PromptTemplate` (the base every template derives from), the
``<image>`` placeholder, :class:`TemplateError` and the history / action descriptions templates write.

:mod:`core.prompts` (GUI-R1 and Qwen3-VL templates, the registry) and :mod:`core.model_prompts` (public models'
templates) both build on this module; neither imports the other's registry back.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from core.actions import (
    ACTION_NAMES,
    GUIR1_NO_TARGET,
    Action,
    canonical_action_name,
    from_mobile_use,
    swipe_to_scroll,
    to_mobile_use,
)
from core.geometry import QWEN25VL_FACTOR, QWEN25VL_MAX_PIXELS, QWEN25VL_MIN_PIXELS, Frame, ImageGeometry
from core.schema import Step

IMAGE_PLACEHOLDER = "<image>"
#: GUI-R1's point for actions without one, as answers write it (integers).
GUIR1_NO_POINT = [int(v) for v in GUIR1_NO_TARGET]


def describe_action(action: Action) -> str:
    """A short imperative English description of ``action`` (used when a dataset has none)."""
    t = action.type
    if t in ("type", "select"):
        return f"{'Type' if t == 'type' else 'Select'} '{action.text}'"
    if t == "scroll":
        return f"Scroll {action.direction}"
    if t == "open_app":
        return f"Open the app '{action.text}'"
    if t == "hotkey":
        return f"Press the keys {action.text}"
    if t == "answer":
        return f"Answer '{action.text}'"
    words = {"click": "Click the target element", "long_press": "Long press the target element",
             "doubleclick": "Double click the target element", "rightclick": "Right click the target element",
             "moveto": "Move the mouse to the target element", "swipe": "Swipe across the screen",
             "drag": "Drag the element", "press_back": "Go back", "press_home": "Go to the home screen",
             "press_recent": "Open the recent apps", "press_enter": "Press enter", "enter": "Press enter",
             "complete": "The task is complete", "impossible": "The task is impossible", "wait": "Wait",
             "close/delete": "Close or delete the item", "press_tab": "Press tab", "press_space": "Press space",
             "press_down": "Press the down key", "press_pgdn": "Press page down",
             "system_button": f"Press the {action.button} button", "terminate": "Stop"}
    return words.get(t, t)


def render_guir1_history(step: Step) -> str:
    """The history string of a GUI-R1 prompt.

    ``step.history_text`` verbatim when set; otherwise the structured history rendered like GUI-R1's parquet
    rows: ``" \\nStep 1: <description>\\nStep 2: ...\\n\\n"``, or ``" \\nNone\\n"`` for the first step.
    """
    if step.history_text is not None:
        return step.history_text
    if not step.history:
        return " \nNone\n"
    lines = []
    for i, item in enumerate(step.history, 1):
        desc = item.description or (describe_action(item.action) if item.action is not None else "None")
        lines.append(f"Step {i}: {desc}\n")
    return " \n" + "".join(lines) + "\n"


class TemplateError(ValueError):
    """A step the template cannot express; names the step and the field."""


@dataclass(frozen=True)
class PromptTemplate:
    """Base of every template. ``frame`` is the frame of the coordinates in the answer; ``actions`` the action
    types the template can answer with; ``factor``/``min_pixels``/``max_pixels`` the resize its model uses.
    """

    name: str
    answer_format: str
    frame: Frame
    actions: tuple[str, ...]
    description: str
    factor: int = QWEN25VL_FACTOR
    min_pixels: int = QWEN25VL_MIN_PIXELS
    max_pixels: int = QWEN25VL_MAX_PIXELS

    def geometry(self, step: Step) -> ImageGeometry:
        """The image geometry of ``step`` under this template's resize settings."""
        w, h = step.image_size
        return ImageGeometry.for_model(w, h, factor=self.factor, min_pixels=self.min_pixels,
                                       max_pixels=self.max_pixels)

    @property
    def answer_tool(self) -> str | None:
        """The tool its answers call (``tool_call`` formats: ``mobile_use``, ``computer_use``), else None."""
        return None

    def render(self, step: Step, geometry: ImageGeometry) -> list[dict[str, str]]:
        """Chat messages; the user content holds exactly one ``<image>`` placeholder."""
        raise NotImplementedError

    def gold_answer(self, step: Step, geometry: ImageGeometry) -> str:
        """The gold assistant answer for ``step.action`` in this template's format and frame."""
        raise NotImplementedError

    def answer_for(self, step: Step, geometry: ImageGeometry, action: Action) -> str:
        """``action`` (screen pixels of ``step``) written as this template writes a gold answer, in its format and
        frame, for answers that are not the step's gold (scripted and baseline policies). Any action name of the
        format is allowed, also one the prompt does not list (the parser accepts every known name);
        ``system_button`` / ``terminate`` become the format's ``press_*`` / ``complete``."""
        if action.type in ("system_button", "terminate"):
            action = from_mobile_use(to_mobile_use(action, *step.image_size) or {})
        relaxed = replace(self, actions=tuple(sorted(ACTION_NAMES)))
        return relaxed.gold_answer(step.model_copy(update={"action": action}), geometry)

    def answer_action(self, step: Step) -> Action:
        """``step.action`` expressed with this template's action names; TemplateError when it cannot be."""
        a = step.action
        if a.type in self.actions:
            return a
        for name in self.actions:  # aliases: enter <-> press_enter
            if canonical_action_name(name) == canonical_action_name(a.type):
                return a.model_copy(update={"type": name})
        if a.type == "swipe" and "scroll" in self.actions and a.point and a.end_point:
            return Action(type="scroll", direction=swipe_to_scroll(a.point, a.end_point))
        raise TemplateError(f"step {step.id}: field 'action.type': template {self.name!r} cannot express "
                            f"{a.type!r}; it allows {list(self.actions)}")


def point_in(p: tuple[float, float], geometry: ImageGeometry, frame: Frame) -> list[int]:
    """An ORIGINAL-pixel point as integers in ``frame`` (answers write integer coordinates)."""
    x, y = geometry.point(p, Frame.ORIGINAL, frame)
    return [int(round(x)), int(round(y))]


def qwen_history(step: Step) -> str:
    if step.history:
        return "\n".join(f"Step {i}: {item.description or (describe_action(item.action) if item.action else '')}"
                         for i, item in enumerate(step.history, 1))
    if step.history_text and step.history_text.strip() and step.history_text.strip() != "None":
        return step.history_text.strip()
    return "None"


__all__ = ["GUIR1_NO_POINT", "IMAGE_PLACEHOLDER", "PromptTemplate", "TemplateError", "describe_action",
           "point_in", "qwen_history", "render_guir1_history"]
