"""The GUI-agent loop of verl's mobile-agent recipe, registered in verl's agent-loop registry as ``gui_agent``.

States: PENDING -> GENERATING -> PROCESSING_ACTION -> (GENERATING ...) -> TERMINATED.

- PENDING: the row's ``raw_prompt`` (+ its first screenshot) rendered with the ``mobile_use`` tool schema by
  verl's Continuous Token builder; the tool opens a :class:`core.rollout.recipe.RecipeSession` on the row's source
  under the loop's agent recipe.
- GENERATING: one ``server_manager.generate`` call (verl's LLM server client); its tokens get ``response_mask`` 1
  and, when the server returns them (``rollout.calculate_log_probs``), their log-probs in ``response_logprobs``
  (0 on tool tokens), which verl compares with the actor's.
- PROCESSING_ACTION: the session executes the text when it is exactly one ``mobile_use`` call (frames, env step,
  record) and writes the next turn: a ``tool`` message with the next screenshot, or (``on_invalid: feedback``) a
  user message naming why the answer was not executed; it is merged by the Continuous Token builder
  (``response_mask`` 0, including the ``\\n`` turn separator verl PR 6921 restores after ``<|im_end|>``).
- TERMINATED: the session's ``ended_by`` (episode_end, max_turns, truncated, invalid, max_screenshots: verl trains
  on ONE token sequence per trajectory, so old screenshots cannot be dropped), or the context budget (the next
  tool turn would not fit ``rollout.response_length``: ``ended_by`` "context_budget", counted in
  ``gui_agent/context_budget``). Screenshots are capped by the recipe's ``max_screenshot_pixels`` so 20 turns fit.

Config (``gui_agent`` section of the trainer config): ``recipe`` (the agent recipe file, :mod:`core.agent_recipe`;
the run scripts pass ``verl/gui_agent/recipe.yaml`` or ``RECIPE``); any recipe key in the section is applied on top
(``max_turns``, ``max_screenshots``, ``on_invalid``, ``aggregation``, ``completion_bonus``, ``grid``; the README's
``screen_width``/``screen_height`` name the grid); ``max_tokens_per_turn`` caps one model turn's new tokens (the
request's ``max_tokens``; unset: what the response budget leaves). The reward (:mod:`gui_agent_reward`) is computed here, where
turn boundaries are known, and returned as ``reward_score`` with every part in
``extra_fields["reward_extra_info"]``; per turn, ``extra_fields["anchors"]`` and ``["step_rewards"]``
(:func:`turn_credit`) carry what GiGPO's step-level credit needs (``algorithm.adv_estimator=gigpo``,
``gui_agent_trainer``). ``extra_fields["timing_s"]`` holds the episode's seconds in generation
(``generate``: the server's calls), on the phone (``phone``: executing the answers and writing the next turns),
in its reward (``reward``: the per-turn scores, the episode reward and the step credit) and building its tokens
(``tokens``: the screenshots read, the chat template and the processor, the turns merged), which the trainer logs
per step as ``timing_s/episode/<part>/mean`` (verl's own ``timing_s/gen`` holds all four and the waiting between
them). A failure inside one episode (bad row, env error) ends that episode with reward 0 and
``extra_fields["error"]``; it never raises out of the rollout worker.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from enum import Enum
from typing import Any
from uuid import uuid4

from core.agent_recipe import SCREEN_KEYS, AgentRecipe
from gui_agent_reward import TurnScore, episode_reward, score_turn
from mobile_use_tool import DEFAULT_RECIPE, TOOL_NAME, MobileUseTool
from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopMetrics, AgentLoopOutput, register
from verl.utils.profiler import simple_timer

logger = logging.getLogger(__name__)

AGENT_NAME = "gui_agent"
#: ``extra_fields["timing_s"]`` part -> the episode's timer (verl's ``AgentLoopMetrics`` names, summed over turns).
#: ``tokens``: reading the row's screenshot and building / merging the token sequence (the chat template, the
#: processor on each screenshot), this loop's own timer.
EPISODE_TIMING = {"generate": "generate_sequences", "phone": "tool_calls", "reward": "compute_score",
                  "tokens": "build_tokens"}


class GUIAgentState(Enum):
    PENDING = "pending"
    GENERATING = "generating"
    PROCESSING_ACTION = "processing_action"
    TERMINATED = "terminated"


class GUIAgentConfig:
    """The ``gui_agent`` config section: ``recipe`` (the agent recipe file; default the tool's recipe, else
    :data:`mobile_use_tool.DEFAULT_RECIPE`) with any recipe key of the section on top (the run scripts set only
    ``recipe``)."""

    #: Loop-only keys of the section (not recipe keys): ``max_tokens_per_turn``, new tokens one model turn may
    #: generate (unset or 0: what the response budget leaves, verl's default).
    LOOP_KEYS = ("max_tokens_per_turn",)

    @staticmethod
    def max_tokens_per_turn(section: Any) -> int | None:
        """The section's ``max_tokens_per_turn`` (None when unset or 0); anything but a whole number >= 0 is a
        one-line error naming ``gui_agent.max_tokens_per_turn``."""
        value = dict(section or {}).get("max_tokens_per_turn")
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"gui_agent.max_tokens_per_turn must be a whole number >= 0, got {value!r}")
        return value or None

    @staticmethod
    def from_mapping(section: Any, base: AgentRecipe | None = None) -> AgentRecipe:
        """The loop's :class:`~core.agent_recipe.AgentRecipe`; errors name ``gui_agent.<key>``."""
        section = {k: v for k, v in dict(section or {}).items() if k not in GUIAgentConfig.LOOP_KEYS}
        path = section.pop("recipe", None)
        if path:
            base = AgentRecipe.load(path)
        elif base is None:
            base = AgentRecipe.load(DEFAULT_RECIPE)
        return AgentRecipe.from_mapping(section, source="gui_agent", base=base) if section else base


