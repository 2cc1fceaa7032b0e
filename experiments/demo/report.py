"""The demo's helpers and report (experiments/demo/run.py calls them).

    python experiments/demo/report.py concat OUT.parquet A.parquet B.parquet   # held-out splits -> one file
    python experiments/demo/report.py score PRED.jsonl HELDOUT_VLMR1.jsonl OUT.jsonl

``score`` gives each prediction GUI-R1's r1gui reward as the GRPO recipe weighs it (its ``reward_funcs``,
``reward_weights`` and ``GUI_REWARD_OPTIONS``, read from the recipe file), through the same ``core.rewards`` function
trl calls, so "held-out mean reward" means the reward GRPO optimised.
:func:`write_report` writes ``report.md``, ``report.json`` and ``plots/`` into the demo's output folder.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from core.markdown import md_code, md_text  # the one owner of untrusted text in Markdown

sys.path.insert(0, str(Path(__file__).resolve().parent))
import curriculum  # noqa: E402  (experiments/demo/curriculum.py)
import sharpen  # noqa: E402  (experiments/demo/sharpen.py)

ROOT = Path(__file__).resolve().parents[2]
STAGES = ("before_sft", "after_sft", "after_grpo")
#: The trivial baselines, evaluated like a stage (``gui-agent infer --backend baseline`` + ``rollout --policy``).
BASELINES = ("random", "centre")
BENCHMARK = "androidcontrol_high"
GRPO_RECIPE = ROOT / "recipes/qwen2_5_vl_3b/grpo/config_guir1_trl.yaml"
#: trl's console log dict of one logging step (``{'loss': '0.1', 'rewards/r1gui_format/mean': '0.3', ...}``) and
#: one reward function's mean in it.
_LOG_DICT_RE = re.compile(r"\{'loss'[^{}]*\}")
_REWARD_MEAN_RE = re.compile(r"'rewards/([\w.-]+)/mean': '?(-?[0-9.]+(?:e-?[0-9]+)?)'?")


def concat(out: Path, *parts: Path) -> None:
    """Concatenate unified parquet files (same schema) into ``out``, written atomically."""
    import pyarrow.parquet as pq

    from core.io import atomic_path

    tables = [pq.read_table(p) for p in parts]
    import pyarrow as pa

    with atomic_path(out) as tmp:
        pq.write_table(pa.concat_tables(tables, promote_options="default"), tmp)


def recipe_reward() -> tuple[list[str], list[float], dict]:
    """The GRPO recipe's reward functions, weights and ``GUI_REWARD_OPTIONS``."""
    import yaml

    recipe = yaml.safe_load(GRPO_RECIPE.read_text())
    options = json.loads(recipe.get("env", {}).get("GUI_REWARD_OPTIONS", "{}"))
    funcs = list(recipe["reward_funcs"])
    return funcs, list(recipe.get("reward_weights") or [1.0] * len(funcs)), options


def score(pred_file: Path, heldout_vlmr1: Path, out: Path) -> None:
    """Write one row per prediction: ``id``, ``reward`` (weighted sum) and each part; gold rows matched by ``id``."""
    from core.io import atomic_write_text
    from core.rewards.adapters import score_columns

    preds = [json.loads(line) for line in pred_file.read_text(encoding="utf-8").splitlines() if line.strip()]
    gold = [json.loads(line) for line in heldout_vlmr1.read_text(encoding="utf-8").splitlines() if line.strip()]
    by_id = {g["id"]: g for g in gold}
    missing = [p.get("id") for p in preds if p.get("id") not in by_id]
    if missing or len(preds) != len(gold):
        raise SystemExit(f"score: {pred_file} ({len(preds)} rows) does not match {heldout_vlmr1} ({len(gold)} rows); "
                         f"ids not found: {missing[:3]}")
    gold = [by_id[p["id"]] for p in preds]
    funcs, weights, options = recipe_reward()
    completions = [p.get("pred") or "" for p in preds]
    columns = {"ground_truth": [g["ground_truth"] for g in gold], "extra_info": [g.get("extra_info") for g in gold]}
    parts = {f: score_columns(f, completions, columns, options) for f in funcs}
    rows = []
    for i, p in enumerate(preds):
        row = {"id": p.get("id"), **{f: parts[f][i] for f in funcs}}
        row["reward"] = sum(w * parts[f][i] for f, w in zip(funcs, weights, strict=True))
        rows.append(row)
    atomic_write_text(out, "".join(json.dumps(r) + "\n" for r in rows))


