"""YAML read within bounds: a config file, a run's saved config or a ``--set`` value can be of
no size and no shape that makes parsing hang, exhaust memory or overflow the stack.

``yaml.safe_load`` composes aliases as shared nodes, so nine lines of aliases of aliases (a
"billion laughs" document) load quickly but expand to 9**9 values as soon as anything walks
them (a copy, a check, an error message), and thousands of nested brackets overflow the
composer's recursion. The loader here counts, as each node is composed, how many values it
expands to and how deep it nests with its aliases followed, and stops at the first node over
the limits. It also refuses a key given twice in one mapping, which YAML would let the second
silently replace, and an anchor given twice (which YAML refuses in words that name neither).
"""

import collections.abc
import os
from pathlib import Path

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from ..errors import ConfigError, short_repr, short_text
from ..files import open_regular

MAX_BYTES = 256 * 1024  # a config file; the largest example config is about 1 KiB
MAX_VALUES = 100_000  # scalars, lists and mappings of a document with its aliases expanded
MAX_DEPTH = 50  # lists and mappings inside each other, aliases followed; configs use about 5


class LimitExceeded(yaml.MarkedYAMLError):
    """A document larger or deeper than the limits, a mapping with a key given twice, or an anchor
    given twice."""


class BoundedLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` with the limits above and no duplicate keys."""

    def __init__(self, stream):
        super().__init__(stream)
        self.nesting = 0  # lists and mappings open around the node being composed
        self.measured: dict[int, tuple[int, int]] = {}  # id(node) -> (values, depth) once composed

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            return super().compose_node(parent, index)  # the anchored node, measured already
        event = self.peek_event()
        if event.anchor is not None and event.anchor in self.anchors:
            raise LimitExceeded(None, None, f"duplicate anchor &{short_text(event.anchor)} (first given at line "
                                f"{self.anchors[event.anchor].start_mark.line + 1})", event.start_mark)
        self.nesting += 1
        if self.nesting > MAX_DEPTH:
            raise LimitExceeded(None, None, f"nested more than {MAX_DEPTH} levels deep", self.peek_event().start_mark)
        node = super().compose_node(parent, index)
        self.nesting -= 1
        self.measure(node)
        return node

    def measure(self, node) -> None:
        """Record how many values ``node`` expands to and how deep it nests, from its children's
        records; a child without one is a node still being composed: an alias inside its anchor."""
        if isinstance(node, ScalarNode):
            values, depth = 1, 0
        else:
            children = node.value if isinstance(node, SequenceNode) else [n for pair in node.value for n in pair]
            try:
                counts = [self.measured[id(child)] for child in children]
            except KeyError:
                raise LimitExceeded(None, None, "an alias refers to the value that contains it",
                                    node.start_mark) from None
            values = 1 + sum(v for v, _ in counts)
            depth = 1 + max((d for _, d in counts), default=0)
        if values > MAX_VALUES:
            raise LimitExceeded(None, None, f"this value expands to more than {MAX_VALUES:,} values "
                                "(aliases of aliases?)", node.start_mark)
        if depth > MAX_DEPTH:
            raise LimitExceeded(None, None, f"this value nests more than {MAX_DEPTH} levels deep "
                                "with its aliases followed", node.start_mark)
        self.measured[id(node)] = (values, depth)

    def construct_mapping(self, node, deep=False):
        if isinstance(node, MappingNode):
            first_line = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue  # "<<: *defaults" may be overridden by the keys beside it
                key = self.construct_object(key_node, deep=deep)
                if not isinstance(key, collections.abc.Hashable):
                    continue  # the base class reports it
                if key in first_line:
                    raise LimitExceeded(None, None, f"duplicate key {short_repr(key)} (first given at line "
                                        f"{first_line[key] + 1})", key_node.start_mark)
                first_line[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep=deep)


def load_bounded(text: str):
    """The document ``text`` holds, like ``yaml.safe_load``; a yaml.YAMLError (LimitExceeded for
    a broken limit) if it is not valid YAML or breaks a limit."""
    loader = BoundedLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def read_yaml(path: str | os.PathLike, what: str = "config"):
    """The document in the file ``path`` (at most MAX_BYTES); ConfigError naming the file, and
    the line, if it cannot be read, is not valid YAML or breaks a limit."""
    path = Path(path)
    try:
        with open_regular(path, "rb", ConfigError) as f:
            data = f.read(MAX_BYTES + 1)
            size = max(os.fstat(f.fileno()).st_size, len(data))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such {what} file") from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot read the {what} ({e.strerror or e})") from None
    if len(data) > MAX_BYTES:
        raise ConfigError(f"{path}: the {what} file is {size:,} bytes; a {what} file is at most {MAX_BYTES:,} "
                          f"bytes ({MAX_BYTES // 1024} KiB)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: cannot read the {what} ({e})") from None
    try:
        return load_bounded(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        if isinstance(e, LimitExceeded):
            raise ConfigError(f"{path}: line {mark.line + 1}, column {mark.column + 1}: {problem}") from None
        raise ConfigError(f"{path}: invalid YAML{where}: {problem}") from None
