"""The config reference of the documentation, written from the schema itself: every section, every
key with its type, default, rule (range or choices) and the comment the schema gives it, so the
page cannot drift from what the parser accepts.

    python -m mlp_manual.config.reference > docs/reference/config-keys.md

(a test fails while the committed page differs from what this prints).
"""

import dataclasses
import inspect
import re
import typing

from ..datasets.load import key_owners
from . import schema

INTRO = """# Every config key

Generated from the config schema (`mlp_manual/config/schema.py`) and the options each dataset,
optimizer and schedule declares by
`python -m mlp_manual.config.reference`; the tests fail when this page and the schema differ.
What the keys do, with examples: [Configs](config.md)."""


def _comments(cls) -> dict[str, str]:
    """The trailing ``# comment`` of each field in the class's source."""
    found = {}
    try:
        source = inspect.getsource(cls)
    except OSError:  # a section made from declarations (data): its fields carry their help
        return {f.name: f.metadata["help"] for f in dataclasses.fields(cls) if f.metadata.get("help")}
    for line in source.splitlines():
        m = re.match(r"\s+(\w+): [^=]+=.*?#\s*(.+)$", line)
        if m:
            found[m.group(1)] = m.group(2).strip()
    return found


def _type_name(t) -> str:
    text = t if isinstance(t, str) else getattr(t, "__name__", None) or str(t)
    return text.replace("typing.", "").replace("NoneType", "None")


def _default(f: dataclasses.Field) -> str:
    value = f.default
    if isinstance(value, tuple) and value and isinstance(value[0], dict):  # model.layers
        return "; ".join(v["type"] + "".join(f" {k} {w}" for k, w in v.items() if k != "type") for v in value)
    return "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


def _rule(f: dataclasses.Field) -> str:
    meta = f.metadata
    if meta.get("choices"):
        return "one of " + ", ".join(f"`{c}`" for c in meta["choices"])
    return f"must {meta['must']}" if meta.get("must") else ""


def _choices(option) -> str:
    names = getattr(option.kind, "names", None)
    return "one of " + ", ".join(f"`{c}`" for c in names()) if names else ""


def section_rows(cls, prefix: str) -> list[str]:
    """One table row per key of section ``cls``; a nested section adds its own rows. A data key
    that only some datasets read names them (their loaders declare it)."""
    rows, comments = [], _comments(cls)
    if cls is schema.DataConfig:
        for key, owners in key_owners().items():
            help = schema.DataConfig.__dataclass_fields__[key].metadata["option"].help
            comments[key] = f"{prefix}name {', '.join(owners)}" + (f": {help}" if help else "")
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        key = f"{prefix}{f.name}"
        if "options_of" in f.metadata:
            rows += option_rows(f.metadata["options_of"], prefix)
            continue
        if dataclasses.is_dataclass(hints[f.name]):
            rows += section_rows(hints[f.name], key + ".")
            continue
        option = f.metadata.get("option")
        if option is not None:  # a dataset's option, declared where it is read
            cells = [f"`{key}`", option.kind.described, f"`{_default(f)}`",
                     f"must {option.must}" if option.must else _choices(option), comments.get(f.name, "")]
            rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
            continue
        cells = [f"`{key}`", _type_name(hints[f.name]), f"`{_default(f)}`", _rule(f), comments.get(f.name, "")]
        rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return rows


def option_rows(registry: dict, prefix: str) -> list[str]:
    """One row per option the things of ``registry`` declare (in ``mlp_manual/options.py``'s
    vocabulary), naming the things that take it: a section may set only those of its choice."""
    declared: dict[tuple[str, int], tuple] = {}
    for name, thing in registry.items():
        for key, option in thing.options.items():
            owners = declared.setdefault((key, id(option)), (option, []))[1]
            owners.append(name)
    rows = []
    for (key, _), (option, owners) in declared.items():
        default = "null" if option.default is None else str(option.default).lower() if isinstance(
            option.default, bool) else str(option.default)
        cells = [f"`{prefix}{key}`", option.kind.described, f"`{default}`", f"must {option.must}" if option.must else "",
                 f"{prefix}name {', '.join(owners)}: {option.help}"]
        rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return rows


def config_reference() -> str:
    """The whole page, Markdown."""
    parts = [INTRO]
    top = [f for f in dataclasses.fields(schema.Config)]
    hints = typing.get_type_hints(schema.Config)
    plain = [f for f in top if not dataclasses.is_dataclass(hints[f.name])]
    header = "| key | type | default | rule | note |\n|---|---|---|---|---|"
    parts.append("## Top level\n\n" + header + "\n" + "\n".join(
        r for r in section_rows(schema.Config, "") if not any(r.startswith(f"| `{s.name}.") for s in top)))
    for f in top:
        if f in plain:
            continue
        parts.append(f"## `{f.name}`\n\n" + header + "\n" + "\n".join(section_rows(hints[f.name], f"{f.name}.")))
    return "\n\n".join(parts) + "\n"


if __name__ == "__main__":
    print(config_reference(), end="")