def _jsonl(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def stage_numbers(out: Path, stage: str) -> dict[str, Any]:
    """The numbers of one evaluated stage (see README "The learning demo" for each key)."""
    sdir = out / "stages_out" / stage
    preds = _jsonl(sdir / "predictions" / f"{BENCHMARK}_test.json")
    scored = _jsonl(sdir / "scored.jsonl")
    rollout = json.loads((sdir / "rollout" / "summary.json").read_text())
    metrics = {}
    for mode in ("strict", "guir1"):
        rep = json.loads((sdir / "eval" / mode / "report.json").read_text())
        res = rep.get("results", {}).get(BENCHMARK, {}).get("metrics", {})
        metrics[mode] = {k: res.get(k) for k in ("type", "gr", "sr")}
    n = len(preds)
    return {
        "n": n,
        "valid_rate": sum(bool(p.get("parse_ok")) for p in preds) / n if n else 0.0,
        "eval": metrics,
        "mean_reward": _mean([r["reward"] for r in scored]),
        "online": {k: rollout.get(k) for k in ("success_rate", "episodes", "mean_steps", "invalid_rate")},
        "online_success_rate": rollout.get("success_rate"),
    }


def sft_loss_curve(out: Path) -> list[tuple[int, float]]:
    """``(step, loss)`` from LLaMA-Factory's ``trainer_log.jsonl``."""
    rows = _jsonl(out / "models" / "sft-llamafactory" / "trainer_log.jsonl")
    return [(int(r["current_steps"]), float(r["loss"])) for r in rows if r.get("loss") is not None]


#: The folder of a run's stage records (``<out>/stages``).
STAGE_RECORDS = "stages"


def stage_record(out: Path, name: str) -> Path:
    """The file run.py's stage bookkeeping writes when stage ``name`` finishes: its settings hash, wall and CPU
    seconds (``<out>/stages/<name>.json``)."""
    return out / STAGE_RECORDS / f"{name}.json"


def stage_key(settings: Any) -> str:
    """The hash of a stage's settings that run.py's bookkeeping records (``key``): a stage is reused only when the
    settings it would be built with hash the same (``make demo-seeds`` reads the model stage's to tell a folder's
    seed)."""
    import hashlib

    return hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()[:16]


def model_settings(cfg: dict[str, Any]) -> dict[str, Any]:
    """The settings of the model stage of a profile's config ``cfg``: the training seed and the tiny model's."""
    return {"seed": cfg["seed"], "model": cfg["model"]}


def stage_records(out: Path) -> dict[str, dict]:
    """Every finished stage's record by stage name (``sft``, ``sharpen/train_grpo``, ...)."""
    base = out / STAGE_RECORDS
    return {p.relative_to(base).with_suffix("").as_posix(): json.loads(p.read_text()) for p in base.rglob("*.json")}


def grpo_reward_parts(out: Path, run: str = "r1gui", funcs: list[str] | None = None) -> dict[str, list[float]]:
    """Each reward function's mean over the completions of every logging step of GRPO run ``run``
    (``rewards/<name>/mean`` in trl's console log, one dict per step, in order)."""
    path = out / "logs" / f"grpo_{run}.log"
    funcs = funcs or recipe_reward()[0]
    parts: dict[str, list[float]] = {f: [] for f in funcs}
    if not path.is_file():
        return parts
    for entry in _LOG_DICT_RE.findall(path.read_text(encoding="utf-8", errors="replace")):
        means = {m.group(1): float(m.group(2)) for m in _REWARD_MEAN_RE.finditer(entry)}
        if all(f in means for f in funcs):
            for f in funcs:
                parts[f].append(means[f])
    return parts


def grpo_reward_curve(parts: dict[str, list[float]]) -> list[tuple[int, float]]:
    """``(step, mean r1gui reward)``: the recipe's weighted sum of the parts, the reward GRPO optimised (trl's own
    ``reward`` log entry is the UNweighted sum of the functions, 0..2 here, so it is not used)."""
    funcs, weights, _ = recipe_reward()
    steps = len(parts[funcs[0]]) if funcs else 0
    return [(i + 1, sum(w * parts[f][i] for f, w in zip(funcs, weights, strict=True))) for i in range(steps)]


def sharpen_training_reward(out: Path) -> dict[str, list[float]]:
    """The sharpening GRPO runs' r1gui reward per step (``{run: [reward, ...]}``, 0..1)."""
    return {name: [r for _, r in grpo_reward_curve(grpo_reward_parts(out, f"sharpen_{name}"))]
            for name in sharpen.GRPO_RUNS}


def _plot(points: list[tuple[int, float]], title: str, ylabel: str, path: Path) -> str | None:
    if not points:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3))
    ax.plot([p[0] for p in points], [p[1] for p in points], marker=".")
    ax.set_title(title)
    ax.set_xlabel("step")
    ax.set_ylabel(ylabel)
    return curriculum.save_figure(fig, [ax], path)


