"""An embedding's step of the pass as text, with its numbers: the gather forward (each index picks
a row of W, a row of the output is those rows side by side) and the scatter-add backward (each
slice of dout is added into the row of dW its index picked, so a row picked at several positions
gets the sum of their gradients, micrograd's ``+=``).

N = rows, T = context, E = embedding dim, V = vocabulary.
"""

import numpy as np

from ..datasets.vocabulary import Vocabulary
from ..layers.registry import row_of

ROWS_SHOWN = 2  # rows of the batch whose lookups are spelled out
SLICES_SHOWN = 4  # slices of dout shown adding into one row of dW


def _values(a: np.ndarray, shown: int = 6) -> str:
    text = " ".join(f"{v + 0.0:9.4g}" for v in a[:shown])  # + 0.0: no -0
    return text + (f"  ... ({a.size} values)" if a.size > shown else "")


def _token(index: int, vocabulary: Vocabulary | None) -> str:
    return f"{index} ({vocabulary.label(index)!r})" if vocabulary else str(index)


def lookup_forward(step, pad: str, vocabulary: Vocabulary | None) -> list[str]:
    """The gather: x (N, T) indices pick rows of W (V, E); out (N, T * E) puts them side by side."""
    layer, x = step.layer, step.x.astype(np.int64)  # (N, T)
    E, W, formulas = layer.dim, layer.params["W"], row_of(layer).formulas
    lines = [f"  {pad}{step.name} {step.type}: {formulas.forward}",
             f"  {pad}    x {tuple(x.shape)} indices, W {tuple(W.shape)} -> out {tuple(step.out.shape)}: "
             f"each index picks a row of W, {E} values, and a row of out is its {x.shape[1]} rows side by side"]
    for n in range(min(len(x), ROWS_SHOWN)):
        chars = f" = {''.join(vocabulary.label(i) for i in x[n])!r}" if vocabulary else ""
        lines.append(f"  {pad}    x[{n}] = {list(map(int, x[n]))}{chars}:  out[{n}] = "
                     + " | ".join(f"W[{i}]" for i in x[n]))
        for i in dict.fromkeys(int(i) for i in x[n]):  # each row once, in order of first use
            lines.append(f"  {pad}      W[{_token(i, vocabulary)}] = {_values(W[i])}")
    if len(x) > ROWS_SHOWN:
        lines.append(f"  {pad}    ... ({len(x)} rows)")
    return lines


def lookup_backward(step, pad: str, vocabulary: Vocabulary | None, check_text) -> list[str]:
    """The scatter-add: each (row n, position t) adds its slice of dout into dW[x[n, t]]; shown
    for the row of W the batch used most, whose gradient is the sum of several slices."""
    layer, x, dout, dW = step.layer, step.x.astype(np.int64), step.dout, step.grads["W"]
    E, formulas = layer.dim, row_of(layer).formulas
    lines = [f"  {pad}{step.name} {step.type}",
             f"  {pad}  fwd: {formulas.forward}  =>  {formulas.backward['W']}",
             f"  {pad}    dout {tuple(dout.shape)} -> dW {tuple(dW.shape)}, |dW| = {np.linalg.norm(dW):.4g}: slice t "
             f"of dout[n] (columns t*{E} .. t*{E}+{E - 1}) is added into row x[n, t] of dW (onehot(x).T @ dout)"]
    uses = np.bincount(x.ravel(), minlength=layer.vocab)  # (V,) positions that picked each row
    v = int(np.argmax(uses))
    where = np.argwhere(x == v)  # (uses, 2): (n, t) of every use
    lines.append(f"  {pad}    row {_token(v, vocabulary)} was picked at {uses[v]} position(s) of the batch, so dW[{v}] "
                 "is the sum of their slices: a gradient for every use, added, never overwritten (the += "
                 "of micrograd; dW[x] += dout would keep one)")
    names = [f"dout[{n}, {t * E}:{t * E + E}]" for n, t in where[:SLICES_SHOWN]]
    width = max(len(name) for name in [*names, f"dW[{v}]"])
    for name, (n, t) in zip(names, where):
        lines.append(f"  {pad}      {name:<{width}} = {_values(dout[n, t * E:t * E + E])}")
    if len(where) > SLICES_SHOWN:
        lines.append(f"  {pad}      ... ({len(where) - SLICES_SHOWN} more slices)")
    lines.append(f"  {pad}      {f'dW[{v}]':<{width}} = {_values(dW[v])}  (the sum of all {len(where)} slices)")
    unused = int((uses == 0).sum())
    if unused:
        lines.append(f"  {pad}    the {unused} row(s) of W no position picked get dW = 0")
    if "W" in step.checks:
        lines.append(f"  {pad}    {check_text(step.checks['W'])}")
    lines.append(f"  {pad}  fwd: {formulas.forward}  =>  {formulas.backward['dx']}: an index cannot "
                 "change a little, so the pass stops here")
    return lines
