"""The table printed by ``make bench`` and the JSON written beside it."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from .runner import WorkloadResult
from .workload import RowResult

HEADER = (
    f"{'workload / library':<36} {'median':>10} {'runs':>4} {'x numpy':>9} {'per op':>10} "
    f"{'peak MiB':>9}  {'check':<6} targets (kenaz rows)"
)


def format_seconds(seconds: float | None) -> str:
    """``1.23 ms``-style, with the unit chosen by magnitude."""
    if seconds is None:
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def format_workload(result: WorkloadResult) -> str:
    """The lines of one workload: a title line, then one line per library."""
    ops = f"  [{result.ops:,} ops]" if result.ops and result.ops > 1 else ""
    lines = [f"{result.key:<16} {result.title}{ops}"]
    if result.error:
        lines.append(f"    !!! workload failed to build: {result.error}")
    lines.extend(_format_row(row) for row in result.rows)
    return "\n".join(lines)


def _format_row(row: RowResult) -> str:
    library = f"    {row.library}"
    if row.seconds is None:
        note = f"!!! {row.note} !!!" if row.note.startswith("ERROR") else row.note or "not run"
        return f"{library:<36} {note}"
    ratio = f"{row.ratio_to_numpy:.2f}x" if row.ratio_to_numpy is not None else "-"
    peak = f"{row.peak_bytes / 2**20:.2f}" if row.peak_bytes is not None else "-"
    check = row.check if row.check == "ok" else f"!!! {row.check} !!!"
    targets = "; ".join(str(t) for t in row.targets)
    runs = f"{row.samples}{'w' if row.sample_is_warmup else ''}"
    return (
        f"{library:<36} {format_seconds(row.seconds):>10} {runs:>4} {ratio:>9} "
        f"{format_seconds(row.per_op_seconds):>10} {peak:>9}  {check:<6} {targets}".rstrip()
    )


def format_summary(results: list[WorkloadResult]) -> str:
    """Every target with its verdict, and every failed check, after the table."""
    lines = ["", "Targets (issue 7):"]
    for result in results:
        for row in result.rows:
            for target in row.targets:
                verdict = "n/a" if target.met is None else "met" if target.met else "NOT MET"
                lines.append(f"  {verdict:<8} {result.key:<16} {row.library:<14} {target}")
    problems = [
        f"  {result.key}: {row.library}: {row.check or row.note}"
        for result in results
        for row in result.rows
        if (row.check and row.check != "ok") or row.note.startswith("ERROR")
    ]
    problems += [f"  {result.key}: {result.error}" for result in results if result.error]
    if problems:
        banner = "!!! RESULTS THAT DISAGREE WITH THE NUMPY REFERENCE, OR FAILED !!!"
        lines += ["", banner, *problems]
    return "\n".join(lines)


def write_json(path: Path, results: list[WorkloadResult], meta: dict[str, Any]) -> None:
    """All rows, with the run's metadata (versions, machine, commit), as JSON."""
    workloads = []
    for result in results:
        rows = []
        for row in result.rows:
            entry = asdict(row)
            entry["targets"] = [
                {
                    "description": t.description,
                    "ratio": t.ratio,
                    "limit": t.limit,
                    "met": t.met,
                    "reason": t.reason,
                }
                for t in row.targets
            ]
            rows.append(entry)
        workloads.append(
            {
                "key": result.key,
                "title": result.title,
                "ops": result.ops,
                "error": result.error,
                "wall_seconds": round(result.wall_seconds, 2),
                "rows": rows,
            }
        )
    path.write_text(json.dumps({"meta": meta, "workloads": workloads}, indent=2) + "\n")