def _pct(x: float | None) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.1f}%"


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def fmt_point(p: Any) -> str:
    """A point or box with at most one decimal; the format's ``-100`` sentinel or nothing as "no point"."""
    if not isinstance(p, list | tuple) or not p or any(not isinstance(v, int | float) for v in p):
        return "no point"
    if all(v == -100 for v in p):
        return "no point"
    return "[" + ", ".join(f"{v:.1f}".rstrip("0").rstrip(".") for v in p) + "]"


def diagnosis(preds: list[dict], accuracy: list[float] | None = None) -> str:
    """In words, what a model's answers on the held-out screens have in common (why a stage failed or succeeded):
    unparseable answers, the same action or point on every screen, or how often each action type was answered."""
    n = len(preds)
    if not n:
        return "no answers"
    valid = [p for p in preds if p.get("parse_ok")]
    if not valid:
        errors = Counter(str(p.get("parse_error") or p.get("error") or "no answer")[:60] for p in preds)
        return f"no answer parsed as an action (most common: {errors.most_common(1)[0][0]})"
    words = []
    if len(valid) < n:
        words.append(f"{n - len(valid)} of {n} answers did not parse")
    actions = Counter(p.get("pred_action") for p in valid)
    points = Counter(fmt_point(p.get("pred_coord")) for p in valid if p.get("pred_action") == "click")
    if len(actions) == 1:
        where = "on every screen" if len(valid) == n else "in every parsed answer"
        words.append(f"the same action {next(iter(actions))!r} {where}")
    else:
        words.append("actions " + ", ".join(f"{a} {c}" for a, c in actions.most_common(4)))
    if points and len(points) == 1 and sum(points.values()) > 1:
        words.append(f"the same point {next(iter(points))} on every click")
    elif points:
        top, count = points.most_common(1)[0]
        if count > 1 and count >= 0.5 * sum(points.values()):
            words.append(f"{count} of {sum(points.values())} clicks at the same point {top}")
    if accuracy is not None:
        words.append(f"{int(sum(accuracy))} of {len(accuracy)} answers right by GUI-R1's rule")
    return "; ".join(words)


def failures(out: Path, stage: str, k: int = 8) -> list[dict]:
    """The first ``k`` held-out rows of ``stage`` whose answer was invalid or earned less than full reward."""
    sdir = out / "stages_out" / stage
    preds = _jsonl(sdir / "predictions" / f"{BENCHMARK}_test.json")
    scored = _jsonl(sdir / "scored.jsonl")
    rows = []
    for p, s in zip(preds, scored, strict=False):
        if not p.get("parse_ok") or s["reward"] < 1.0:
            rows.append({"id": p.get("id"), "instruction": p.get("instruction"), "gold": p.get("gt_action"),
                         "gt_bbox": fmt_point(p.get("gt_bbox")), "pred": (p.get("pred") or "")[:160],
                         "why": p.get("parse_error") or f"reward {s['reward']:.2f}"})
        if len(rows) >= k:
            break
    return rows


