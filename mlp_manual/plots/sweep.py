"""Figures of a sweep, from plain lists of trials (``sweep.figures`` gathers them from the study):
the objective per trial with the best so far, the objective against each parameter, how much
each parameter matters, and every trial's curve per epoch.

A trial is a dict: number, state (complete, pruned, failed, running), params {key: value},
value (the objective, or the last value of a pruned trial), curve {epoch: value}.
"""

import math

from .curves import log_scale
from .png import save
from .style import TITLE_Y, epoch_axis, legend_outside, log_axis, new_figure

STYLE = {"complete": {"color": "tab:blue", "marker": "o"}, "pruned": {"color": "tab:orange", "marker": "x"},
         "running": {"color": "tab:green", "marker": "^"}}


def _finite(v) -> bool:
    return v is not None and isinstance(v, (int, float)) and math.isfinite(v)


def plot_history(trials: list[dict], metric: str, direction: str, path, title: str) -> None:
    """The objective of each trial by its number (pruned ones at their last value), and the best
    complete trial so far as a step line."""
    fig, ax = new_figure((6, 4))
    for state, style in STYLE.items():
        points = [(t["number"], t["value"]) for t in trials if t["state"] == state and _finite(t["value"])]
        if points:
            ax.scatter(*zip(*points), s=22, label=f"{state} ({len(points)})", alpha=0.8, **style)
    done = sorted((t["number"], t["value"]) for t in trials if t["state"] == "complete" and _finite(t["value"]))
    if done:
        pick = min if direction == "minimize" else max
        best, steps = [], []
        for number, value in done:
            best.append(value if not best else pick(best[-1], value))
            steps.append(number)
        ax.step(steps + [max(t["number"] for t in trials)], best + best[-1:], where="post", color="black",
                linewidth=1.2, label=f"best so far ({best[-1]:.4g})")
    if log_scale(metric, [t["value"] for t in trials if _finite(t["value"])]):
        log_axis(ax, "y")
    failed = sum(t["state"] == "failed" for t in trials)
    ax.set_xlabel("trial" + (f" ({failed} failed, not shown)" if failed else ""))
    ax.set_ylabel(metric)
    ax.set_title(title, y=TITLE_Y)
    ax.grid(alpha=0.3)
    legend_outside(ax)
    save(fig, path)


def plot_params(trials: list[dict], keys: list[str], metric: str, path, title: str, log_keys=frozenset(),
                choice_keys=frozenset()) -> None:
    """One panel per parameter: the objective of every complete trial (and pruned ones, at their
    last value) against the parameter's value; a log axis for the ``log_keys``, the values of
    the ``choice_keys`` side by side in order."""
    columns = min(len(keys), 3)
    rows = math.ceil(len(keys) / columns)
    fig, axes = new_figure((3.2 * columns, 2.8 * rows), rows, columns, squeeze=False)
    values = [t["value"] for t in trials if _finite(t["value"]) and t["state"] in ("complete", "pruned")]
    for i, ax in enumerate(axes.flat):
        if i >= len(keys):
            ax.set_visible(False)
            continue
        key = keys[i]
        seen = [t["params"][key] for t in trials if key in t["params"]]
        categorical = key in choice_keys or any(not isinstance(v, (int, float)) or isinstance(v, bool) for v in seen)
        order = sorted({repr(v): v for v in seen}.values(), key=_order) if categorical else None
        for state in ("complete", "pruned"):
            points = [(t["params"][key], t["value"]) for t in trials
                      if t["state"] == state and key in t["params"] and _finite(t["value"])]
            if not points:
                continue
            xs, ys = zip(*points)
            if categorical:
                xs = [order.index(x) for x in xs]
            ax.scatter(xs, ys, s=18, alpha=0.8, label=state, **STYLE[state])
        if categorical:
            ax.set_xticks(range(len(order)), [str(v) for v in order], fontsize=8)
        elif key in log_keys:
            log_axis(ax, "x")
        if log_scale(metric, values):
            log_axis(ax, "y")
        ax.set_xlabel(key, fontsize=9)
        if i % columns == 0:
            ax.set_ylabel(metric)
        ax.grid(alpha=0.3)
    labelled = next((ax for ax in axes.flat if ax.get_legend_handles_labels()[1]), None)
    if labelled is not None:  # the states, named once, on the first panel that shows one
        labelled.legend(fontsize=7, loc="best")
    fig.suptitle(title)
    save(fig, path)


def _order(v):
    return (0, v, "") if isinstance(v, (int, float)) and not isinstance(v, bool) else (1, 0, str(v))


def plot_importance(importances: dict[str, float], note: str | None, path, title: str) -> None:
    """A horizontal bar per parameter: its share of the objective's variation (the importances
    sum to 1), the most important at the top; ``note`` says how they were measured, or why
    there is nothing to show yet."""
    fig, ax = new_figure((6, 0.5 + 0.45 * max(len(importances), 2)))
    if importances:
        keys = list(importances)[::-1]
        shares = [importances[k] for k in keys]
        bars = ax.barh(range(len(keys)), shares, color="tab:blue")
        ax.set_yticks(range(len(keys)), keys)
        for bar, share in zip(bars, shares):
            ax.text(bar.get_width() + 0.01, bar.get_y() + bar.get_height() / 2, f"{share:.2f}", va="center",
                    fontsize=8)
        ax.set_xlim(0, 1.1)
        ax.set_xlabel("importance (share of the objective's variation)" + (f"\n{note}" if note else ""), fontsize=9)
    else:
        ax.set_axis_off()
        ax.text(0.0, 0.5, note or "", transform=ax.transAxes, fontsize=9, color="0.25", va="center", ha="left")
    ax.set_title(title, y=TITLE_Y)
    save(fig, path)


def plot_trial_curves(trials: list[dict], metric: str, path, title: str, best_number: int | None = None) -> None:
    """Every trial's objective per epoch: complete trials in blue, pruned ones in orange ending
    in a cross where they were stopped, running ones in green; the best trial in black."""
    fig, ax = new_figure((6, 4))
    shown = {}
    values = []
    best = next((t for t in trials if t["number"] == best_number), None)
    for t in sorted(trials, key=lambda t: t["number"]):
        curve = {e: v for e, v in t["curve"].items() if _finite(v)}
        if not curve or t["state"] not in STYLE:
            continue
        epochs = sorted(curve)
        ys = [curve[e] for e in epochs]
        values += ys
        color = STYLE[t["state"]]["color"]
        label = None if t["state"] in shown else t["state"]
        shown[t["state"]] = True
        ax.plot(epochs, ys, color=color, alpha=0.55, linewidth=0.9, label=label)
        if t["state"] == "pruned":
            ax.plot(epochs[-1:], ys[-1:], linestyle="none", marker="x", color=color, markersize=6)
    if best is not None and best["curve"]:
        epochs = sorted(best["curve"])
        ax.plot(epochs, [best["curve"][e] for e in epochs], color="black", linewidth=1.6,
                label=f"best: trial {best['number']}")
    if log_scale(metric, values):
        log_axis(ax, "y")
    epoch_axis(ax, [e for t in trials for e in t["curve"]] or [1])
    ax.set_ylabel(metric)
    ax.set_title(title, y=TITLE_Y)
    ax.grid(alpha=0.3)
    legend_outside(ax)
    save(fig, path)

