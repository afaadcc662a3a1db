"""One section of benchmarks/README.md rewritten by the benchmark that measures it (``--write``)."""


def replace_section(text: str, heading: str, new: str) -> str:
    """``text`` with the section headed ``heading`` (up to the next "## " heading) replaced by
    ``new``, or ``new`` added at the end."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.rstrip() == heading), None)
    if start is None:
        return text.rstrip("\n") + "\n\n" + new
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    rest = "".join(lines[end:])
    return "".join(lines[:start]) + new + ("\n" + rest if rest else "")