def curriculum_section(out: Path) -> dict[str, Any]:
    """report.json's ``curriculum`` section (names in README "The learning demo"): every stage's accuracy on the
    same test screens with its 95% interval and per family, each GRPO run's paired gain over its SFT start, online
    success, the validation learning curves, and in words what each stage answered."""
    base = out / "curriculum"
    rows = {st: curriculum.row_accuracy(base / st / "scored.jsonl") for st in curriculum.STAGES}
    ids0 = rows["after_sft"][0]
    if any(r[0] != ids0 for r in rows.values()):
        raise SystemExit("report: the curriculum stages did not answer the same screens in the same order")
    curves = {"sft": _json(out / "curves" / "sft.json") or [],
              **{r: _json(out / "curves" / f"grpo_{r}.json") or [] for r in curriculum.GRPO_RUNS}}
    # The better real GRPO run is chosen on the VALIDATION split (its last curve point), never on the test screens.
    best = max(curriculum.REAL_GRPO_RUNS, key=lambda r: curves[r][-1][1] if curves[r] else -1.0)
    online = {st: json.loads((base / st / "rollout" / "summary.json").read_text()) for st in curriculum.STAGES}
    stages = {}
    for st in curriculum.STAGES:
        ids, acc, fams = rows[st]
        preds = _jsonl(base / st / "predictions" / f"{BENCHMARK}_test.json")
        stages[st] = {**curriculum.stage_summary(ids, acc, fams), "diagnosis": diagnosis(preds, acc),
                      "online_success": online[st].get("success_rate")}
    sft_acc = rows["after_sft"][1]
    gains = {f"grpo_{r}": curriculum.paired_gain(rows[f"after_grpo_{r}"][1], sft_acc) for r in curriculum.GRPO_RUNS}
    return {
        "n_heldout": len(ids0),
        "n_episodes": online["after_sft"].get("episodes"),
        "stages": stages,
        "gains": gains,
        "online_success": {"random": online["random"].get("success_rate"),
                           "after_sft": online["after_sft"].get("success_rate"),
                           "after_grpo_best": online[f"after_grpo_{best}"].get("success_rate")},
        "best_grpo_run": best,
        "curves": curves,
    }


def _json(path: Path) -> Any:
    return json.loads(path.read_text()) if path.is_file() else None


def _ci(ci: list[float] | None) -> str:
    return "-" if not ci else f"[{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


def curriculum_markdown(c: dict[str, Any], plot: str | None) -> list[str]:
    """The curriculum tables (overall with intervals, per family, paired gains) and the learning-curve plot."""
    fams = sorted({f for st in c["stages"].values() for f in st["per_family"]})
    lines = ["## Curriculum: does training work?", "",
             f"{c['n_heldout']} test screens of `curriculum_test` (layout seeds never trained or tuned on) and "
             f"{c['n_episodes']} online episodes. Accuracy is GUI-R1's rule (action type; click inside the gold box; "
             "typed text token F1 >= 0.5), in %, with 95% bootstrap intervals over screens. Every GRPO run starts "
             "from the same SFT checkpoint with the same budget; `shuffled` is the control whose rewards are "
             "permuted within each batch.", "",
             "| stage | accuracy | 95% interval | online success | what it answered |", "|---|---|---|---|---|"]
    for name, st in c["stages"].items():
        lines.append(f"| {name} | {_pct(st['accuracy'])} | {_ci(st['ci95'])} | {_pct(st['online_success'])} | "
                     f"{md_text(st['diagnosis'])} |")
    lines += ["", "Gain of each GRPO run over its SFT start on the same screens (paired bootstrap, points):", "",
              "| run | gain | 95% interval |", "|---|---|---|"]
    for name, g in c["gains"].items():
        mean = "-" if g["mean"] is None else f"{100 * g['mean']:+.1f}"
        lines.append(f"| {name} | {mean} | {_ci(g['ci95'])} |")
    lines += ["", "Per task family (accuracy %):", "", "| stage | " + " | ".join(fams) + " |",
              "|---|" + "---|" * len(fams)]
    for name, st in c["stages"].items():
        lines.append(f"| {name} | " + " | ".join(_pct(st["per_family"].get(f)) for f in fams) + " |")
    lines += ["", f"Online success of the better real GRPO run (`{c['best_grpo_run']}`, chosen on the validation "
              "split) is `online_success.after_grpo_best` in report.json.", ""]
    if plot:
        lines += [f"![validation accuracy during SFT and GRPO]({plot})", ""]
    return lines


