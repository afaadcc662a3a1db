"""A Trace as text: the forward pass layer by layer, the loss and its seed, the backward pass in
reverse order with the formula, shapes, norm, values and finite-difference check of every
gradient, and a closing line counting the gradients that agree.

N = rows, D = features, K = outputs.
"""

import numpy as np

from ..layers.registry import row_of
from .formulas import seed_parts
from .lookup import lookup_backward, lookup_forward
from .trace import BlockEnd, LayerStep, Trace

ROWS_SHOWN = 2  # rows of a matrix printed
VALUES_SHOWN = 6  # values of a row printed
FLOW_FACTOR = 100.0  # a gradient that shrinks or grows this many times from the loss to the input is told


def shape(a: np.ndarray) -> str:
    return str(tuple(a.shape))


def values(a: np.ndarray) -> str:
    """Up to VALUES_SHOWN entries of a vector, then how many there are."""
    shown = " ".join(f"{v + 0.0:9.4g}" for v in a[:VALUES_SHOWN])  # + 0.0: no -0
    return shown + (f"  ... ({a.size} values)" if a.size > VALUES_SHOWN else "")


def preview_rows(X: np.ndarray) -> list[int]:
    """The rows of the batch a preview shows, in order: the first ROWS_SHOWN whose input is not
    all zeros (with the biases at zero, as they start, such a row is zero through every linear
    layer and shows nothing), then the first others if the batch has too few."""
    flat = np.asarray(X).reshape(len(X), -1)  # (N, D)
    live = np.any(flat != 0, axis=1)  # (N,)
    return sorted(int(n) for n in [*np.flatnonzero(live), *np.flatnonzero(~live)][:ROWS_SHOWN])


def preview(name: str, a: np.ndarray, indent: str, rows: list[int] | None = None) -> list[str]:
    """``name[i] = ...`` lines for rows ``rows`` of a matrix (the batch's preview rows; by
    default its first rows), or one line for a vector."""
    if a.ndim == 1:
        return [f"{indent}{name} = {values(a)}"]
    rows = list(range(min(len(a), ROWS_SHOWN))) if rows is None else rows
    lines = [f"{indent}{name}[{i}] = {values(a[i])}" for i in rows]
    return lines + ([f"{indent}... ({len(a)} rows)"] if len(a) > len(rows) else [])


def forward_formula(step) -> str:
    return row_of(step.layer).formulas.forward or "(no formula given)"


def backward_formula(step, key: str) -> str:
    """The formula of the gradient ``key`` (``dx``, or a parameter's key) of the step's layer."""
    name = key if key == "dx" else f"d{key}"
    return row_of(step.layer).formulas.backward.get(key, f"{name} = (no formula given)")


def pad(step) -> str:
    """Two more spaces for each block a step lies in: ``layers.1.0`` is inside ``layers.1``."""
    return "  " * (step.name.count(".") - 1)


def forward_lines(trace: Trace, vocabulary=None) -> list[str]:
    lines = ["forward, layer by layer (a float64 copy in training mode: dropout draws one mask, and every "
             "check below reuses it)", f"  X {shape(trace.X)}"]
    rows = preview_rows(trace.X)
    lines += preview("X", trace.X, "      ", rows)
    for step in trace.steps:
        if isinstance(step, BlockEnd):
            lines += block_forward(step, rows)
        elif row_of(step.layer).takes_indices:
            lines += lookup_forward(step, pad(step), vocabulary)
        else:
            lines += layer_forward(step, rows)
    return lines


def layer_forward(step: LayerStep, rows: list[int]) -> list[str]:
    p = pad(step)
    params = "".join(f", {k} {shape(v)}" for k, v in step.layer.params.items())
    return [f"  {p}{step.name} {step.type}: {forward_formula(step)}",
            f"  {p}    x {shape(step.x)}{params} -> out {shape(step.out)}",
            *preview("out", step.out, f"  {p}    ", rows)]


def block_forward(end: BlockEnd, rows: list[int]) -> list[str]:
    b, p = end.block, pad(end)
    first, last = b.inner
    head = f"  {p}{b.name} {b.type}: {forward_formula(b)}"
    if end.end == "fork":
        return [head, f"  {p}    x {shape(b.x)} is used twice: f = {first} .. {last} takes it, and the skip "
                      "connection carries it to the sum"]
    return [head, f"  {p}    x {shape(b.x)} + f(x) {shape(b.fx)} (the output of {last}) -> out {shape(b.out)}",
            *preview("out", b.out, f"  {p}    ", rows)]


def loss_lines(trace: Trace) -> list[str]:
    loss, rows = trace.loss, preview_rows(trace.X)
    spec = loss.spec
    lines = [f"loss: {loss.name}",
             f"  {spec.formula} = {loss.value:.6g}",
             f"  seed of the backward pass: {spec.seed_formula}, N = {len(loss.logits)}   -> {shape(loss.dlogits)}"]
    for name, part in seed_parts(spec, loss.logits, loss.targets):
        lines += preview(name, part, "      ", rows)
    lines += preview(seed_name(trace), loss.dlogits, "      ", rows)
    if loss.check:
        lines.append(f"      {check_text(loss.check)}")
    return lines


def backward_lines(trace: Trace, vocabulary=None) -> list[str]:
    lines = ["backward, in reverse order: each gradient from the upstream gradient dout"]
    rows = preview_rows(trace.X)
    for step in reversed(trace.steps):
        if isinstance(step, BlockEnd):
            lines += block_backward(step, rows)
        elif row_of(step.layer).takes_indices:
            lines += lookup_backward(step, pad(step), vocabulary, check_text)
        else:
            lines += layer_backward(step, rows)
    return lines


