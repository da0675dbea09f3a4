"""The optional peer libraries (PyTorch, JAX, HIPS autograd): loaded if installed, else noted.

Nothing here fails for lack of a peer: a missing one is ``None`` with the
reason kept for the table.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from dataclasses import dataclass, field
from types import ModuleType

PEER_NAMES = ("torch", "jax", "autograd")


@dataclass
class Peers:
    """The peer modules that could be imported, and why the others could not."""

    torch: ModuleType | None = None
    jax: ModuleType | None = None
    autograd: ModuleType | None = None
    missing: dict[str, str] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)

    def why_missing(self, name: str) -> str:
        """The note shown in a missing peer's rows."""
        return self.missing.get(name, "not installed")


def load_peers(names: tuple[str, ...] = PEER_NAMES) -> Peers:
    """Import the named peers, each configured for one thread (and float64 for JAX)."""
    peers = Peers()
    for name in PEER_NAMES:
        if name not in names:
            peers.missing[name] = "not requested"
            continue
        try:
            module = importlib.import_module(name)
            _CONFIGURE[name](module)
        except Exception as error:  # noqa: BLE001 - any import failure means "not available"
            peers.missing[name] = (
                "not installed" if isinstance(error, ImportError) else f"failed to load: {error}"
            )
            continue
        setattr(peers, name, module)
        peers.versions[name] = _version(name)
    return peers


def _version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _configure_torch(torch: ModuleType) -> None:
    torch.set_num_threads(1)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:  # already set, or parallel work already started
        pass


def _configure_jax(jax: ModuleType) -> None:
    importlib.import_module("jax.numpy")
    jax.config.update("jax_enable_x64", True)  # the float64 workloads must stay float64


def _configure_autograd(autograd: ModuleType) -> None:
    importlib.import_module("autograd.numpy")
    importlib.import_module("autograd.scipy.special")


_CONFIGURE = {"torch": _configure_torch, "jax": _configure_jax, "autograd": _configure_autograd}
