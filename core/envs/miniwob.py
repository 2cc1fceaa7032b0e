"""MiniWoB++ in headless Chromium as a ``gymnasium.Env`` behind the shared env contract (id ``gui_agent/MiniWoB-v0``).

MiniWoB++ (Farama's ``miniwob`` 1.1.0: about 100 web tasks with their own reward functions, driven through
Selenium) is the environment the field knows; this adapter lets ``gui-agent rollout --env miniwob``, the verl
agent loop (``env: miniwob``) and the exporter use it exactly as they use the simulated phone.

``reset(seed=..., options={"task": "click-button", "max_steps": K})`` -> ``(obs, info)``; ``step(action)`` ->
``(obs, reward, terminated, truncated, info)``.

- ``obs``: the task area screenshot, HxWx3 uint8 (160x210 for every task in :data:`SUITES`). Screen pixels are
  CSS pixels of the page (device scale 1, origin top-left of the task area), so a point in screen pixels is
  clicked at exactly that page coordinate. The utterance is drawn in the screenshot's top 50 px, as MiniWoB shows it.
- Actions: a :class:`core.actions.Action` in screen pixels or ``mobile_use`` arguments. click / tap / long_press
  -> ``CLICK_COORDS``, doubleclick -> ``DBLCLICK_COORDS``, moveto -> ``MOVE_COORDS``, type -> ``TYPE_TEXT`` (at most
  64 characters, MiniWoB's limit), scroll up/down (or a vertical swipe) -> ``SCROLL_UP/DOWN_COORDS`` at the point
  (default: screen centre), press_enter / press_tab / press_space / press_down / press_pgdn / system_button Enter
  / hotkey NAME -> ``PRESS_KEY`` with MiniWoB's default allowed keys, wait -> ``NONE``; complete / impossible /
  terminate / answer end the episode without touching the page. Anything a browser cannot do (Back, Home, a
  point off the screen, a key outside the allowed set) changes nothing and ``info["ignored"]`` says why;
  malformed input raises ``ValueError``.
- ``reward``: MiniWoB's binary success reward (``miniwob.reward.get_binary_reward``): 0 until the task ends, then
  1.0 on success and -1.0 on failure, also when the task's timer ran out (10 s per episode, MiniWoB's default,
  or ``time_limit_s`` / ``MINIWOB_TIME_LIMIT_S``; it runs while the model thinks). ``info["env_reward"]`` is
  MiniWoB's original time-decayed reward, ``info["raw_reward"]`` the undecayed one; ``info["metrics"]`` carries the decayed one to the
  rollout summary (``mean_decayed_reward``). ``terminated`` = MiniWoB says done, or an ending action;
  ``truncated`` = ``max_steps`` reached.
- ``info``: the shared keys (``task_id``, ``family`` = the task name, ``app`` = ``miniwob``, ``instruction`` = the
  task's utterance, ``step_instruction`` = the next gold step in words, ``screen_size`` (W, H), ``widgets`` (DOM
  elements: ``id`` = MiniWoB ref, ``role`` = tag, ``text``, ``value``, ``box`` [x1, y1, x2, y2] screen pixels,
  ``focused``, ``html_id``, ``classes``), ``success``, ``gold_action``, ``gold_box``, ``ignored``, ``step``) plus
  ``fields`` (the task's own key/value parse of the utterance), ``reason``, ``elapsed`` (s since the episode began).
- Gold actions (for the scripted policy and the exporter) are planned from the live DOM for the tasks of
  :data:`SUITES` (:func:`plan_gold`), so they also show the way back after a wrong step; other tasks run with
  ``gold_action`` None.
- The browser: Debian's ``/usr/bin/chromium`` + ``/usr/bin/chromedriver`` (``MINIWOB_CHROME_BINARY`` /
  ``MINIWOB_CHROMEDRIVER`` override them; Selenium never looks a driver up online), started with
  :data:`CHROMIUM_FLAGS`, one browser per env, reused across tasks and episodes. Every browser call has a
  deadline (``timeout_s``, default 30 s; starting the browser 60 s): a browser that dies or hangs is killed (its
  whole process group) and the call raises :class:`BrowserError` (never a ``ValueError``, so the rollout loop
  reports the episode as an error); the next ``reset`` starts a fresh browser.

This module is long (over 500 lines) on purpose: the gold planner reads the same live DOM widgets the env
reports, and the env's browser lifecycle (deadlines, restarts, process-group kills) wraps every Selenium call;
split apart, each half would re-derive the other's widget and browser state.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import os
import re
import signal
import urllib.parse
import weakref
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from core.actions import Action, from_mobile_use, swipe_to_scroll
from core.world.env import PhoneActionSpace

ENV_ID = "gui_agent/MiniWoB-v0"
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
#: Headless, no GPU, and none of the background connections a closed network refuses.
CHROMIUM_FLAGS: tuple[str, ...] = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                                   "--no-first-run", "--disable-component-update", "--disable-sync",
                                   "--disable-dev-shm-usage")
DEFAULT_MAX_STEPS = 20
DEFAULT_TIMEOUT_S = 30.0
START_TIMEOUT_S = 60.0  # starting Chromium and loading the first page: seconds on a loaded 2-core machine
ENDING_ACTIONS = frozenset({"complete", "impossible", "terminate", "answer"})

#: Named task suites (``--tasks click-type``). ``click-type``: 12 click and type tasks whose gold plan is read from
#: the DOM (:func:`plan_gold`); every one is solved by it.
SUITES: dict[str, tuple[str, ...]] = {
    "click-type": ("click-test", "click-test-2", "click-button", "click-link", "click-dialog", "click-dialog-2",
                   "click-checkboxes", "click-option", "focus-text", "focus-text-2", "enter-text", "enter-password",
                   "login-user"),
}
DEFAULT_SUITE = "click-type"

#: core key names -> MiniWoB PRESS_KEY names (``miniwob.constants.DEFAULT_ALLOWED_KEYS`` spelling).
KEY_NAMES: dict[str, str] = {"enter": "<Enter>", "return": "<Enter>", "tab": "<Tab>", "space": "<Space>",
                             "backspace": "<Backspace>", "delete": "<Delete>", "up": "<ArrowUp>",
                             "down": "<ArrowDown>", "left": "<ArrowLeft>", "right": "<ArrowRight>",
                             "pageup": "<PageUp>", "pagedown": "<PageDown>", "pgdn": "<PageDown>", "pgup": "<PageUp>"}
_KEY_OF_ACTION = {"press_enter": "enter", "enter": "enter", "press_tab": "tab", "press_space": "space",
                  "press_down": "down", "press_pgdn": "pagedown"}


#: The command that installs everything this env needs.
SETUP_COMMAND = "make setup-web"


def browser_paths(chromium: str | None = None, chromedriver: str | None = None) -> tuple[str, str]:
    """The Chromium and chromedriver this env starts: the arguments, else ``MINIWOB_CHROME_BINARY`` /
    ``MINIWOB_CHROMEDRIVER``, else Debian's :data:`CHROMIUM` / :data:`CHROMEDRIVER`."""
    return (chromium or os.environ.get("MINIWOB_CHROME_BINARY") or CHROMIUM,
            chromedriver or os.environ.get("MINIWOB_CHROMEDRIVER") or CHROMEDRIVER)