def sharpening_markdown(sh: dict[str, Any], plot: str | None) -> list[str]:
    """The sharpening tables: each stage on the sharpened families and on the whole curriculum, and the paired
    gains over the start."""
    fams = ", ".join(f"`{f}`" for f in sh["families"])
    lines = ["## Sharpening: GRPO from a partly trained start", "",
             f"Start: {md_text(sh['start'])}. Three runs from it: GRPO with GUI-R1's reward, the same GRPO with the "
             "rewards shuffled within each batch (control), and SFT continued on the same prompts' gold answers (the "
             f"CPU seconds each trained are listed). Measured on {sh['n_family_screens']} test screens of {fams} "
             f"(every instruction of a screen) and the {sh['n_heldout']} curriculum test screens; accuracy in %, 95% "
             "bootstrap intervals.", "",
             "| stage | sharpened families | 95% interval | whole curriculum | 95% interval | training CPU s |",
             "|---|---|---|---|---|---|"]
    for name, st in sh["stages"].items():
        cpu = "-" if st["cpu_s"] is None else f"{st['cpu_s']:.0f}"
        lines.append(f"| {name} | {_pct(st['family_accuracy'])} | {_ci(st['family_ci95'])} | {_pct(st['accuracy'])} "
                     f"| {_ci(st['ci95'])} | {cpu} |")
    lines += ["", "Paired gain over the start on the same screens (points):", "",
              "| run | sharpened families | 95% interval | whole curriculum | 95% interval |", "|---|---|---|---|---|"]
    for name, g in sh["gains"].items():
        f, w = g["family"], g["whole"]
        lines.append(f"| {name} | {100 * f['mean']:+.1f} | {_ci(f['ci95'])} | {100 * w['mean']:+.1f} | "
                     f"{_ci(w['ci95'])} |")
    lines.append("")
    if plot:
        lines += [f"![validation accuracy on the sharpened families during each run]({plot})", ""]
    return lines


