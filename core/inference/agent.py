"""Step-by-step (online / multi-turn) use: given an episode's previous actions, build the next prompt with the
history rendered exactly as training renders a structured history, run the model, return the action in
ORIGINAL pixels of the current screenshot.

    episode = Episode(backend, instruction="Open the settings and turn on Wi-Fi")
    turn = episode.step(png_bytes)          # -> AgentTurn(action=Action(type='click', point=(x, y)), ...)
    ...                                     # execute turn.action on the device, take the next screenshot
    turn = episode.step(next_png_bytes)     # the first action is now in the prompt's history
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from PIL import Image

from core.actions import Action
from core.inference.backends import Backend
from core.inference.requests import DEFAULT_POLICY, InferenceRequest, ResizePolicy, build_request
from core.inference.runner import prediction_row
from core.schema import HistoryItem, Step, TaskType

#: Online steps have no gold action; Step requires one, and prompts never read it.
PLACEHOLDER_GOLD = Action(type="wait")


def next_step(instruction: str, screenshot: bytes, previous: Sequence[Action | HistoryItem], *,
              task_type: TaskType = "high", step_id: str | None = None, group: str | None = None,
              source: str = "online") -> Step:
    """The Step to prompt for the next action: ``previous`` actions (ORIGINAL pixels of their own screenshots)
    become the structured history that templates render the way training does. ``screenshot``: encoded image."""
    with Image.open(io.BytesIO(screenshot)) as im:
        size = im.size
    history = tuple(p if isinstance(p, HistoryItem) else HistoryItem(action=p) for p in previous)
    return Step.build(step_id or f"online:{len(history)}", id=step_id or f"online:{len(history)}",
                      image=screenshot, image_size=size, instruction=instruction, history=history,
                      task_type=task_type, action=PLACEHOLDER_GOLD, source=source, group=group)


@dataclass
class AgentTurn:
    """One model call: ``action`` in ORIGINAL pixels (None when generation or parsing failed, see ``error`` /
    ``parse_error``), the raw answer ``text`` and the request that produced it (left out of the repr: it holds
    the screenshot)."""

    request: InferenceRequest = field(repr=False)
    text: str | None
    action: Action | None
    error: str | None
    parse_error: str | None
    row: dict[str, Any] = field(repr=False, default_factory=dict)


def act(backend: Backend, step: Step, *, template: str | None = None,
        policy: ResizePolicy = DEFAULT_POLICY) -> AgentTurn:
    """Prompt ``backend`` with ``step`` and parse its answer."""
    req = build_request(step, template=template, policy=policy)
    gen = backend.generate([req])[0] if req.ok else None
    row, action = prediction_row(req, gen, backend=backend.name, model=backend.model)
    return AgentTurn(request=req, text=row["pred"], action=action, error=row["error"],
                     parse_error=row["parse_error"], row=row)


class Episode:
    """An episode run step by step; every returned action is appended to the history of the next prompt."""

    def __init__(self, backend: Backend, instruction: str, *, template: str | None = None,
                 policy: ResizePolicy = DEFAULT_POLICY, task_type: TaskType = "high", group: str | None = None):
        self.backend, self.instruction, self.template, self.policy = backend, instruction, template, policy
        self.task_type, self.group = task_type, group
        self.history: list[HistoryItem] = []

    def __repr__(self) -> str:
        return (f"Episode(instruction={self.instruction!r}, backend={self.backend.name}:{self.backend.model}, "
                f"history={[h.action for h in self.history]!r})")

    def step(self, screenshot: bytes) -> AgentTurn:
        """Next action for ``screenshot`` (encoded image bytes). A failed turn adds nothing to the history."""
        step = next_step(self.instruction, screenshot, self.history, task_type=self.task_type, group=self.group,
                         step_id=f"online:{len(self.history)}")
        turn = act(self.backend, step, template=self.template, policy=self.policy)
        if turn.action is not None:
            self.history.append(HistoryItem(action=turn.action))
        return turn


__all__ = ["PLACEHOLDER_GOLD", "AgentTurn", "Episode", "act", "next_step"]