def missing_browser(chromium: str, chromedriver: str) -> str | None:
    """Why the browser cannot start (a program missing, naming :data:`SETUP_COMMAND`), or None."""
    for path in (chromium, chromedriver):
        if not os.access(path, os.X_OK):
            return f"{path} is missing: run `{SETUP_COMMAND}` (installs Debian's chromium and chromium-driver)"
    return None


def missing_setup() -> str | None:
    """Why this env cannot start in this process (the ``miniwob`` / ``selenium`` packages or the browser missing),
    in one line naming :data:`SETUP_COMMAND`; None when it can. Checked before a run starts, so a missing
    dependency is an error, never a run of failed episodes."""
    try:
        import miniwob  # noqa: F401
        import selenium  # noqa: F401
    except ImportError as e:
        return (f"the MiniWoB++ env needs the Python package {e.name or e}, which this environment lacks: run "
                f"`{SETUP_COMMAND}`")
    return missing_browser(*browser_paths())


class BrowserError(RuntimeError):
    """The browser died, hung past the deadline or could not start; it has been killed (the next reset restarts
    it). Deliberately not a ``ValueError``: the episode is an env error, not an invalid action."""


# ----------------------------------------------------------------------------------------------- gold plans


@dataclass(frozen=True)
class GoldStep:
    """The next gold action (screen pixels), the DOM element it needs (``box`` [x1, y1, x2, y2]) and what it does
    in words (the low-level instruction and the grounding description)."""

    action: Action
    box: tuple[float, float, float, float] | None
    instruction: str