def write_report(out: Path, *, profile: str, times: dict, real: dict[str, Path], total_s: float) -> Path:
    """Write ``report.json``, ``report.md`` and ``plots/`` into ``out``; returns ``out``."""
    from core.io import atomic_write_text

    stages = {}
    for st in STAGES:
        stages[st] = {**stage_numbers(out, st), "wall_s": times.get(st, {}).get("wall_s")}
    baselines = {p: stage_numbers(out, f"baselines/{p}") for p in BASELINES}
    parts = grpo_reward_parts(out)
    loss, reward = sft_loss_curve(out), grpo_reward_curve(parts)
    loss_png = _plot(loss, "SFT loss (LLaMA-Factory)", "loss", out / "plots" / "sft_loss.png")
    reward_png = _plot(reward, "GRPO mean reward (trl, r1gui)", "reward", out / "plots" / "grpo_reward.png")
    cur = curriculum_section(out)
    curve_png = curriculum.plot_curves(cur["curves"], cur["stages"]["random"]["accuracy"],
                                       out / "plots" / "curriculum_curves.png")
    sharpening = sharpen.section(out, times, sharpen_training_reward(out))
    sharpen_png = None
    if sharpening is not None:
        cur["sharpening"] = sharpening
        sharpen_png = sharpen.plot(sharpening["curves"], out / "plots" / "sharpening_curves.png")
    report = {
        "profile": profile,
        "benchmark": BENCHMARK,
        "real_data": [str(p) for p in real.values()] or None,
        "stages": stages,
        "baselines": baselines,
        "training": {"sft": {"wall_s": times.get("sft", {}).get("wall_s"), "loss": loss},
                     "grpo": {"wall_s": times.get("grpo", {}).get("wall_s"), "reward": reward, "parts": parts}},
        "curriculum": cur,
        "times": times,
        "total_wall_s": round(total_s, 1),
    }
    atomic_write_text(out / "report.json", json.dumps(report, indent=2) + "\n")

    s = stages
    lines = [f"# Demo: a tiny Qwen2.5-VL learns the simulated phone (profile `{profile}`)", "",
             *curriculum_markdown(cur, curve_png),
             *(sharpening_markdown(cur["sharpening"], sharpen_png) if "sharpening" in cur else []),
             "## Realistic phone screens", "",
             f"Held-out screens: {s['before_sft']['n']} `high` steps of the simulated phone's held-out tasks "
             "(layout seeds and task families never trained on), scored as "
             f"`{BENCHMARK}`; online: `gui-agent rollout --tasks test`. "
             "SFT data: simulated phone train tasks + the curriculum's train tasks"
             f"{''.join(f' + {p}' for p in real.values())}; GRPO data: the curriculum's train tasks; after_grpo is "
             "the r1gui GRPO run.", "",
             "| | valid actions | n | strict Type | strict SR | guir1 Type | guir1 SR | mean r1gui reward | "
             "online success | online invalid | wall |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    rows = [(st, s[st]) for st in STAGES] + [(f"baseline: {p} policy", b) for p, b in baselines.items()]
    for name, x in rows:
        e = x["eval"]
        lines.append(f"| {name} | {_pct(x['valid_rate'])} | {x['n']} | {_pct(e['strict'].get('type'))} | "
                     f"{_pct(e['strict'].get('sr'))} | {_pct(e['guir1'].get('type'))} | {_pct(e['guir1'].get('sr'))} | "
                     f"{_num(x['mean_reward'])} | {_pct(x['online_success_rate'])} | {_pct(x['online']['invalid_rate'])} "
                     f"| {str(x['wall_s']) + ' s' if 'wall_s' in x else ''} |")
    lines += ["", "What each model answered on these screens:", ""]
    for name in STAGES:
        preds = _jsonl(out / "stages_out" / name / "predictions" / f"{BENCHMARK}_test.json")
        lines.append(f"- {name}: {md_text(diagnosis(preds))}")
    delta = None
    if s["after_sft"]["mean_reward"] is not None and s["after_grpo"]["mean_reward"] is not None:
        delta = s["after_grpo"]["mean_reward"] - s["after_sft"]["mean_reward"]
    lines += ["", f"GRPO vs its SFT start, mean r1gui reward on the held-out screens: "
              f"{_num(s['after_sft']['mean_reward'])} -> {_num(s['after_grpo']['mean_reward'])} "
              f"({'-' if delta is None else f'{delta:+.3f}'}).", ""]
    for png, what in ((loss_png, "SFT loss"), (reward_png, "GRPO reward")):
        if png:
            lines.append(f"![{what}]({png})")
    lines += ["", "Stage times (s, wall / cpu): " + ", ".join(
        f"{k} {v['wall_s']} / {v.get('cpu_s')}{' (reused)' if v['reused'] else ''}" for k, v in times.items()) +
              f"; {sum(v['wall_s'] for v in times.values()):.0f} s wall "
              f"({sum(v.get('cpu_s') or 0 for v in times.values()):.0f} s CPU) to build in all, {total_s:.0f} s this run.",
              "",
              "## Failures after GRPO (held-out screens)", "",
              "Every failed screen with its gold box and predicted point: "
              f"[failure gallery](stages_out/after_grpo/eval/strict/gallery/{BENCHMARK}/index.html); episodes step "
              "by step: [episode gallery](stages_out/after_grpo/rollout/gallery/index.html).", "",
              "| id | instruction | gold | answer | why |", "|---|---|---|---|---|"]
    for f in failures(out, "after_grpo"):
        lines.append(f"| {md_text(f['id'])} | {md_text(f['instruction'])} | {md_text(f['gold'])} "
                     f"{md_text(f['gt_bbox'])} | {md_code(f['pred'])} | {md_text(f['why'])} |")
    atomic_write_text(out / "report.md", "\n".join(lines) + "\n")
    return out


if __name__ == "__main__":
    cmd, *rest = sys.argv[1:] or ["help"]
    if cmd == "concat" and len(rest) >= 2:
        concat(Path(rest[0]), *map(Path, rest[1:]))
    elif cmd == "score" and len(rest) == 3:
        score(*map(Path, rest))
    else:
        raise SystemExit(__doc__)