def layer_backward(step: LayerStep, rows: list[int]) -> list[str]:
    """Each parameter's gradient (its first rows shown) and dx (the batch's preview ``rows``)."""
    p = pad(step)
    lines = [f"  {p}{step.name} {step.type}"]
    for key in [*step.layer.params, "dx"]:
        grad = step.grads[key]
        name = "dx" if key == "dx" else f"d{key}"
        formula = backward_formula(step, key)
        lines += [f"  {p}  fwd: {forward_formula(step)}  =>  {formula}",
                  f"  {p}    dout {shape(step.dout)} -> {name} {shape(grad)}, |{name}| = {norm(grad)}"]
        lines += preview(name, grad, f"  {p}    ", rows if key == "dx" else None)
        if key in step.checks:
            lines.append(f"  {p}    {check_text(step.checks[key])}")
    return lines


def block_backward(end: BlockEnd, rows: list[int]) -> list[str]:
    """At the join, dout goes on to both terms of the sum; at the fork, the two gradients of x add."""
    b, p = end.block, pad(end)
    first, last = b.inner
    if end.end == "join":
        return [f"  {p}{b.name} {b.type}: {forward_formula(b)}",
                f"  {p}    the sum passes dout on unchanged to both terms: to f(x), back into {last}, and to x "
                "along the skip connection",
                f"  {p}    dout {shape(b.dout)}, |dout| = {norm(b.dout)}", *preview("dout", b.dout, f"  {p}    ", rows)]
    formula = backward_formula(b, "dx")
    lines = [f"  {p}{b.name} {b.type}: x fed f and the skip connection, so its two gradients add",
             f"  {p}  fwd: {forward_formula(b)}  =>  {formula}",
             f"  {p}    dout {shape(b.dout)} along the skip + df {shape(b.df)} back through f (the dx of {first}) "
             f"-> dx {shape(b.grads['dx'])}",
             f"  {p}    |dout| = {norm(b.dout)}, |df| = {norm(b.df)}, |dx| = {norm(b.grads['dx'])}"]
    for name, grad in (("dout", b.dout), ("df", b.df), ("dx", b.grads["dx"])):
        lines += preview(name, grad, f"  {p}    ", rows)
    if "dx" in b.checks:
        lines.append(f"  {p}    {check_text(b.checks['dx'])}")
    return lines


def norm(a: np.ndarray) -> str:
    return f"{np.linalg.norm(a):.4g}"


def check_text(row) -> str:
    """``finite differences: rel err 3.1e-11  PASS`` and how many entries were compared."""
    note = row.describe()
    return f"finite differences: rel err {row.max_rel:.1e}  {row.verdict}" + (f"  ({note})" if note else "")


def closing_line(trace: Trace) -> str:
    checks = trace.checks()
    if not checks:
        return "gradients not checked"
    worst = max(row.max_rel for _, row in checks)
    agree = trace.agreeing()
    verdict = "all agree" if agree == len(checks) else f"{len(checks) - agree} do not"
    return (f"{agree} of {len(checks)} gradient steps agree with finite differences ({verdict}; "
            f"worst relative error {worst:.1e})")


def flow_line(trace: Trace) -> str | None:
    """One line when the gradient shrinks or grows more than FLOW_FACTOR times on its way from the
    loss (the seed) to the input (dx of the first layer), saying what that means; else None."""
    if not trace.steps or "dx" not in trace.steps[0].grads:
        return None
    top, bottom = np.linalg.norm(trace.loss.dlogits), np.linalg.norm(trace.steps[0].grads["dx"])
    layers = sum(1 for step in trace.steps if not isinstance(step, BlockEnd) and step.prefix == "layers")
    if top == 0 or FLOW_FACTOR ** -1 <= bottom / top <= FLOW_FACTOR:
        return None
    way = (f"the gradient shrinks {top / bottom:.3g} times" if bottom < top else
           f"the gradient grows {bottom / top:.3g} times")
    told = (f"gradient flow: {way} on its way back through {layers} layers, from |{seed_name(trace)}| = "
            f"{top:.4g} at the loss to |dx| = {bottom:.4g} at the input (layers.0). ")
    if bottom < top:
        return told + ("It vanishes: the first layers get almost no gradient and barely learn. Each sigmoid "
                       "passes at most 1/4 of it back and a saturated tanh almost none; relu, batchnorm or "
                       "fewer layers keep it alive.")
    return told + ("It explodes: the first layers take steps far too large. A lower optimizer.lr, "
                   "optimizer.clip_norm, batchnorm or a smaller init (model.init) tame it.")


def seed_name(trace: Trace) -> str:
    """The seed gradient's name, as the loss's seed formula writes it (dlogits)."""
    return trace.loss.spec.seed_formula.split(" ")[0]


def format_trace(trace: Trace, header: str, vocabulary=None) -> str:
    """The whole walkthrough, ``header`` first; the ``vocabulary`` of text data names the
    characters an embedding looks up."""
    flow = flow_line(trace)
    blocks = [[header], forward_lines(trace, vocabulary), loss_lines(trace), backward_lines(trace, vocabulary),
              [closing_line(trace)] + ([flow] if flow else [])]
    return "\n\n".join("\n".join(block) for block in blocks)