def _centre(el: dict[str, Any]) -> tuple[float, float]:
    x1, y1, x2, y2 = el["box"]
    return ((x1 + x2) / 2, (y1 + y2) / 2)


def _click(el: dict[str, Any], what: str) -> GoldStep:
    return GoldStep(Action(type="click", point=_centre(el)), tuple(el["box"]), f"Click {what}")


def _find(widgets: list[dict[str, Any]], *, tag: str | None = None, text: str | None = None,
          cls: str | None = None, html_id: str | None = None) -> list[dict[str, Any]]:
    return [w for w in widgets if (tag is None or w["role"] == tag) and (text is None or w["text"] == text)
            and (cls is None or cls in w["classes"].split()) and (html_id is None or w["html_id"] == html_id)
            and w["box"][2] > w["box"][0] and w["box"][3] > w["box"][1]]


def _fill(field: dict[str, Any], want: str, what: str) -> GoldStep | None:
    """The next step to make text input ``field`` hold ``want``: focus it, type what is missing, or clear it."""
    value = str(field.get("value") or "")
    if value == want:
        return None
    if not field["focused"]:
        return _click(field, f"the {what}")
    if want.startswith(value):
        rest = want[len(value):]
        return GoldStep(Action(type="type", text=rest), tuple(field["box"]), f'Type "{rest}" into the {what}')
    return GoldStep(Action(type="hotkey", text="backspace"), tuple(field["box"]), f"Delete a character in the {what}")


def _checked(w: dict[str, Any]) -> bool:
    """Whether a checkbox / radio input is checked (MiniWoB reports its value as the string ``True``)."""
    return w.get("value") == "True"


def _labelled(widgets: list[dict[str, Any]], tag: str) -> list[tuple[str, dict[str, Any]]]:
    """(label text, input) for each ``tag`` input inside a label (click-checkboxes, click-option)."""
    by_ref = {w["id"]: w for w in widgets}
    out = []
    for w in widgets:
        if w["role"] == tag and w["parent"] in by_ref:
            label = by_ref[w["parent"]]
            texts = [c["text"] for c in widgets if c["parent"] == label["id"] and c["role"] == "t"]
            out.append((" ".join(texts).strip(), w))
    return out


def plan_gold(task: str, fields: dict[str, str], widgets: list[dict[str, Any]]) -> GoldStep | None:
    """The next gold step of ``task`` in the page state ``widgets`` (``info["widgets"]``), or None when the task has
    no plan here (not in :data:`SUITES`) or nothing is left to do. ``fields``: the task's own parse of its utterance."""
    target = fields.get("target", "")
    if task in ("click-test", "click-test-2", "click-button"):
        want = None if task == "click-test" else target
        found = _find(widgets, tag="button", text=want)
        return _click(found[0], f'the "{found[0]["text"]}" button') if found else None
    if task == "click-link":
        found = _find(widgets, tag="span", text=target, cls="alink")
        return _click(found[0], f'the link "{target}"') if found else None
    if task in ("click-dialog", "click-dialog-2"):
        if task == "click-dialog" or target.lower() == "x":
            found = _find(widgets, tag="button", cls="ui-dialog-titlebar-close")
            return _click(found[0], 'the "x" that closes the dialog') if found else None
        found = _find(widgets, tag="button", text=target)
        return _click(found[0], f'the "{target}" button in the dialog') if found else None
    if task in ("focus-text", "focus-text-2"):
        inputs = _find(widgets, tag="input_text")
        k = int(target) - 1 if target.isdigit() else 0
        if not 0 <= k < len(inputs) or inputs[k]["focused"]:
            return None
        return _click(inputs[k], "the text box" if task == "focus-text" else f"text box number {k + 1}")
    if task in ("click-checkboxes", "click-option"):
        tag = "input_checkbox" if task == "click-checkboxes" else "input_radio"
        wanted = {v for k, v in fields.items() if k.startswith("target")}
        for label, box in _labelled(widgets, tag):
            if (label in wanted) != _checked(box):
                return _click(box, f'the "{label}" {"checkbox" if tag == "input_checkbox" else "option"}')
        return _submit(widgets, "Submit")
    forms = {"enter-text": [("input_text", None, target, "text field")],
             "enter-password": [("input_password", "password", target, "password field"),
                                ("input_password", "verify", target, "verify password field")],
             "login-user": [("input_text", "username", fields.get("username", ""), "username field"),
                            ("input_password", "password", fields.get("password", ""), "password field")]}
    if task in forms:
        for tag, html_id, want, what in forms[task]:
            found = _find(widgets, tag=tag, html_id=html_id)
            step = _fill(found[0], want, what) if found else None
            if step is not None:
                return step
        return _submit(widgets, "Login" if task == "login-user" else "Submit")
    return None


