"""The config reference of the documentation, written from the declarations themselves: every
section, every key with its kind, default, rule (range or choices) and help, so the page cannot
drift from what the parser accepts.

    python -m mlp_manual.config.reference > docs/reference/config-keys.md

(a test fails while the committed page differs from what this prints).
"""

import dataclasses
import typing

from ..datasets.load import key_owners
from . import schema

INTRO = """# Every config key

Generated from the declarations of the config schema (`mlp_manual/config/schema.py`) and of each
dataset, optimizer and schedule by `python -m mlp_manual.config.reference`; the tests fail when
this page and the declarations differ. What the keys do, with examples: [Configs](config.md)."""


def _default(value) -> str:
    if isinstance(value, tuple) and value and isinstance(value[0], dict):  # model.layers
        return "; ".join(v["type"] + "".join(f" {k} {w}" for k, w in v.items() if k != "type") for v in value)
    return "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


def _rule(option) -> str:
    names = getattr(option.kind, "names", None)
    if names:
        return "one of " + ", ".join(f"`{c}`" for c in names())
    return f"must {option.must}" if option.must else ""


def _row(key: str, option, note: str) -> str:
    cells = [f"`{key}`", option.kind.described, f"`{_default(option.default)}`", _rule(option), note]
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def section_rows(cls, prefix: str) -> list[str]:
    """One table row per key of section ``cls``, from its declaration; a nested section adds its
    own rows. A data key that only some datasets read names them (their loaders declare it)."""
    owners = key_owners() if cls is schema.DataConfig else {}
    hints = typing.get_type_hints(cls)
    rows = []
    for f in dataclasses.fields(cls):
        key = f"{prefix}{f.name}"
        if "options_of" in f.metadata:
            rows += option_rows(f.metadata["options_of"], prefix)
        elif dataclasses.is_dataclass(hints[f.name]):
            rows += section_rows(hints[f.name], key + ".")
        else:
            option = f.metadata["option"]
            note = (f"{prefix}name {', '.join(owners[f.name])}" + (f": {option.help}" if option.help else "")
                    if f.name in owners else option.help)
            rows.append(_row(key, option, note))
    return rows


def option_rows(registry: dict, prefix: str) -> list[str]:
    """One row per option the things of ``registry`` declare (in ``mlp_manual/options.py``'s
    vocabulary), naming the things that take it: a section may set only those of its choice."""
    declared: dict[tuple[str, int], tuple] = {}
    for name, thing in registry.items():
        for key, option in thing.options.items():
            owners = declared.setdefault((key, id(option)), (option, []))[1]
            owners.append(name)
    return [_row(f"{prefix}{key}", option, f"{prefix}name {', '.join(owners)}: {option.help}")
            for (key, _), (option, owners) in declared.items()]


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
