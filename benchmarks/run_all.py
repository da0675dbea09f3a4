"""Run every benchmark workload and print one table: kenaz, hand-written NumPy and the peers.

Usage (``make bench`` runs the first)::

    python benchmarks/run_all.py
    python benchmarks/run_all.py --only W1,W6 --peers torch --budget 2

Every library is pinned to one thread. Results are checked against the NumPy
reference; a disagreement is printed loudly (and makes ``--strict`` fail).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(ROOT))

from benchmarks.harness.threads import pin_to_one_thread  # noqa: E402

pin_to_one_thread()  # before NumPy, PyTorch or JAX is imported

import argparse  # noqa: E402
import datetime  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import kenaz  # noqa: E402
from benchmarks.harness.peers import PEER_NAMES, Peers, load_peers  # noqa: E402
from benchmarks.harness.report import HEADER, format_summary, format_workload, write_json  # noqa: E402
from benchmarks.harness.runner import WorkloadResult, run_workload  # noqa: E402
from benchmarks.harness.timing import Budget  # noqa: E402
from benchmarks.workloads import ALL_WORKLOADS  # noqa: E402

DEFAULT_JSON = ROOT / "benchmarks" / "results.json"


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--only", default="", help="comma-separated workload keys (W1,W8)")
    parser.add_argument("--peers", default=",".join(PEER_NAMES), help="peers to load, or 'none'")
    parser.add_argument("--size", choices=("full", "smoke"), default="full")
    parser.add_argument(
        "--budget", type=float, default=Budget.seconds, help="seconds of sampling per workload"
    )
    parser.add_argument(
        "--clock", choices=("cpu", "wall"), default="cpu", help="process CPU time or wall time"
    )
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, help="where to write results")
    parser.add_argument("--slow", action="store_true", help="also run contenders marked slow")
    parser.add_argument("--strict", action="store_true", help="exit 1 if any result disagrees")
    return parser.parse_args(argv)


def selected_workloads(only: str):
    keys = [key.strip() for key in only.split(",") if key.strip()]
    if not keys:
        return ALL_WORKLOADS
    return [w for w in ALL_WORKLOADS if any(w.key == k or w.key.startswith(k + " ") for k in keys)]


def current_commit() -> str:
    """The repository's short commit hash, with ``+`` if the work tree has changes."""
    try:
        git = ["git", "-C", str(ROOT)]
        commit = subprocess.run(
            [*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        )
        dirty = subprocess.run([*git, "diff", "--quiet", "HEAD", "--", "src"], capture_output=True)
    except OSError:
        return "unknown"
    return commit.stdout.strip() + ("+" if dirty.returncode else "")


def run_metadata(peers: Peers, seconds: float, clock: str) -> dict:
    """Versions, machine and commit, so a JSON file says what it measured."""
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "commit": current_commit(),
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cpus",
        "numpy": np.__version__,
        "kenaz": kenaz.__version__,
        "peers": peers.versions,
        "missing_peers": peers.missing,
        "threads": "1 (OMP/MKL/OPENBLAS_NUM_THREADS, torch.set_num_threads, XLA_FLAGS)",
        "run_seconds": round(seconds, 1),
        "clock": clock,
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(argv)
    started = time.perf_counter()
    requested = () if args.peers == "none" else tuple(p.strip() for p in args.peers.split(","))
    peers = load_peers(requested)
    versions = ", ".join(f"{name} {version}" for name, version in peers.versions.items())
    print(
        f"kenaz {kenaz.__version__} at {current_commit()}, numpy {np.__version__}; "
        f"peers: {versions or 'none'}; {platform.machine()}, {os.cpu_count()} cpus"
    )
    for name, reason in peers.missing.items():
        print(f"  {name}: {reason}")
    print(
        f"median {args.clock} time of interleaved samples, one thread per library; "
        "'x numpy': time / NumPy's time;\n'runs': samples in the median (w: the warm-up call only, "
        "too slow to repeat); peak MiB: tracemalloc, NumPy-based libraries only\n"
    )
    print(HEADER)
    print("-" * len(HEADER))
    budget = Budget(seconds=args.budget, clock=args.clock, include_slow=args.slow)
    results: list[WorkloadResult] = []
    for workload in selected_workloads(args.only):
        result = run_workload(workload, peers, args.size, budget)
        results.append(result)
        print(format_workload(result), flush=True)
    print(format_summary(results))
    elapsed = time.perf_counter() - started
    write_json(args.json, results, run_metadata(peers, elapsed, args.clock))
    print(f"\nwrote {args.json} ({elapsed:.0f} s)")
    failed = any(
        (row.check and row.check != "ok") or row.note.startswith("ERROR")
        for result in results
        for row in result.rows
    )
    return 1 if failed and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