def _submit(widgets: list[dict[str, Any]], text: str) -> GoldStep | None:
    found = _find(widgets, tag="button", text=text)
    return _click(found[0], f'the "{text}" button') if found else None


# ----------------------------------------------------------------------------------------------- the browser


def task_names() -> list[str]:
    """Every MiniWoB++ task this adapter can open (the ``miniwob`` package's HTML tasks, flight.* excluded)."""
    from miniwob.selenium_instance import HTML_DIR

    return sorted(p.stem for p in (HTML_DIR / "miniwob").glob("*.html"))


def resolve_tasks(spec: str) -> list[str]:
    """A suite name (:data:`SUITES`) or comma-separated task names (``click-button`` or ``miniwob/click-button-v1``)
    -> task names; ``ValueError`` naming an unknown one."""
    if spec in SUITES:
        return list(SUITES[spec])
    known = set(task_names())
    out = [re.sub(r"^miniwob/|-v1$", "", t.strip()) for t in spec.split(",") if t.strip()]
    bad = [t for t in out if t not in known]
    if bad or not out:
        raise ValueError(f"unknown MiniWoB++ task(s) {bad or spec!r}; suites: {', '.join(SUITES)}; tasks: "
                         f"{len(known)} from the miniwob package, e.g. click-button, enter-text")
    return out


def _instance_class():
    """``miniwob``'s SeleniumInstance with this project's browser start (explicit binary and driver, our flags,
    the driver in its own process group so a hung browser can be killed whole) and task switching."""
    from miniwob.fields import get_field_extractor
    from miniwob.reward import get_binary_reward
    from miniwob.selenium_instance import DEFAULT_BASE_URL, SeleniumInstance
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.wait import WebDriverWait

    class Instance(SeleniumInstance):
        def __init__(self, subdomain: str, chromium: str, chromedriver: str):
            super().__init__(index=0, subdomain=subdomain, headless=True, reward_processor=get_binary_reward)
            self.chromium, self.chromedriver, self.subdomain_name = chromium, chromedriver, subdomain

        def create_driver(self) -> None:
            options = webdriver.ChromeOptions()
            for flag in CHROMIUM_FLAGS:
                options.add_argument(flag)
            options.binary_location = self.chromium
            service = Service(executable_path=self.chromedriver, popen_kw={"start_new_session": True})
            self.driver = webdriver.Chrome(service=service, options=options)
            self.open_task(self.subdomain_name)

        def open_task(self, subdomain: str) -> None:
            """Load ``subdomain``'s page and wait for MiniWoB's start screen."""
            self.subdomain_name = subdomain
            self.url = urllib.parse.urljoin(DEFAULT_BASE_URL, f"{subdomain}.html")
            self.field_extractor = get_field_extractor(subdomain)
            self.driver.get(self.url)
            WebDriverWait(self.driver, 5).until(
                expected_conditions.element_to_be_clickable((By.ID, self.SYNC_SCREEN_ID)))
            self.inner_width, self.inner_height, self.task_time_ms = self.driver.execute_script(
                "return [window.innerWidth, window.innerHeight, core.EPISODE_MAX_TIME];")

        def kill(self) -> None:
            """Kill chromedriver and every browser process it started (one process group); never blocks."""
            process = getattr(getattr(getattr(self, "driver", None), "service", None), "process", None)
            if process is not None:
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass

    return Instance