def create_kwargs_for(extra_info: dict[str, Any], tools_kwargs: dict[str, Any] | None) -> dict[str, Any]:
    """The tool's create kwargs for a row: ``tools_kwargs.mobile_use.create_kwargs`` when the row has them, else
    the source keys of ``extra_info`` (``task_id``/``seed``/``env`` online; ``screenshots``/``expected_actions``
    replay)."""
    given = ((tools_kwargs or {}).get(TOOL_NAME) or {}).get("create_kwargs")
    if given:
        return dict(given)
    keys = ("task_id", "seed", "env", "screenshots", "expected_actions", "instruction")
    return {k: extra_info[k] for k in keys if extra_info.get(k) is not None}


def turn_credit(turns: list[TurnScore], steps: list[Any], success: bool, episode_id: str, *,
                completion_bonus: float) -> tuple[list[str], list[float]]:
    """Per model turn, GiGPO's anchor and step reward (``extra_fields["anchors"]`` / ``["step_rewards"]``).

    Anchor: the env's ``state_hash`` of the state the turn acted on (:func:`core.world.env.state_hash`; the replayed
    trajectory's own), or ``<episode id>:<turn>`` where the env gives none (a state no other turn shares: that turn's
    step advantage is 0). Step reward: the turn's dense ``overall`` score, plus ``completion_bonus`` on the last
    turn of a successful episode (so the step rewards add up as the episode reward's parts do)."""
    anchors = [(steps[t].state_hash if t < len(steps) else None) or f"{episode_id}:{t}" for t in range(len(turns))]
    rewards = [float(turn.parts["overall"]) for turn in turns]
    if rewards and success:
        rewards[-1] += float(completion_bonus)
    return anchors, rewards


@dataclass
class _Episode:
    """Mutable state of one trajectory."""

    messages: list[dict[str, Any]]
    images: list[Any]
    instance_id: str
    request_id: str
    prompt_ids: list[int]
    response_mask: list[int]
    response_logprobs: list[float] | None  # the server's log-probs of model tokens, 0 on tool tokens; None: none
    turn_texts: list[str]
    turns: list[TurnScore]
    metrics: dict[str, Any]
    feedback: dict[int, str]
    server_fields: dict[str, Any]  # the server's extra fields (weight versions min/max_global_steps), as verl's loop
    ended_by: str = ""
    last_text: str = ""


