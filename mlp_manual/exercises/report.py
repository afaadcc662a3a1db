"""A Report in words (``mlp-exercise check``) and as an HTML table (a notebook)."""

import html as html_lib

import numpy as np

from .judge import Finding, Report, shape_text

SHOWN = 6  # entries of a vector, or rows and columns of a matrix, printed


def text(report: Report) -> str:
    ex = report.exercise
    lines = [f"{ex.name}: {ex.title}"]
    if report.rows:
        lines.append(f"  {report.cases} cases; each tensor against the core and against central differences:")
        table = [("tensor", "shape", "core", "differences", "")] + [
            (r.name, shape_text(r.shape), r.vs_core.text, r.vs_numeric.text if r.vs_numeric else "-",
             "ok" if r.vs_core.ok else "WRONG") for r in report.rows]
        widths = [max(len(row[i]) for row in table) for i in range(4)]
        lines += ["  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths + [0])).rstrip() for row in table]
    for f in report.findings:
        lines += [] if f.inherited else _finding(f)
    lines += _inherited(report)
    if report.problem:
        on = f" (case {report.problem_case.label})" if report.problem_case else ""
        lines.append(f"  stopped{on}: {report.problem}")
    if report.printed:
        lines.append("  " + report.printed)
    lines.append(_closing(report))
    return "\n".join(lines)


def _closing(report: Report) -> str:
    if report.passed:
        return f"PASS {report.exercise.name}: every tensor matches on all {report.cases} cases"
    wrong = len(report.findings)
    said = f"{wrong} of {len(report.rows)} tensors wrong" if wrong else "not checked to the end"
    return f"FAIL {report.exercise.name}: {said} (hint: mlp-exercise hint {report.exercise.name})"


def _inherited(report: Report) -> list[str]:
    """One line for the tensors wrong only through an earlier wrong tensor (Exercise.local)."""
    names = [f.tensor for f in report.findings if f.inherited]
    if not names:
        return []
    return [f"  wrong only through the wrong tensors before them (each is right computed from your own earlier "
            f"tensors): {', '.join(names)}"]


def _finding(f: Finding) -> list[str]:
    lines = [f"  {f.mistake.says}" if f.mistake else f"  {f.tensor} is wrong ({f.comparison.text}), and no classic "
             "mistake explains it on every case: compare yours with the expected values below"]
    lines.append(f"    smallest input where it shows: {f.case.label}")
    for key, value in f.case.inputs.items():
        if isinstance(value, (float, int)) or isinstance(value, np.ndarray) and value.size <= 64:
            lines.append(f"      {key} = {_array(value)}")
    lines.append(f"      yours    {f.tensor} = {_array(f.yours)}")
    lines.append(f"      expected {f.tensor} = {_array(f.expected)}")
    if f.mistake:
        lines.append(f"    where to look: {f.mistake.look}")
    return lines


def _array(a: np.ndarray) -> str:
    a = np.asarray(a)
    if a.ndim == 0:
        return f"{float(a):.6g}"
    if a.ndim == 1:
        cells = [f"{v:.4g}" for v in a[:SHOWN]]
        return "[" + ", ".join(cells) + (", ...]" if a.size > SHOWN else "]")
    if a.ndim == 2:
        rows = [_array(r) for r in a[:SHOWN]]
        return "[" + ", ".join(rows) + (", ...]" if len(a) > SHOWN else "]")
    return f"array of shape {shape_text(a.shape)}"


def html(report: Report) -> str:
    """The report as a table, for Jupyter, VS Code and Colab: one row per tensor, green or red."""
    esc = html_lib.escape
    rows = []
    for r in report.rows:
        color = "#e6f4ea" if r.vs_core.ok else "#fce8e6"
        numeric = r.vs_numeric.text if r.vs_numeric else "-"
        rows.append(f"<tr style='background:{color}'><td><code>{esc(r.name)}</code></td><td>{esc(shape_text(r.shape))}</td>"
                    f"<td>{esc(r.vs_core.text)}</td><td>{esc(numeric)}</td>"
                    f"<td><b>{'ok' if r.vs_core.ok else 'WRONG'}</b></td></tr>")
    notes = []
    for f in report.findings:
        if not f.inherited:
            notes.append("<li>" + "<br>".join(esc(line.strip()) for line in _finding(f)) + "</li>")
    notes += [f"<li>{esc(line.strip())}</li>" for line in _inherited(report)]
    if report.problem:
        notes.append(f"<li>stopped: {esc(report.problem)}</li>")
    table = ("<table><thead><tr><th>tensor</th><th>shape</th><th>against the core</th>"
             "<th>against central differences</th><th></th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>")
    return (f"<div class='mlp-exercise'><p><b>{esc(report.exercise.name)}</b>: {esc(report.exercise.title)}</p>"
            f"{table if rows else ''}<ul>{''.join(notes)}</ul><p><b>{esc(_closing(report))}</b></p></div>")
