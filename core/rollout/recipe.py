"""One episode as verl's ``gui_agent`` loop plays it, for ``gui-agent rollout --recipe`` and for the loop itself.

:class:`RecipeSession` is an :class:`~core.rollout.session.EpisodeSession` whose conversation, answer handling and
endings follow an :class:`~core.agent_recipe.AgentRecipe`:

- the conversation is the one verl trains on: the first user message (capped screenshot + the recipe's task
  prompt), then per turn the model's answer and either the tool's answer (the next capped screenshot, plus a note
  when the phone ignored or rejected the action) or, with ``on_invalid: feedback``, a user message naming why the
  answer was not executed; every screenshot stays in context; the ``mobile_use`` schema on the recipe's grid is
  the chat template's ``tools``;
- an answer is executed only when it is exactly one ``mobile_use`` call (``core.rewards.gui_agent.tool_call_problem``);
  its coordinates are moved from the recipe's grid to Qwen3-VL's 0-1000 grid and stepped through
  :meth:`EpisodeSession.act` (parser, frames, env, record);
- endings (``ended_by``): ``episode_end`` (the task ended), ``context_budget`` (the caller says the token budget is
  spent: only verl's loop counts tokens), ``max_turns``, ``truncated`` (the env's own limit), ``invalid``
  (``on_invalid: end``), ``max_screenshots`` (the next screenshot would exceed it).
"""

from __future__ import annotations

from typing import Any

from PIL import Image

from core.actions import Action, to_mobile_use
from core.agent_recipe import (GRID1000, PIXELS, AgentRecipe, capped_size, message_text, regrid_arguments,
                               tool_call_text)
from core.geometry import QWEN3VL_FACTOR
from core.inference.requests import InferenceRequest, ResizePolicy
from core.parsers import parse_tool_call
from core.prompts import describe_action
from core.rewards.gui_agent import tool_call_problem
from core.rollout.session import EpisodeSession, StepRecord, resized_screen

#: EpisodeSession template: Qwen3-VL tool calls on the 0-1000 grid (answers are moved to it from the recipe's grid).
SESSION_TEMPLATE = "qwen3vl-mobile-use"


class RecipeSession(EpisodeSession):
    """Drive one episode of ``env`` on ``task`` under ``recipe`` (see the module docstring). ``conversation``: the
    chat messages so far (typed content, screenshots as PIL images); ``ended_by``: why the episode ended."""

    def __init__(self, env: Any, task: Any, recipe: AgentRecipe, *, episode_id: str | None = None,
                 seed: int | None = None, keep_screens: bool = False):
        super().__init__(env, task, episode_id=episode_id, template=SESSION_TEMPLATE, max_steps=recipe.max_turns,
                         seed=seed, keep_screens=keep_screens)
        self.recipe, self.grid = recipe, recipe.coordinate_grid
        self.ended_by: str | None = None
        first = self.screenshot()
        self.conversation: list[dict[str, Any]] = [
            recipe.first_message(self.episode.instruction, self.episode.screen_size, first)]
        self.shown: list[Image.Image] = [first]

    def screenshot(self) -> Image.Image:
        """The current screen as the model sees it: RGB, within the recipe's ``max_screenshot_pixels``
        (:func:`~core.rollout.session.resized_screen`: resized once per simulated screen)."""
        size = capped_size(self.episode.screen_size, self.recipe.max_screenshot_pixels)
        return resized_screen(self.obs, size, self.info.get("frame_key"))

    # ------------------------------------------------------------------------------------------ request

    def messages(self) -> list[dict[str, str]]:
        """:attr:`conversation` as ``core.inference`` messages: text with one ``<image>`` per screenshot."""
        return [{"role": m["role"], "content": message_text(m)} for m in self.conversation]

    def images(self) -> list[Image.Image]:
        """Every screenshot of the conversation, in order."""
        return list(self.shown)

    def request(self) -> InferenceRequest:
        """The next turn as a ``core.inference`` request: the whole conversation, its screenshots and the
        ``mobile_use`` tool schema. The resize bounds hold the capped screenshots as they are."""
        w, h = self.shown[-1].size
        policy = ResizePolicy(min_pixels=QWEN3VL_FACTOR ** 2, max_pixels=max(w * h, QWEN3VL_FACTOR ** 2),
                              factor=QWEN3VL_FACTOR)
        return InferenceRequest(step=self.prompt_step(), template=self.template.name, policy=policy,
                                geometry=self.geometry, messages=self.messages(), images=self.images(),
                                template_obj=self.template, tools=self.recipe.tool_schemas())

    def gold_text(self, action: Action | None = None) -> str:
        """``action`` (default: the env's next gold action; ``terminate`` when there is none) as a recipe answer:
        ``Thought:``, ``Action:`` and one ``mobile_use`` call on the recipe's grid."""
        action = action or self.info.get("gold_action") or Action(type="complete")
        w, h = self.episode.screen_size
        args = to_mobile_use(action, w, h)
        if args is None:
            return f"Thought: no mobile_use form for {action.type}.\nAction: none."
        call = tool_call_text(regrid_arguments(args, PIXELS, self.grid, (w, h)))
        what = describe_action(action)
        return f"Thought: {what}.\nAction: {what}.\n{call}"

    # ------------------------------------------------------------------------------------------ answers

    def act(self, text: str | None, *, error: str | None = None, context_full: bool = False) -> StepRecord:
        """Execute the model's answer ``text`` (``error``: why generation produced none) and extend the
        conversation; ``context_full``: the caller's token budget is spent (the episode ends after this turn)."""
        executed = False
        if error is not None:
            rec = super().act(None, error=error)
            problem = rec.invalid
        else:
            parsed = parse_tool_call(text or "")
            problem = tool_call_problem(parsed)
            if problem is None:  # exactly one mobile_use call: move it to Qwen3-VL's grid and step the phone
                args = regrid_arguments(dict(parsed.actions[0].raw["arguments"]), self.grid, GRID1000,
                                        self.episode.screen_size)
                rec, executed = super().act(tool_call_text(args)), True
                rec.model_text = text
            elif parsed.ok:  # parseable but not one mobile_use call: recorded, the phone does not move
                rec = super().act(text, error=f"invalid tool call: {problem}")
            else:  # the session parses it again and records why it is not an action
                rec = super().act(text)
        self.conversation.append({"role": "assistant", "content": text or ""})
        self.ended_by = self._ending(rec, context_full)
        if self.ended_by is None and executed:
            image = self.screenshot()
            if len(self.shown) + 1 > self.recipe.max_screenshots:
                self.ended_by = "max_screenshots"
            else:
                self.conversation.append(self.recipe.tool_message([image], self.recipe.action_note(rec.invalid,
                                                                                                   rec.ignored)))
                self.shown.append(image)
        elif self.ended_by is None:
            self.conversation.append(self.recipe.feedback_message(str(problem)))
        if self.ended_by is not None:
            self.done = True
            self.episode.ended_by = self.ended_by
        return rec

    def _ending(self, rec: StepRecord, context_full: bool) -> str | None:
        """Why the episode ends after ``rec`` (None: it goes on), in the agent loop's order."""
        ep = self.episode
        if ep.terminated:
            return "episode_end"
        if context_full:
            return "context_budget"
        if len(ep.steps) >= self.recipe.max_turns:
            return "max_turns"
        if ep.truncated:
            return "truncated"
        if rec.invalid is not None and self.recipe.on_invalid == "end":
            return "invalid"
        return None


__all__ = ["SESSION_TEMPLATE", "RecipeSession"]