@register(AGENT_NAME)
class GUIAgentLoop(AgentLoopBase):
    """Multi-turn ``mobile_use`` agent loop driving :class:`core.rollout.EpisodeSession` (see module docstring)."""

    def __init__(self, *args: Any, tools: Any = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        tool = next((t for t in (tools.tools if tools else []) if t.name == TOOL_NAME), None)
        section = self.config.get("gui_agent") or {}
        self.gui = GUIAgentConfig.from_mapping(section, base=tool.recipe if tool is not None else None)
        asked = "grid" in section or any(k in section for k in SCREEN_KEYS)
        if tool is not None and asked and tool.grid.name != self.gui.grid:
            raise ValueError(f"gui_agent grid {self.gui.grid!r} disagrees with the mobile_use tool's grid "
                             f"{tool.grid.name!r} (tool YAML `grid` or the recipe file's)")
        self.tool = tool or MobileUseTool({"recipe": section.get("recipe"), "grid": self.gui.grid,
                                           "max_steps": self.gui.max_turns})
        self.tool_schemas = self.gui.tool_schemas()
        self.response_length = self.rollout_config.response_length
        self.max_tokens_per_turn = GUIAgentConfig.max_tokens_per_turn(section)

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        messages = list(kwargs["raw_prompt"])
        extra_info = dict(kwargs.get("extra_info") or {})
        metrics: dict[str, Any] = {}
        with simple_timer("build_tokens", metrics):
            mm = await self.process_multi_modal_info(messages)
        ep = _Episode(messages=messages, images=list(mm.get("images") or []), instance_id="",
                      request_id=uuid4().hex, prompt_ids=[], response_mask=[], response_logprobs=[], turn_texts=[],
                      turns=[], metrics=metrics, feedback={}, server_fields={})
        error = None
        try:
            ep.instance_id, _ = await self.tool.create(
                create_kwargs=create_kwargs_for(extra_info, kwargs.get("tools_kwargs")), recipe=self.gui)
            state = GUIAgentState.PENDING
            while state is not GUIAgentState.TERMINATED:
                if state is GUIAgentState.PENDING:
                    state = await self._pending(ep)
                elif state is GUIAgentState.GENERATING:
                    state = await self._generating(ep, sampling_params)
                else:
                    state = await self._processing_action(ep)
        except Exception as e:  # one bad episode must never take the rollout worker down
            logger.warning("gui_agent episode failed: %s", e)
            error = f"{type(e).__name__}: {e}"
            ep.ended_by = "error"
        return await self._finish(ep, error)

    # ------------------------------------------------------------------------------------------ states

    async def _pending(self, ep: _Episode) -> GUIAgentState:
        with simple_timer("build_tokens", ep.metrics):
            ep.prompt_ids = await self.ct_build_initial_tokens(ep.messages, tools=self.tool_schemas,
                                                               images=ep.images or None)
        return GUIAgentState.GENERATING

    async def _generating(self, ep: _Episode, sampling_params: dict[str, Any]) -> GUIAgentState:
        with simple_timer("generate_sequences", ep.metrics):
            if self.max_tokens_per_turn:
                sampling_params = {**sampling_params, "max_tokens": self.max_tokens_per_turn}
            output = await self.server_manager.generate(request_id=ep.request_id, prompt_ids=ep.prompt_ids,
                                                        sampling_params=sampling_params,
                                                        image_data=ep.images or None)
        if not ep.server_fields:  # the first turn's fields; later turns move the newest weight version only
            ep.server_fields.update(output.extra_fields)
        elif output.extra_fields.get("max_global_steps") is not None:
            ep.server_fields["max_global_steps"] = output.extra_fields["max_global_steps"]
        if not output.log_probs:
            ep.response_logprobs = None  # one turn without log-probs: the episode has none (verl recomputes)
        with simple_timer("build_tokens", ep.metrics):
            merge, ep.response_mask, logprobs = await self.ct_merge_assistant_token(
                ep.prompt_ids, output.token_ids, ep.response_mask, ep.response_logprobs,
                assistant_logprobs=output.log_probs if ep.response_logprobs is not None else None)
        ep.response_logprobs = logprobs if ep.response_logprobs is not None else None
        ep.prompt_ids = merge.token_ids
        ep.last_text = self.tokenizer.decode(output.token_ids, skip_special_tokens=True)
        ep.turn_texts.append(ep.last_text)
        return GUIAgentState.PROCESSING_ACTION

    async def _processing_action(self, ep: _Episode) -> GUIAgentState:
        session = self.tool.session(ep.instance_id)
        text = ep.last_text
        screen = session.episode.screen_size
        gold, gold_box = session.info.get("gold_action"), session.info.get("gold_box")
        with simple_timer("compute_score", ep.metrics):  # 0 unless one mobile_use call
            ep.turns.append(score_turn(text, gold, gold_box, self.tool.grid, screen))
        before = len(session.conversation)
        with simple_timer("tool_calls", ep.metrics):  # the RecipeSession executes it and writes the next turn
            session.act(text, context_full=len(ep.response_mask) >= self.response_length)
        answer, *follow_up = session.conversation[before:]
        ep.messages.append(answer)
        if session.ended_by is not None:
            return self._end(ep, session.ended_by)
        (new_message,) = follow_up
        if new_message["role"] == "user":
            ep.feedback[len(ep.turn_texts) - 1] = new_message["content"]
        previous = list(ep.messages)
        ep.messages.append(new_message)
        with simple_timer("build_tokens", ep.metrics):
            merge, mask, logprobs = await self.ct_merge_context_msg(previous, ep.messages, ep.prompt_ids,
                                                                    ep.response_mask, ep.response_logprobs,
                                                                    tools=self.tool_schemas)
        if len(mask) >= self.response_length:
            ep.messages.pop()
            return self._end(ep, "context_budget")
        ep.prompt_ids, ep.response_mask = merge.token_ids, mask
        ep.response_logprobs = logprobs if ep.response_logprobs is not None else None
        ep.images.extend(p["image"] for p in new_message["content"] if isinstance(p, dict) and p["type"] == "image")
        return GUIAgentState.GENERATING

    @staticmethod
    def _end(ep: _Episode, reason: str) -> GUIAgentState:
        ep.ended_by = reason
        return GUIAgentState.TERMINATED

    # ------------------------------------------------------------------------------------------ output

    async def _finish(self, ep: _Episode, error: str | None) -> AgentLoopOutput:
        session = self.tool.sessions.get(ep.instance_id)
        success = bool(session.episode.success) if session is not None and error is None else False
        steps = session.episode.steps if session is not None else []
        with simple_timer("compute_score", ep.metrics):
            reward, parts = episode_reward(ep.turns, success, aggregation=self.gui.aggregation,
                                           completion_bonus=self.gui.completion_bonus)
            anchors, step_rewards = turn_credit(ep.turns, steps, success, ep.instance_id,
                                                completion_bonus=self.gui.completion_bonus)
        if error is not None:
            reward = 0.0
        parts.update({"gui_agent/invalid": float(sum(s.invalid is not None for s in steps)),
                      "gui_agent/tool_calls": float(sum(s.invalid is None for s in steps)),
                      "gui_agent/context_budget": float(ep.ended_by == "context_budget")})
        if error is not None:
            step_rewards = [0.0] * len(step_rewards)  # as the episode's reward
        episode_row = session.episode.to_row() if session is not None else None
        if ep.instance_id:
            await self.tool.release(ep.instance_id)
        n_response = len(ep.response_mask)
        n_prompt = len(ep.prompt_ids) - n_response
        return AgentLoopOutput(
            prompt_ids=ep.prompt_ids[:n_prompt],
            response_ids=ep.prompt_ids[n_prompt:][: self.response_length],
            response_mask=ep.response_mask[: self.response_length],
            response_logprobs=(ep.response_logprobs[: self.response_length]
                               if ep.response_logprobs and len(ep.response_logprobs) == n_response else None),
            multi_modal_data={"images": ep.images} if ep.images else {},
            reward_score=reward,
            num_turns=len(ep.messages),
            metrics=AgentLoopMetrics(**{k: v for k, v in ep.metrics.items() if k in AgentLoopMetrics.model_fields}),
            extra_fields={**ep.server_fields, "reward_extra_info": parts, "turn_texts": ep.turn_texts,
                          "feedback": ep.feedback, "ended_by": ep.ended_by, "episode": episode_row, "error": error,
                          "anchors": anchors, "step_rewards": step_rewards,
                          "timing_s": {part: float(ep.metrics.get(key, 0.0)) for part, key in EPISODE_TIMING.items()}},
        )


__all__ = ["AGENT_NAME", "EPISODE_TIMING", "GUIAgentConfig", "GUIAgentLoop", "GUIAgentState", "create_kwargs_for", "turn_credit"]
