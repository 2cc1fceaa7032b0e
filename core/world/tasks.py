"""Tasks of the simulated phone: families, their goal checks and gold plans, and the split registry.

A task is (family, layout seed); its id is ``"<family>-<seed>"``. A family knows how to pick its parameters from
the seeded phone content, how to check its goal on a :class:`~core.world.phone.Phone`, and its gold plan: the next
gold step from ANY current state (so the gold sequence is the plan followed from the start, and an agent that
strays can be shown the way back). Gold steps are GUI-R1's two levels: the task ``instruction`` is the ``high``
goal, each :class:`GoldStep`'s ``instruction`` the ``low`` one.

Splits: ``train`` = training families x training seeds; ``val_seed`` = the same families on held-out layout seeds
for tuning; ``test_seed`` = the same families on other held-out seeds, for reporting; ``test_family`` = held-out
families (the Calculator app and deleting a note) on their own seeds; ``test`` = both test splits. The curriculum
(:mod:`core.world.curriculum`) has its own splits ``curriculum_train`` / ``curriculum_val`` / ``curriculum_test``
(all its families on disjoint seed ranges), listed seed by seed so the first N tasks cover every family.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from itertools import islice
from typing import Any

from pydantic import BaseModel, ConfigDict

from core.console import bounded, quoted
from core.world.curriculum import AGENT_FAMILIES, CURRICULUM, CURRICULUM_FAMILIES, MULTI_STEP, MULTI_STEP_FAMILIES
from core.world.content import (
    MESSAGES,
    NEW_NOTE_TITLES,
    NOTE_BODIES,
    PLACES,
    SETTING_NAMES,
    TOGGLES,
    WORKING_APPS,
    Content,
    make_content,
)
from core.world.device import FONT_SCALES, PHONE_SCREENS, THEMES
from core.world.phone import Phone, evaluate
from core.world.plans import Family, GoldStep, fill, reach_row, tap, tap_id, to_screen


class TaskSpec(BaseModel):
    """One task: ``family`` on the phone of layout ``seed``, shown on ``screen`` (a name in
    ``core.world.device.SCREENS``) with ``theme`` and ``font_scale``; ``instruction`` is the high-level goal."""

    model_config = ConfigDict(frozen=True)

    id: str
    family: str
    app: str
    seed: int
    split: str
    screen: str
    theme: str
    font_scale: float
    instruction: str
    params: dict[str, Any]


# ---------------------------------------------------------------------------------------------- families
def _settings_make(rng: random.Random, c: Content) -> tuple[dict[str, Any], str]:
    key = rng.choice(TOGGLES)
    on = not c.settings_initial[key]
    verb = rng.choice(("Turn {} {}", "Switch {} {}")).format("on" if on else "off", SETTING_NAMES[key])
    return {"key": key, "on": on}, verb


def _settings_plan(phone: Phone, p: dict[str, Any]) -> GoldStep | None:
    if phone.settings[p["key"]] == p["on"]:
        return None
    step = to_screen(phone, ("settings",))
    if step:
        return step
    label = phone.content.settings_labels[p["key"]]
    row = reach_row(phone, f"setting_{p['key']}", phone.content.settings_order.index(p["key"]), f"'{label}'")
    if isinstance(row, GoldStep):
        return row
    return tap(row, f"Tap '{label}' to turn it {'on' if p['on'] else 'off'}")


def _message_make(rng: random.Random, c: Content) -> tuple[dict[str, Any], str]:
    name = rng.choice(c.thread_order)
    text = rng.choice(MESSAGES)
    return {"contact": name, "text": text}, f"Send \"{text}\" to {name.split()[0]}"


def _message_goal(phone: Phone, p: dict[str, Any]) -> bool:
    before = len(phone.content.threads.get(p["contact"], []))
    return ("me", p["text"]) in phone.threads.get(p["contact"], [])[before:]


def _message_plan(phone: Phone, p: dict[str, Any]) -> GoldStep | None:
    if _message_goal(phone, p):
        return None
    if phone.route != ("thread", p["contact"]) or phone.dialog:
        step = to_screen(phone, ("messages",))
        if step:
            return step
        i = phone.content.thread_order.index(p["contact"])
        row = reach_row(phone, f"thread_{i}", i, f"the conversation with {p['contact']}")
        return row if isinstance(row, GoldStep) else tap(row, f"Open the conversation with {p['contact']}")
    step = fill(phone, "message_input", p["text"], "message")
    if step:
        return step
    return tap_id(phone, "send", "Tap Send")


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _contact_make(rng: random.Random, c: Content) -> tuple[dict[str, Any], str]:
    i = rng.randrange(8, len(c.contacts)) if rng.random() < 0.5 else rng.randrange(len(c.contacts))
    name = c.contacts[i][0]
    if rng.random() < 0.4:
        return {"name": name, "all_tab": True}, f"Scroll to and open the {_ordinal(i + 1)} contact in the All list"
    return {"name": name, "all_tab": False}, f"Open the contact card of {name}"


def _contact_plan(phone: Phone, p: dict[str, Any]) -> GoldStep | None:
    name = p["name"]
    if phone.route == ("contact", name):
        return None
    step = to_screen(phone, ("contacts",))
    if step:
        return step
    tab = phone.tabs["contacts"]
    in_tab = name in phone.content.favorites if tab == "Favorites" else True
    if tab != "All" and (p["all_tab"] or not in_tab):
        return tap_id(phone, "tab_all", "Open the All tab")
    names = phone.content.favorites if tab == "Favorites" else [n for n, _ in phone.content.contacts]
    i = next(k for k, (n, _) in enumerate(phone.content.contacts) if n == name)
    row = reach_row(phone, f"contact_{i}", names.index(name), name)
    return row if isinstance(row, GoldStep) else tap(row, f"Tap {name}")


def _open_note_make(rng: random.Random, c: Content) -> tuple[dict[str, Any], str]:
    title = rng.choice(c.notes)[0]
    return {"title": title}, rng.choice(("Find the note titled '{}'", "Open my note '{}'")).format(title)


def _go_to_note(phone: Phone, title: str) -> GoldStep | None:
    if phone.route == ("note", title) and phone.dialog is None:
        return None
    step = to_screen(phone, ("notes",))
    if step:
        return step
    i = next(k for k, (t, _) in enumerate(phone.notes) if t == title)
    row = reach_row(phone, f"note_{i}", i, f"the note '{title}'")
    return row if isinstance(row, GoldStep) else tap(row, f"Open the note '{title}'")


def _new_note_make(rng: random.Random, c: Content) -> tuple[dict[str, Any], str]:
    title = rng.choice([t for t in NEW_NOTE_TITLES if t not in dict(c.notes)])
    body = rng.choice(NOTE_BODIES)
    return {"title": title, "body": body}, f"Create a note titled '{title}' that says '{body}'"


def _new_note_plan(phone: Phone, p: dict[str, Any]) -> GoldStep | None:
    if (p["title"], p["body"]) in phone.notes:
        return None
    if phone.route != ("note_edit",) or phone.dialog:
        step = to_screen(phone, ("notes",))
        if step:
            return step
        return tap_id(phone, "new_note", "Tap the new note button")
    step = fill(phone, "note_title", p["title"], "title") or fill(phone, "note_body", p["body"], "note")
    if step:
        return step
    return tap_id(phone, "save_note", "Tap Save")


def _delete_note_make(rng: random.Random, c: Content) -> tuple[dict[str, Any], str]:
    title = rng.choice(c.notes)[0]
    return {"title": title}, f"Delete the note titled '{title}'"


def _delete_note_plan(phone: Phone, p: dict[str, Any]) -> GoldStep | None:
    title = p["title"]
    if all(t != title for t, _ in phone.notes):
        return None
    if phone.dialog == ("delete_note", title):
        return tap_id(phone, "dialog_delete", "Tap Delete to confirm")
    step = _go_to_note(phone, title)
    if step:
        return step
    return tap_id(phone, "delete_note", "Tap the delete button")


def _maps_make(rng: random.Random, c: Content) -> tuple[dict[str, Any], str]:
    q = rng.choice(PLACES)
    return {"query": q}, rng.choice(("Search for {} in Maps", "Find a {} nearby on the map")).format(q)


def _maps_plan(phone: Phone, p: dict[str, Any]) -> GoldStep | None:
    if phone.maps_query == p["query"]:
        return None
    step = to_screen(phone, ("maps",)) or fill(phone, "maps_query", p["query"], "search")
    if step:
        return step
    return tap_id(phone, "search", "Tap the search button")


def _alarm_make(rng: random.Random, c: Content) -> tuple[dict[str, Any], str]:
    taken = {tm for tm, _ in c.alarms}
    tm = rng.choice([f"{h:02d}:{m:02d}" for h in range(5, 11) for m in (0, 10, 20, 30, 40, 50)
                     if f"{h:02d}:{m:02d}" not in taken])
    return {"time": tm}, f"Set an alarm for {tm}"


def _to_alarm_tab(phone: Phone) -> GoldStep | None:
    step = to_screen(phone, ("clock",))
    if step or phone.tabs["clock"] == "Alarm":
        return step
    return tap_id(phone, "tab_alarm", "Open the Alarm tab")


def _alarm_plan(phone: Phone, p: dict[str, Any]) -> GoldStep | None:
    if (p["time"], True) in phone.alarms:
        return None
    if phone.dialog == ("add_alarm",):
        step = fill(phone, "alarm_time", p["time"], "time")
        if step:
            return step
        return tap_id(phone, "dialog_ok", "Tap OK")
    step = _to_alarm_tab(phone)
    if step:
        return step
    return tap_id(phone, "add_alarm", "Tap the add alarm button")


def _alarm_toggle_make(rng: random.Random, c: Content) -> tuple[dict[str, Any], str]:
    tm, on = rng.choice(c.alarms)
    return {"time": tm, "on": not on}, f"Turn {'on' if not on else 'off'} the {tm} alarm"


def _alarm_toggle_plan(phone: Phone, p: dict[str, Any]) -> GoldStep | None:
    if (p["time"], p["on"]) in phone.alarms:
        return None
    step = _to_alarm_tab(phone)
    if step:
        return step
    i = [tm for tm, _ in phone.alarms].index(p["time"])
    row = reach_row(phone, f"alarm_{p['time'].replace(':', '')}", i, f"the {p['time']} alarm")
    return row if isinstance(row, GoldStep) else tap(row, f"Tap the {p['time']} alarm switch")


def _calc_make(rng: random.Random, c: Content) -> tuple[dict[str, Any], str]:
    a, b = rng.randint(2, 99), rng.randint(2, 99)
    op = rng.choice("+-*")
    words = {"+": "plus", "-": "minus", "*": "times"}
    return {"expr": f"{a}{op}{b}"}, f"Use the Calculator to work out {a} {words[op]} {b}"


def _calc_goal(phone: Phone, p: dict[str, Any]) -> bool:
    return phone.calc_done and phone.calc == evaluate(p["expr"])


def _calc_plan(phone: Phone, p: dict[str, Any]) -> GoldStep | None:
    if _calc_goal(phone, p):
        return None
    step = to_screen(phone, ("calculator",))
    if step:
        return step
    expr = p["expr"]
    typed = "" if phone.calc_done else phone.calc
    if typed == expr:
        key = "="
    elif expr.startswith(typed) and phone.calc != "Error":
        key = expr[len(typed)]
    else:
        key = "C"
    names = {"/": "divide", "*": "multiply", "-": "minus", "+": "plus", "=": "equals", "C": "clear"}
    return tap_id(phone, f"calc_{names.get(key, key)}", f"Tap '{key}'")


FAMILIES: dict[str, Family] = {f.name: f for f in (
    Family("settings_toggle", "settings", _settings_make, lambda ph, p: ph.settings[p["key"]] == p["on"],
           _settings_plan),
    Family("send_message", "messages", _message_make, _message_goal, _message_plan),
    Family("open_contact", "contacts", _contact_make, lambda ph, p: ph.route == ("contact", p["name"]), _contact_plan),
    Family("open_note", "notes", _open_note_make, lambda ph, p: ph.route == ("note", p["title"]),
           lambda ph, p: _go_to_note(ph, p["title"])),
    Family("create_note", "notes", _new_note_make, lambda ph, p: (p["title"], p["body"]) in ph.notes, _new_note_plan),
    Family("maps_search", "maps", _maps_make, lambda ph, p: ph.maps_query == p["query"], _maps_plan),
    Family("set_alarm", "clock", _alarm_make, lambda ph, p: (p["time"], True) in ph.alarms, _alarm_plan),
    Family("toggle_alarm", "clock", _alarm_toggle_make, lambda ph, p: (p["time"], p["on"]) in ph.alarms,
           _alarm_toggle_plan),
    Family("calculator", "calculator", _calc_make, _calc_goal, _calc_plan),
    Family("delete_note", "notes", _delete_note_make, lambda ph, p: all(t != p["title"] for t, _ in ph.notes),
           _delete_note_plan),
    *CURRICULUM,
    *MULTI_STEP,
)}

#: Families never trained on (``test_family``): a whole app (Calculator) and a new family of a seen app.
HELD_OUT_FAMILIES: tuple[str, ...] = ("calculator", "delete_note")
APP_FAMILIES: tuple[str, ...] = tuple(f for f in FAMILIES if f not in (*CURRICULUM_FAMILIES, *MULTI_STEP_FAMILIES))
TRAIN_FAMILIES: tuple[str, ...] = tuple(f for f in APP_FAMILIES if f not in HELD_OUT_FAMILIES)
#: split -> (families, first seed, tasks per family), listed family by family. Seed ranges never overlap, so a
#: seed names one split.
SPLITS: dict[str, tuple[tuple[str, ...], int, int]] = {
    "train": (TRAIN_FAMILIES, 0, 60),
    "test_seed": (TRAIN_FAMILIES, 100_000, 15),
    "val_seed": (TRAIN_FAMILIES, 150_000, 15),
    "test_family": (HELD_OUT_FAMILIES, 200_000, 30),
}
#: The curriculum's splits: (families, first seed, seeds), listed seed by seed (every family on a seed).
CURRICULUM_SPLITS: dict[str, tuple[tuple[str, ...], int, int]] = {
    "curriculum_train": (CURRICULUM_FAMILIES, 1_000_000, 5_000),
    "curriculum_val": (CURRICULUM_FAMILIES, 2_000_000, 200),
    "curriculum_test": (CURRICULUM_FAMILIES, 3_000_000, 200),
    # the agent curriculum (multi-step families and their one-step parts), on seeds of its own
    "agent_train": (AGENT_FAMILIES, 4_000_000, 5_000),
    "agent_val": (AGENT_FAMILIES, 5_000_000, 200),
    "agent_test": (AGENT_FAMILIES, 6_000_000, 200),
}
SPLIT_NAMES: tuple[str, ...] = (*SPLITS, "test", *CURRICULUM_SPLITS)


def split_of(family: str, seed: int) -> str:
    for name, (families, first, count) in {**SPLITS, **CURRICULUM_SPLITS}.items():
        if family in families and first <= seed < first + count:
            return name
    return "extra"  # a valid task outside the registry (any seed works)


def make_task(family: str, seed: int) -> TaskSpec:
    """The task of ``family`` on layout ``seed`` (deterministic)."""
    if family not in FAMILIES:
        raise ValueError(f"unknown task family {quoted(family)}; known: {sorted(FAMILIES)}")
    fam = FAMILIES[family]
    content = make_content(seed)
    rng = random.Random(f"task:{family}:{seed}")
    params, instruction = fam.make(rng, content)
    screen = fam.screen  # a fixed screen comes at the default font size, its start set by the family's setup
    if screen is None:
        screen = "galaxy_tab_s8" if rng.random() < 0.12 else rng.choice(PHONE_SCREENS)
        params["start"] = rng.choice(WORKING_APPS) if rng.random() < 0.3 else "home"
    theme = rng.choice(THEMES)
    font_scale = rng.choice(FONT_SCALES) if fam.screen is None else 1.0
    return TaskSpec(id=f"{family}-{seed}", family=family, app=fam.app, seed=seed, split=split_of(family, seed),
                    screen=screen, theme=theme, font_scale=font_scale, instruction=instruction, params=params)


def get_task(task_id: str) -> TaskSpec:
    """Parse ``"<family>-<seed>"``; raises ValueError naming what is wrong."""
    family, _, seed = task_id.rpartition("-")
    if not family or not seed.isdigit():
        raise ValueError(f"task id {quoted(task_id)} is not '<family>-<seed>' (e.g. 'settings_toggle-3')")
    return make_task(family, int(seed))


def task_variants(task: TaskSpec, k: int) -> list[tuple[int, TaskSpec]]:
    """Up to ``k`` other tasks on ``task``'s start screen (its family's ``variants``: another direction, phrase,
    tile or app), drawn by the task id: ``(variant index, task)``, same id, seed and screen. [] when ``k`` <= 0 or
    the family has no variants."""
    family = FAMILIES[task.family]
    if k <= 0 or family.variants is None:
        return []
    options = list(enumerate(family.variants(task.params, make_content(task.seed))))
    return [(j, task.model_copy(update={"params": params, "instruction": instruction}))
            for j, (params, instruction) in random.Random(f"{task.id}/variants").sample(options, min(k, len(options)))]


def list_tasks(split: str = "train", n: int | None = None, families: Sequence[str] | None = None,
               skip: int = 0) -> list[TaskSpec]:
    """The tasks of ``split`` (see the module docstring), or its first ``n``; with ``families``, only the tasks of
    those families, in the split's order (``n`` counts them); ``skip`` leaves out the first ``skip`` of those (the
    curriculum's splits list seed by seed, so skipping K tasks of F families skips K / F layout seeds). ValueError
    names an unknown split, or a family the split does not have."""
    if split in CURRICULUM_SPLITS:
        names, first, count = CURRICULUM_SPLITS[split]
        ids: Iterable[tuple[str, int]] = ((f, s) for s in range(first, first + count) for f in names)
    elif split in SPLITS or split == "test":
        parts = [SPLITS[p] for p in (("test_seed", "test_family") if split == "test" else (split,))]
        names = tuple(f for fams, _, _ in parts for f in fams)
        ids = ((f, s) for fams, first, count in parts for f in fams for s in range(first, first + count))
    else:
        raise ValueError(f"unknown split {quoted(split)}; known: {', '.join(SPLIT_NAMES)}")
    if families is not None:
        unknown = [f for f in families if f not in names]
        if unknown:
            raise ValueError(f"split {quoted(split)} has no task family {bounded(', '.join(unknown))}; it has: {', '.join(names)}")
        ids = ((f, s) for f, s in ids if f in families)
    return [make_task(f, s) for f, s in islice(ids, skip, None if n is None else skip + n)]


__all__ = ["APP_FAMILIES", "CURRICULUM_SPLITS", "FAMILIES", "HELD_OUT_FAMILIES", "SPLITS", "SPLIT_NAMES", "TRAIN_FAMILIES", "Family", "GoldStep",
           "TaskSpec", "get_task", "list_tasks", "make_task", "split_of", "task_variants"]
