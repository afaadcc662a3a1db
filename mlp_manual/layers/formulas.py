"""The math of a layer as mlp-explain shows it, read from the one place it is written: the
``# fwd: A  =>  B`` comments of the layer's backward, each quoting the forward line it inverts
(``A``) and the gradients it computes (``B``). The layer's forward formula is the ``A`` of its
``dx``.

A comment may run onto the next comment line, which then starts with ``=>``. ``B`` lists one
gradient or several, ``dx = ...`` and ``d<key> = ...`` for a key of the layer's params, comma
separated; what follows a gradient and names no other (``dxhat = dout * gamma``) belongs to it.
``# fwd (eval): ...`` comments, about another mode, are not read.
"""

import inspect
import re
from dataclasses import dataclass, field

FWD = re.compile(r"#\s*fwd:\s*(.*)")
CONTINUED = re.compile(r"#\s*=>\s*(.*)")
GRADIENT = re.compile(r"d(\w+)\s*(?:=|\[|\+=)")
PARAM_KEY = re.compile(r"""self\.params\[["'](\w+)["']\]""")


@dataclass(frozen=True)
class Formulas:
    """``forward``: the forward formula; ``backward``: the formula of each gradient, keyed
    ``dx`` and by the key of each parameter (``W``)."""

    forward: str = ""
    backward: dict[str, str] = field(default_factory=dict)


def comments(cls: type) -> list[str]:
    """The ``# fwd:`` comments of ``cls`` and of the classes it inherits (until mlp-manual's own
    Layer), each joined onto one line, in the order of the source."""
    found = []
    for klass in reversed([c for c in cls.__mro__ if c.__module__ != "builtins" and c.__name__ != "Layer"]):
        try:
            lines = inspect.getsource(klass).splitlines()
        except (OSError, TypeError):  # no source: a class made at run time
            continue
        for i, line in enumerate(lines):
            match = FWD.search(line)
            if not match:
                continue
            text = match.group(1)
            if "=>" not in text and i + 1 < len(lines) and (more := CONTINUED.search(lines[i + 1])):
                text += "  =>  " + more.group(1)
            found.append(text)
    return found


def param_keys(cls: type) -> set[str]:
    """The keys under which ``cls`` (or a class it inherits) stores parameters."""
    keys = set()
    for klass in cls.__mro__:
        try:
            keys |= set(PARAM_KEY.findall(inspect.getsource(klass)))
        except (OSError, TypeError):
            continue
    return keys


def read_formulas(cls: type) -> Formulas:
    """The formulas of ``cls``, from its ``# fwd:`` comments."""
    keys, forwards, backward = param_keys(cls), {}, {}
    for text in comments(cls):
        before, arrow, after = text.partition("=>")
        if not arrow:
            continue
        current = None
        for item in _items(after.strip()):
            match = GRADIENT.match(item)
            name = match.group(1) if match else None
            key = "dx" if name == "x" else name
            if name is not None and (name == "x" or name in keys) and key not in backward:
                current = key
                backward[current], forwards[current] = item, before.strip()
            elif current is not None:
                backward[current] += ", " + item
    # the whole layer's forward is the line dx inverts (a part, gamma * xhat + beta, may come first)
    forward = forwards.get("dx") or next(iter(forwards.values()), "")
    return Formulas(forward, backward)


def _items(text: str) -> list[str]:
    """``text`` split at the commas outside brackets."""
    items, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += (c in "([") - (c in ")]")
        if c == "," and depth == 0:
            items.append(text[start:i].strip())
            start = i + 1
    items.append(text[start:].strip())
    return [item for item in items if item]