class WebActionSpace(PhoneActionSpace):
    """The phone's action space (every :class:`Action` or mobile_use dict) with web sampling: ``sample()`` draws a
    uniformly random web action on a ``width`` x ``height`` screen (a click anywhere, a short typed word, Enter /
    Tab, a vertical scroll), from the space's own ``np_random``."""

    def sample(self, mask: Any = None, probability: Any = None) -> Action:
        r = self.np_random
        kind = str(r.choice(["click"] * 5 + ["type", "press_enter", "press_tab", "scroll"]))
        if kind == "click":
            return Action(type="click", point=(float(r.uniform(0, self.width)), float(r.uniform(0, self.height))))
        if kind == "type":
            return Action(type="type", text=str(r.choice(["hello", "ok", "submit", "1234"])))
        if kind == "scroll":
            return Action(type="scroll", direction=str(r.choice(["up", "down"])))
        return Action(type=kind)


def dom_widget(el: dict[str, Any]) -> dict[str, Any]:
    """One ``dom_elements`` entry of a MiniWoB observation as an ``info["widgets"]`` entry (box in screen pixels)."""
    left, top = float(el["left"][0]), float(el["top"][0])
    w, h = float(el["width"][0]), float(el["height"][0])
    return {"id": int(el["ref"]), "parent": int(el["parent"]), "role": str(el["tag"]), "text": str(el["text"]),
            "value": str(el.get("value") or ""), "box": [left, top, left + w, top + h],
            "focused": bool(el["flags"][0]), "html_id": str(el["id"]), "classes": str(el["classes"])}


