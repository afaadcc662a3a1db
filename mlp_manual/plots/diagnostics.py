"""Figures for looking inside training: gradient norms, update ratios, activations, and the
learning-rate sweep."""

from collections import defaultdict

import matplotlib.pyplot as plt

from .curves import save


def _series(rows, stat):
    """{tensor: ([steps], [values])} for one statistic of the diagnostics rows."""
    out = defaultdict(lambda: ([], []))
    for step, _, tensor, s, value in rows:
        if s == stat:
            out[tensor][0].append(step)
            out[tensor][1].append(value)
    return out


def plot_diagnostics(rows, run_dir, name: str) -> None:
    """grad_norms.png, update_ratio.png and activations.png from diagnostics rows
    (step, layer, tensor, stat, value)."""
    for stat, file, ylabel, ref in (("grad_norm", "grad_norms.png", "gradient norm", None),
                                    ("update_ratio", "update_ratio.png", "||lr * update|| / ||W||", 1e-3)):
        fig, ax = plt.subplots(figsize=(7, 4))
        for tensor, (steps, values) in _series(rows, stat).items():
            ax.plot(steps, [max(v, 1e-30) for v in values], label=tensor, marker="." if len(steps) < 30 else None)
        if ref:
            ax.axhline(ref, color="gray", linestyle=":", label=f"{ref:g} (healthy)")
        ax.set_yscale("log")
        ax.set_xlabel("step")
        ax.set_ylabel(ylabel)
        ax.set_title(f"{name}: {ylabel} per parameter tensor")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7, ncol=2)
        save(fig, run_dir / file)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    means, stds = _series(rows, "act_mean"), _series(rows, "act_std")
    for tensor, (steps, values) in means.items():
        line, = top.plot(steps, values, label=f"{tensor} mean")
        top.plot(stds[tensor][0], stds[tensor][1], linestyle="--", color=line.get_color(), label=f"{tensor} std")
    top.set_ylabel("activation")
    top.set_title(f"{name}: layer outputs")
    top.grid(alpha=0.3)
    top.legend(fontsize=6, ncol=3)
    for stat, style in (("dead_fraction", "-"), ("saturated_fraction", "--")):
        for tensor, (steps, values) in _series(rows, stat).items():
            bottom.plot(steps, values, style, label=f"{tensor} {stat.split('_')[0]}")
    bottom.set_ylim(-0.02, 1.02)
    bottom.set_xlabel("step")
    bottom.set_ylabel("fraction of units")
    bottom.grid(alpha=0.3)
    if bottom.lines:
        bottom.legend(fontsize=7)
    save(fig, run_dir / "activations.png")


def plot_lr_find(lrs, losses, suggested: float, path, name: str) -> None:
    """Smoothed loss against the learning rate (log x), with the suggested rate marked."""
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(lrs, losses)
    ax.axvline(suggested, color="tab:red", linestyle="--", label=f"suggested lr {suggested:.2g}")
    ax.set_xscale("log")
    ax.set_xlabel("learning rate")
    ax.set_ylabel("training loss (smoothed)")
    ax.set_title(f"{name}: learning-rate sweep")
    ax.grid(alpha=0.3, which="both")
    ax.legend()
    save(fig, path)

