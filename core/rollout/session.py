"""One episode of a model acting in an environment: the single implementation of the episode loop.

:class:`EpisodeSession` sits between a policy (a model backend, a scripted or a random policy, or verl's agent
loop generating tokens itself) and an environment that follows the shared env contract (``core.world``):
``reset(seed, options={"task": ..., "max_steps": K}) -> obs, info`` and ``step(Action) -> obs, reward,
terminated, truncated, info``, ``obs`` an HxWx3 uint8 screenshot in screen pixels.

- :meth:`EpisodeSession.messages` / :meth:`EpisodeSession.images`: the prompt for the next turn. With
  ``max_screenshots=1`` (default) it is exactly the template's training prompt (``core.prompts``) of the current
  screen, previous actions rendered as the template's history. With ``max_screenshots=K > 1`` the last K-1
  turns stay in context as a multi-turn chat (the model's own answers, each followed by the screenshot it led
  to); older turns survive only as the rendered history.
- :meth:`EpisodeSession.act` takes the model's raw text: parsed with ``core.parsers`` in the template's answer
  format, mapped from the template's frame to screen pixels with ``core.geometry`` (through the resize the
  model saw), stepped in the env. Text that does not parse, or that the env rejects (``ValueError``), is an
  invalid action: recorded with its reason, the env is not stepped. Every call appends one
  :class:`StepRecord`; the episode ends when the env terminates or truncates, or after ``max_steps`` records
  (invalid ones count, so a model that never answers validly still stops).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from PIL import Image

from core.actions import Action
from core.geometry import ImageGeometry
from core.inference.agent import PLACEHOLDER_GOLD
from core.inference.requests import DEFAULT_POLICY, IMAGE_PLACEHOLDER, InferenceRequest, ResizePolicy
from core.inference.runner import parse_answer
from core.prompts import get_template
from core.schema import HistoryItem, Step
from core.world.render import ByteLRU

#: Resized screenshots by (env frame key, size): 192 MB holds 40 model-size copies of 1080x2400 screens (728x1652,
#: 4.8 MB each in Pillow), the states a GRPO group of one task revisits many times over.
MODEL_IMAGES = ByteLRU(192 << 20)


def resized_screen(obs: np.ndarray, size: tuple[int, int], frame_key: Any = None) -> Image.Image:
    """The screenshot ``obs`` (HxWx3 uint8, screen pixels) as an RGB image of ``size`` (W, H), Pillow bicubic.
    ``frame_key``: the env's name of this exact frame (``info["frame_key"]``, the simulated phone's; equal keys mean
    identical pixels): the resize is then done once per process and kept in :data:`MODEL_IMAGES`; every call
    returns a new image object on those pixels, copy-on-write (Pillow's ``readonly``: drawing on it or pasting into
    it copies the pixels first, so the cache never changes)."""
    cached = MODEL_IMAGES.get((frame_key, size)) if frame_key is not None else None
    if cached is None:
        img = Image.fromarray(np.ascontiguousarray(obs[..., :3]))
        if img.size != size:
            img = img.resize(size, Image.Resampling.BICUBIC)
        if frame_key is None:
            return img
        cached = img
        MODEL_IMAGES.put((frame_key, size), cached)
    view = cached._new(cached.im)  # shares the pixels: no copy
    view.readonly = 1
    return view

LEVELS = ("high", "low")


def action_dict(action: Action | None) -> dict[str, Any] | None:
    """``action`` as a JSON-ready dict without unset fields (coordinates in screen pixels)."""
    return None if action is None else action.model_dump(mode="json", exclude_none=True)


@dataclass
class StepRecord:
    """One turn. ``action`` is the parsed action in screen pixels (None when ``invalid`` says why it was not
    executed); ``ignored`` the env's reason when the phone ignored it; ``gold_action`` / ``gold_box`` the env's
    next gold action and target box (screen pixels) in the state the model saw; ``success`` the goal check
    after the turn; ``state_hash`` the env's anchor of the state the model saw (``info["state_hash"]``: the simulated
    phone's and the replayed trajectory's; None for an env without one). ``screen`` (the screenshot the model saw)
    is kept only when the session keeps screens."""

    index: int
    instruction: str
    model_text: str | None
    action: Action | None
    invalid: str | None
    ignored: str | None
    reward: float
    success: bool
    gold_action: Action | None
    gold_box: list[float] | None
    state_hash: str | None = None
    screen: np.ndarray | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "instruction": self.instruction, "model_text": self.model_text,
                "action": action_dict(self.action), "invalid": self.invalid, "ignored": self.ignored,
                "reward": self.reward, "success": self.success, "gold_action": action_dict(self.gold_action),
                "gold_box": self.gold_box, "state_hash": self.state_hash}


@dataclass
class Episode:
    """A whole episode: the task, every turn, and how it ended. ``success`` is the env's goal check at the
    end; ``error`` is set when the env itself failed (the episode counts as failed); ``metrics`` are the env's
    own end-of-episode numbers (``info["metrics"]``, e.g. MiniWoB++'s time-decayed reward); ``ended_by``: why an
    agent-recipe episode ended (:class:`core.rollout.recipe.RecipeSession`), None otherwise."""

    id: str
    task_id: str
    family: str | None
    app: str | None
    instruction: str
    level: str
    template: str
    screen_size: tuple[int, int]
    steps: list[StepRecord] = field(default_factory=list)
    success: bool = False
    terminated: bool = False
    truncated: bool = False
    reward: float = 0.0
    error: str | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    ended_by: str | None = None

    @property
    def invalid_steps(self) -> int:
        return sum(1 for s in self.steps if s.invalid is not None)

    def to_row(self) -> dict[str, Any]:
        """The episode's line in ``episodes.jsonl``."""
        return {"id": self.id, "task_id": self.task_id, "family": self.family, "app": self.app,
                "instruction": self.instruction, "level": self.level, "template": self.template,
                "screen_size": list(self.screen_size), "success": self.success, "terminated": self.terminated,
                "truncated": self.truncated, "reward": self.reward, "n_steps": len(self.steps),
                "n_invalid": self.invalid_steps, "n_ignored": sum(1 for s in self.steps if s.ignored),
                "error": self.error, "metrics": self.metrics, "steps": [s.to_dict() for s in self.steps],
                **({"ended_by": self.ended_by} if self.ended_by is not None else {})}


def _box(value: Any) -> list[float] | None:
    return None if value is None else [float(v) for v in value]


class EpisodeSession:
    """Drive one episode of ``env`` on ``task`` (a task id or the env's task object).

    ``template``: a ``core.prompts`` name (its answer format and frame are what :meth:`act` parses);
    ``resize``: the model's image resize (frames are mapped through it); ``level``: ``high`` prompts with the
    goal, ``low`` with the env's ``step_instruction`` for the next gold step; ``keep_screens`` keeps every
    screenshot in the records (for galleries). The env is reset on construction.
    """

    def __init__(self, env: Any, task: Any, *, episode_id: str | None = None, template: str = "guir1-high",
                 resize: ResizePolicy = DEFAULT_POLICY, level: str = "high", max_steps: int = 20,
                 max_screenshots: int = 1, seed: int | None = None, keep_screens: bool = False):
        if level not in LEVELS:
            raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
        if max_steps < 1 or max_screenshots < 1:
            raise ValueError(f"max_steps and max_screenshots must be >= 1, got {max_steps}, {max_screenshots}")
        self.env, self.template = env, get_template(template)
        self.resize, self.level, self.max_steps, self.max_screenshots = resize, level, max_steps, max_screenshots
        self.keep_screens = keep_screens
        self.obs, self.info = env.reset(seed=seed, options={"task": task, "max_steps": max_steps})
        h, w = self.obs.shape[:2]
        self.geometry: ImageGeometry = resize.geometry(w, h)
        self.history: list[HistoryItem] = []
        self._window_screens: list[Image.Image] = []  # model-size screenshots of the turns still in context
        self._current: Image.Image | None = None  # model-size current screenshot, made on first use
        self.episode = Episode(id=episode_id or str(self.info["task_id"]), task_id=str(self.info["task_id"]),
                               family=self.info.get("family"), app=self.info.get("app"),
                               instruction=self.info["instruction"], level=level, template=self.template.name,
                               screen_size=(w, h), success=bool(self.info.get("success")))
        self.done = False

    # ------------------------------------------------------------------------------------------ prompt

    @property
    def instruction(self) -> str:
        """What the prompt asks for now: the goal (``high``), or the next gold step's instruction (``low``)."""
        return self.instruction_of(self.info)

    def prompt_step(self, action: Action = PLACEHOLDER_GOLD, *, history_upto: int | None = None,
                    instruction: str | None = None) -> Step:
        """The :class:`~core.schema.Step` templates render for the current screen: the instruction (default: the
        current one), the executed actions so far (the first ``history_upto`` of them when given) as structured
        history, ``action`` as the gold (prompts never read it; scripted answers do)."""
        w, h = self.episode.screen_size
        history = tuple(self.history if history_upto is None else self.history[:history_upto])
        return Step.build(f"{self.episode.id} step {len(self.episode.steps)}", id=f"{self.episode.id}:"
                          f"{len(self.episode.steps)}", image_size=(w, h), instruction=instruction or self.instruction,
                          history=history, task_type=self.level, action=action, source="rollout",
                          group="mobile")

    def _model_image(self) -> Image.Image:
        """The current screenshot at the model's size (``self.geometry``): :func:`resized_screen`."""
        return resized_screen(self.obs, (self.geometry.resized_width, self.geometry.resized_height),
                              self.info.get("frame_key"))

    def _window(self) -> list[StepRecord]:
        """The previous turns whose screenshots stay in context (at most ``max_screenshots - 1``)."""
        k = self.max_screenshots - 1
        return self.episode.steps[len(self.episode.steps) - k:] if k else []

    def messages(self) -> list[dict[str, str]]:
        """Chat messages for the next turn; one ``<image>`` per screenshot of :meth:`images`, in order."""
        window = self._window()
        executed_before = sum(1 for s in self.episode.steps[:len(self.episode.steps) - len(window)]
                              if s.action is not None)
        first = self.prompt_step(history_upto=executed_before, instruction=window[0].instruction if window else None)
        msgs = [dict(m) for m in self.template.render(first, self.geometry)]
        following = [r.instruction for r in window[1:]] + [self.instruction] * bool(window)  # each later screen's
        for rec, asked in zip(window, following, strict=True):
            msgs.append({"role": "assistant", "content": rec.model_text or ""})
            note = f"That answer was not executed: {rec.invalid}.\n" if rec.invalid else ""
            task = f"Next: {asked}\n" if self.level == "low" else ""
            msgs.append({"role": "user", "content": f"{note}{task}Current screenshot: {IMAGE_PLACEHOLDER}"})
        return msgs

    def images(self) -> list[Image.Image]:
        """The screenshots of :meth:`messages`, RGB at the model's resized size (``self.geometry``)."""
        if self._current is None:
            self._current = self._model_image()
        return [*self._window_screens, self._current]

    def request(self) -> InferenceRequest:
        """The next turn as a ``core.inference`` request: :meth:`messages` with every screenshot of :meth:`images`."""
        return InferenceRequest(step=self.prompt_step(), template=self.template.name, policy=self.resize,
                                geometry=self.geometry, messages=self.messages(), images=self.images(),
                                template_obj=self.template)

    # ------------------------------------------------------------------------------------------ answers

    def gold_text(self, action: Action | None = None) -> str:
        """``action`` (default: the env's next gold action; ``complete`` when there is none) written as the
        template would write a gold answer, in its format and frame (:meth:`~core.prompts.PromptTemplate.answer_for`)."""
        action = action or self.info.get("gold_action") or Action(type="complete")
        return self.template.answer_for(self.prompt_step(), self.geometry, action)

    def parse(self, text: str) -> tuple[Action | None, str | None]:
        """The action in ``text`` in screen pixels, or None and why it is not one."""
        req = InferenceRequest(step=self.prompt_step(), template=self.template.name, policy=self.resize,
                               geometry=self.geometry, template_obj=self.template)
        fields, action = parse_answer(text, req)
        return action, None if action is not None else f"unparsed answer: {fields['parse_error']}"

    def act(self, text: str | None, *, error: str | None = None) -> StepRecord:
        """Execute the model's answer ``text`` (``error``: why generation produced none) and record the turn."""
        if self.done:
            raise RuntimeError(f"episode {self.episode.id} is over")
        info, seen = self.info, self.obs
        seen_image = self.images()[-1] if self.max_screenshots > 1 else None
        action, invalid = (None, f"generation failed: {error}") if error is not None else self.parse(text or "")
        reward, terminated, truncated, ignored = 0.0, False, False, None
        if action is not None:
            try:
                self.obs, reward, terminated, truncated, self.info = self.env.step(action)
            except ValueError as e:  # an action the env cannot take at all (contract: malformed input)
                action, invalid = None, f"env rejected the action: {e}"
            else:
                ignored = self.info.get("ignored")
                self.history.append(HistoryItem(action=action))
        rec = StepRecord(index=len(self.episode.steps), instruction=self.instruction_of(info), model_text=text,
                         action=action, invalid=invalid, ignored=ignored, reward=float(reward),
                         success=bool(self.info.get("success")), gold_action=info.get("gold_action"),
                         gold_box=_box(info.get("gold_box")), state_hash=info.get("state_hash"),
                         screen=seen if self.keep_screens else None)
        self.episode.steps.append(rec)
        if seen_image is not None:
            self._window_screens = [*self._window_screens, seen_image][-(self.max_screenshots - 1):]
        if action is not None:  # the env stepped: a new screen
            self._current = None
        ep = self.episode
        ep.reward += rec.reward
        ep.metrics = dict(self.info.get("metrics") or {})
        ep.success = rec.success
        ep.terminated = ep.terminated or bool(terminated)
        ep.truncated = bool(truncated) or (not ep.terminated and len(ep.steps) >= self.max_steps)
        self.done = ep.terminated or ep.truncated
        return rec

    def instruction_of(self, info: dict[str, Any]) -> str:
        """The prompt instruction for an env ``info`` (see :attr:`instruction`)."""
        if self.level == "low" and info.get("step_instruction"):
            return str(info["step_instruction"])
        return str(info["instruction"])


__all__ = ["LEVELS", "Episode", "EpisodeSession", "StepRecord", "action_dict"]