class MiniWoBEnv(gym.Env):
    """MiniWoB++ behind the shared env contract (see the module docstring)."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 1}

    def __init__(self, render_mode: str | None = "rgb_array", max_steps: int = DEFAULT_MAX_STEPS,
                 task: str | None = None, timeout_s: float = DEFAULT_TIMEOUT_S, chromium: str | None = None,
                 chromedriver: str | None = None, time_limit_s: float | None = None):
        self.render_mode = render_mode
        limit = time_limit_s if time_limit_s is not None else os.environ.get("MINIWOB_TIME_LIMIT_S")
        self.time_limit_ms = None if limit in (None, "") else int(float(limit) * 1000)
        self.default_max_steps, self.default_task, self.timeout_s = max_steps, task, float(timeout_s)
        self.chromium, self.chromedriver = browser_paths(chromium, chromedriver)
        self.instance: Any = None
        self.task: str | None = None
        self._obs: np.ndarray | None = None
        self._widgets: list[dict[str, Any]] = []
        self.gold: GoldStep | None = None  # the next gold step in the current state (info["gold_action"] / "gold_box")
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        self.observation_space = gym.spaces.Box(0, 255, (210, 160, 3), np.uint8)
        self.action_space = WebActionSpace(160, 210)

    # ------------------------------------------------------------------ browser calls with a deadline
    def _call(self, fn: Any, *args: Any, timeout_s: float | None = None) -> Any:
        """``fn(*args)`` on the browser thread; past ``timeout_s`` (default: the env's), or on any browser failure,
        the browser is killed and :class:`BrowserError` raised."""
        if self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="miniwob-browser")
        future = self._pool.submit(fn, *args)
        try:
            return future.result(timeout=timeout_s or self.timeout_s)
        except concurrent.futures.TimeoutError:
            self._kill()
            raise BrowserError(f"the browser did not answer within {timeout_s or self.timeout_s:g} s; killed "
                               f"(restarted on the next reset)") from None
        except BrowserError:
            raise
        except Exception as e:  # selenium / urllib3 / miniwob: the browser is gone or broken
            self._kill()
            raise BrowserError(f"the browser failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
                               f" (restarted on the next reset)") from e

    def _kill(self) -> None:
        if self.instance is not None:
            self.instance.kill()
            self.instance = None
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    def _start(self, task: str) -> None:
        problem = missing_browser(self.chromium, self.chromedriver)
        if problem:
            raise BrowserError(problem)
        instance = _instance_class()(task, self.chromium, self.chromedriver)
        self.instance = instance
        _LIVE.add(self)
        self._call(instance.create_driver, timeout_s=max(START_TIMEOUT_S, self.timeout_s))

    def __del__(self) -> None:
        if hasattr(self, "_pool"):  # not when __init__ failed half-way
            self._kill()

    def browser_pid(self) -> int | None:
        """The chromedriver process id (its process group holds the browser), None before the first reset."""
        process = getattr(getattr(getattr(self.instance, "driver", None), "service", None), "process", None)
        return None if process is None else process.pid

    # ------------------------------------------------------------------ gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        options = options or {}
        task = options.get("task", self.default_task) or SUITES[DEFAULT_SUITE][0]
        if not isinstance(task, str) or "," in task or task in SUITES:
            raise ValueError(f"options['task'] must name one MiniWoB++ task, got {task!r}")
        (task,) = resolve_tasks(task)
        self.max_steps = int(options.get("max_steps", self.default_max_steps))
        if self.instance is None:
            self._start(task)
        elif task != self.task:
            self._call(self.instance.open_task, task)
        self.task, self.steps, self._done = task, 0, False
        limit_ms = self.instance.task_time_ms if self.time_limit_ms is None else self.time_limit_ms
        self._call(self.instance.driver.execute_script, f"core.EPISODE_MAX_TIME = {int(limit_ms)};")  # read at start
        obs, infos = [{}], [{}]
        self._call(self.instance.reset, obs, infos, seed)
        return self._observe(obs[0], infos[0], ignored=None)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self.instance is None or self.task is None:
            raise RuntimeError("call reset() before step()")
        act = action if isinstance(action, Action) else from_mobile_use(action) if isinstance(action, dict) else None
        if act is None:
            raise ValueError(f"action must be a core.actions.Action or a mobile_use arguments dict, got "
                             f"{type(action).__name__}")
        wob, ignored = self.to_miniwob(act)
        self.steps += 1
        reward, done, meta = 0.0, self._done, self._meta
        if act.type in ENDING_ACTIONS:
            done = True
        elif wob is not None and not self._done:
            obs, rewards, dones, infos = [{}], [0.0], [False], [{}]
            self._call(self.instance.step, wob, self.instance_config, obs, rewards, dones, infos)
            reward, done, meta = float(rewards[0]), bool(dones[0]), infos[0]
            if not done:
                self._wob_obs = obs[0]
        self._done = done
        truncated = not done and self.steps >= self.max_steps
        obs, info = self._observe(self._wob_obs, meta, ignored=ignored)
        return obs, reward, done, truncated, info

    def render(self) -> np.ndarray:
        """The last screenshot (HxWx3 uint8, screen pixels; after the task ends, the last one taken before)."""
        if self._obs is None:
            raise RuntimeError("call reset() before render()")
        return self._obs

    def close(self) -> None:
        if self.instance is not None:
            try:
                self._call(self.instance.close)
            except BrowserError:
                pass
            self._kill()

    # ------------------------------------------------------------------ actions
    @property
    def instance_config(self) -> Any:
        from miniwob.action import ActionSpaceConfig

        if getattr(self, "_config", None) is None:
            config = ActionSpaceConfig.get_preset("all_supported")
            config.screen_width, config.screen_height = self.screen_size
            self._config = config
        return self._config

    @property
    def screen_size(self) -> tuple[int, int]:
        """(W, H) of the screenshot in screen pixels."""
        return (int(self.instance.task_width), int(self.instance.task_height))

    def to_miniwob(self, act: Action) -> tuple[dict[str, Any] | None, str | None]:
        """(MiniWoB action dict, None) for ``act``, or (None, why it changes nothing). ``ValueError`` for text
        MiniWoB cannot type (over 64 characters)."""
        from miniwob.action import ActionTypes

        config, (w, h) = self.instance_config, self.screen_size

        def make(kind: ActionTypes, **fields: Any) -> dict[str, Any]:
            return {"action_type": config.action_types.index(kind), **fields}

        def coords(point: tuple[float, float]) -> np.ndarray | None:
            x, y = point
            return np.array([x, y], np.float32) if 0 <= x <= w and 0 <= y <= h else None

        kind = act.type
        if kind in ("swipe", "drag") and act.point and act.end_point:
            kind, act = "scroll", act.model_copy(update={"direction": swipe_to_scroll(act.point, act.end_point)})
        if kind in ("click", "long_press", "doubleclick", "moveto", "rightclick", "scroll"):
            point = act.point or (w / 2, h / 2)
            xy = coords(point)
            if xy is None:
                return None, f"point {point} is outside the {w}x{h} screen"
            if kind == "scroll":
                if act.direction not in ("up", "down"):
                    return None, f"MiniWoB++ scrolls vertically only, not {act.direction}"
                return make(ActionTypes.SCROLL_UP_COORDS if act.direction == "up" else ActionTypes.SCROLL_DOWN_COORDS,
                            coords=xy), None
            wob = {"doubleclick": ActionTypes.DBLCLICK_COORDS, "moveto": ActionTypes.MOVE_COORDS}
            return make(wob.get(kind, ActionTypes.CLICK_COORDS), coords=xy), None
        if kind in ("type", "select"):
            if len(act.text or "") > config.text_max_len:
                raise ValueError(f"MiniWoB++ types at most {config.text_max_len} characters, got {len(act.text or '')}")
            return make(ActionTypes.TYPE_TEXT, text=act.text), None
        key = _KEY_OF_ACTION.get(kind)
        if kind == "hotkey":
            key = (act.text or "").strip().lower()
        elif kind == "system_button":
            if (act.button or "").lower() != "enter":
                return None, f"a web page has no {act.button} button"
            key = "enter"
        if key is not None:
            name = KEY_NAMES.get(key, key)
            if name not in config.allowed_keys:
                return None, f"key {act.text or kind!r} is not one of MiniWoB++'s allowed keys"
            return make(ActionTypes.PRESS_KEY, key=config.allowed_keys.index(name)), None
        if kind == "wait":
            return make(ActionTypes.NONE), None
        if kind in ENDING_ACTIONS:
            return None, None
        return None, f"a web page has no {kind} action"

    # ------------------------------------------------------------------ observation and info
    def _observe(self, wob_obs: dict[str, Any], meta: dict[str, Any], ignored: str | None
                 ) -> tuple[np.ndarray, dict[str, Any]]:
        self._wob_obs, self._meta = wob_obs, meta
        shot = np.asarray(wob_obs["screenshot"], dtype=np.uint8)
        if not self._done or self._obs is None:
            self._obs = shot
        h, w = self._obs.shape[:2]
        if self.observation_space.shape != (h, w, 3):
            self.observation_space = gym.spaces.Box(0, 255, (h, w, 3), np.uint8)
            self.action_space.resize(w, h)  # one space for the env's life: a user's seed survives
        if not self._done:  # an ended task's page is blank: keep the last widgets, as the last screenshot
            self._widgets = [dom_widget(e) for e in wob_obs["dom_elements"]]
        widgets = self._widgets
        fields = {str(k): str(v) for k, v in wob_obs.get("fields", ())}
        success = bool(self._done and meta.get("raw_reward") == 1.0)
        gold = self.gold = None if self._done else plan_gold(self.task or "", fields, widgets)
        decayed = float(meta.get("env_reward") or 0.0) if self._done else 0.0
        info = {"task_id": self.task, "family": self.task, "app": "miniwob", "instruction": str(wob_obs["utterance"]),
                "step_instruction": gold.instruction if gold else None, "screen_size": (w, h), "widgets": widgets,
                "success": success, "gold_action": gold.action if gold else None,
                "gold_box": list(gold.box) if gold and gold.box else None, "ignored": ignored, "step": self.steps,
                "fields": fields, "reason": meta.get("reason"), "env_reward": decayed,
                "raw_reward": float(meta.get("raw_reward") or 0.0) if self._done else 0.0,
                "elapsed": meta.get("elapsed"), "metrics": {"decayed_reward": decayed}}
        return self._obs, info


#: Envs with a browser: killed at interpreter exit (the browsers run in their own process group, so a Ctrl-C on the
#: terminal does not reach them).
_LIVE: weakref.WeakSet[MiniWoBEnv] = weakref.WeakSet()


@atexit.register
def _kill_browsers() -> None:
    for env in list(_LIVE):
        env._kill()


if ENV_ID not in gym.registry:
    gym.register(id=ENV_ID, entry_point="core.envs.miniwob:MiniWoBEnv")

__all__ = ["CHROMEDRIVER", "CHROMIUM", "CHROMIUM_FLAGS", "DEFAULT_SUITE", "ENV_ID", "KEY_NAMES", "SETUP_COMMAND", "SUITES",
           "BrowserError", "GoldStep", "MiniWoBEnv", "WebActionSpace", "dom_widget", "plan_gold", "resolve_tasks",
           "task_names"]
