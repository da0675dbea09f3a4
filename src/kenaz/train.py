"""A training loop (``fit``) with a progress bar and per-epoch evaluation, and a plot helper.

``fit`` is a convenience over the pieces it uses: ``value_and_grad``, an
optimizer from ``kenaz.optim`` and ``kenaz.data.Batches``. Write your own loop
when you need something it does not do; it is a few lines.
"""

from __future__ import annotations

import math
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from . import optim
from .compiler.api import jit as jit_function
from .data import Batches
from .nn.initializers import Key, as_generator
from .reverse import value_and_grad

__all__ = ["History", "FitResult", "fit", "plot_history"]

History = dict[str, list[float]]


class FitResult(NamedTuple):
    """What ``fit`` returns: the trained parameters, optimizer state, history and model state.

    Examples
    --------
    >>> import numpy as np
    >>> from kenaz import optim
    >>> params, opt_state, history, state = fit(
    ...     lambda p, x: (p - x).mean() ** 2, 0.0, optim.sgd(0.5), np.array([1.0, 3.0]),
    ...     progress=False)
    >>> sorted(history)
    ['epoch_time', 'loss', 'step_loss']
    """

    params: Any
    opt_state: Any
    history: History
    state: Any = None


def _progress_bar(enabled: bool | None, total: int, description: str) -> Any:
    """A tqdm bar, or None. ``None`` means: a bar if tqdm is installed."""
    if enabled is False:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        if enabled:
            raise ImportError(
                "kenaz.train.fit(progress=True) needs tqdm: pip install 'kenaz[progress]'"
            ) from None
        return None
    return tqdm(total=total, desc=description, unit="step", dynamic_ncols=True, file=sys.stderr)


class _Step:
    """The loss and gradient step, compiled with ``jit`` unless it cannot be traced."""

    def __init__(self, step: Callable[..., Any], compile_it: bool) -> None:
        self.eager = step
        self.compiled = jit_function(step) if compile_it else None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.compiled is None:
            return self.eager(*args, **kwargs)
        try:
            return self.compiled(*args, **kwargs)
        except Exception as error:  # noqa: BLE001 - any failure to trace: run eagerly instead
            result = self.eager(*args, **kwargs)  # a genuine error raises here, as without jit
            self.compiled = None
            reason = str(error).split(". ")[0]
            warnings.warn(
                f"kenaz.train.fit: the training step could not be compiled with kenaz.jit, so it "
                f"runs eagerly ({type(error).__name__}: {reason}). Pass jit=False to choose "
                "this and silence the warning.",
                RuntimeWarning,
                stacklevel=3,
            )
            return result


def _as_arguments(batch: Any) -> tuple[Any, ...]:
    return tuple(batch) if isinstance(batch, tuple) else (batch,)


def fit(
    loss_fn: Callable[..., Any],
    params: Any,
    optimizer: optim.GradientTransformation,
    data: Any,
    *,
    epochs: int = 1,
    batch_size: int = 32,
    seed: int = 0,
    drop_last: bool = False,
    evaluate: Callable[..., dict[str, float]] | None = None,
    state: Any = None,
    opt_state: Any = None,
    key: Key | None = None,
    progress: bool | None = None,
    description: str = "training",
    jit: bool = True,
    client: Any = None,
) -> FitResult:
    """Train ``params`` by minimizing ``loss_fn`` over minibatches of ``data``.

    Parameters
    ----------
    loss_fn : callable
        ``loss_fn(params, *batch) -> scalar`` where ``batch`` is one minibatch
        of ``data`` (a tuple is spread into arguments). With ``state``, it is
        ``loss_fn(params, state, *batch) -> (scalar, new_state)`` (e.g. batch
        norm statistics).
    params : pytree
        Initial parameters.
    optimizer : GradientTransformation
        E.g. ``kenaz.optim.adam(1e-3)``.
    data : pytree of arrays
        Training examples along the first axis, e.g. ``(x_train, y_train)``.
    epochs, batch_size, seed, drop_last
        Passed to :class:`kenaz.data.Batches` (the seed fixes the shuffling).
    evaluate : callable, optional
        ``evaluate(params) -> {"name": value}`` (or ``evaluate(params, state)``
        with ``state``), run after every epoch; the values go into the history.
    state : pytree, optional
        Non-trained model state threaded through ``loss_fn``.
    opt_state : pytree, optional
        Optimizer state to resume from (``optimizer.init(params)`` by default).
    key : numpy.random.Generator or int, optional
        When given, every step calls ``loss_fn(..., key=step_key)`` with a
        fresh generator derived from ``key`` (for dropout): the same key
        gives the same masks, run after run.
    progress : bool or None, optional
        Show a tqdm progress bar with the running loss. ``None``: when tqdm is
        installed (else one line per epoch); ``True`` requires tqdm
        (``kenaz[progress]``); ``False``: silent.
    description : str, optional
        The progress bar's label.
    jit : bool, optional
        Compile the loss and gradient computation with :func:`kenaz.jit`
        (traced once per batch shape; the optimizer's update stays eager).
        ``loss_fn``'s Python side effects then run only while tracing. With
        ``key`` (fresh random draws every step) the step runs eagerly. A
        loss that draws from ``numpy.random`` (augmentation, noise) or reads
        a value that changes between steps is not frozen: ``jit`` traces the
        step again at its second call, finds that the program changed, warns
        once naming the value and the line, and runs the step eagerly from
        then on, so the loss curve is the one of ``jit=False``. If
        the step cannot be traced (it reads a value, e.g. ``if loss > 0:``),
        ``fit`` warns once with the reason and runs eagerly. ``False`` never
        compiles.
    client : dask.distributed.Client, optional
        Data-parallel training: each minibatch is split across the cluster's
        workers, which compute the shard gradients with kenaz; their average
        (weighted by shard size) is the step's gradient, equal to the local
        one to rounding when the loss is a mean over the examples. A worker
        lost mid-epoch is replaced by Dask's retries. With ``key``, each shard
        gets its own generator split from the step's (different dropout masks
        per shard, reproducible run after run); with ``state``, the shards'
        new states are averaged weighted by shard size (as data-parallel
        training without synchronized batch norm). The workers run the step
        eagerly (``jit`` applies to local training). See
        :mod:`kenaz.distributed` (``kenaz[dask]``) for what equals what.

    Returns
    -------
    FitResult
        ``(params, opt_state, history, state)``. ``history`` maps ``"loss"``
        (mean training loss per epoch), ``"epoch_time"`` (seconds) and each
        evaluation name to per-epoch lists, and ``"step_loss"`` to every
        step's loss.

    Examples
    --------
    >>> import numpy as np
    >>> from kenaz import optim
    >>> x = np.linspace(-1, 1, 64)
    >>> y = 3 * x + 1
    >>> loss = lambda p, x, y: ((p["a"] * x + p["b"] - y) ** 2).mean()
    >>> result = fit(loss, {"a": 0.0, "b": 0.0}, optim.adam(0.1), (x, y),
    ...              epochs=50, batch_size=16, progress=False)
    >>> round(float(result.params["a"]), 2), round(float(result.params["b"]), 2)
    (3.0, 1.0)
    """
    batches = Batches(data, batch_size, shuffle=True, seed=seed, drop_last=drop_last)
    if len(batches) == 0:
        raise ValueError(
            f"kenaz.train.fit: no batches: {batches.size} examples, batch_size={batch_size}, "
            f"drop_last={drop_last}"
        )
    stateful = state is not None
    if client is not None:
        from .distributed import data_parallel_value_and_grad

        step = data_parallel_value_and_grad(loss_fn, client, has_state=stateful)
    else:
        step = _Step(value_and_grad(loss_fn, has_aux=stateful), jit and key is None)
    step_keys = None if key is None else as_generator(key)
    opt_state = optimizer.init(params) if opt_state is None else opt_state
    history: History = {"loss": [], "epoch_time": [], "step_loss": []}
    bar = _progress_bar(progress, epochs * len(batches), description)
    running_loss = math.nan
    shown: dict[str, str] = {}
    try:
        for epoch in range(epochs):
            started = time.perf_counter()
            epoch_losses = []
            for batch in batches:
                keyword = {} if step_keys is None else {"key": step_keys.spawn(1)[0]}
                if stateful:
                    (loss, state), grads = step(params, state, *_as_arguments(batch), **keyword)
                else:
                    loss, grads = step(params, *_as_arguments(batch), **keyword)
                updates, opt_state = optimizer.update(grads, opt_state, params)
                params = optim.apply_updates(params, updates)
                loss = float(loss)
                epoch_losses.append(loss)
                running_loss = loss if math.isnan(running_loss) else 0.9 * running_loss + 0.1 * loss
                if bar is not None:
                    # refresh=False: update() redraws at most every `mininterval` seconds.
                    postfix = {"epoch": f"{epoch + 1}/{epochs}", "loss": f"{running_loss:.4f}"}
                    bar.set_postfix(postfix | shown, refresh=False)
                    bar.update(1)
            history["step_loss"].extend(epoch_losses)
            history["loss"].append(sum(epoch_losses) / len(epoch_losses))
            history["epoch_time"].append(time.perf_counter() - started)
            if evaluate is not None:
                metrics = evaluate(params, state) if stateful else evaluate(params)
                for name, value in metrics.items():
                    history.setdefault(name, []).append(float(value))
                shown = {name: f"{float(value):.4f}" for name, value in metrics.items()}
            if bar is not None:
                postfix = {"epoch": f"{epoch + 1}/{epochs}", "loss": f"{running_loss:.4f}"}
                bar.set_postfix(postfix | shown)
            elif progress is None:
                extra = "".join(f"  {name} {value}" for name, value in shown.items())
                print(f"epoch {epoch + 1}/{epochs}  loss {history['loss'][-1]:.4f}{extra}")
    finally:
        if bar is not None:
            bar.close()
    return FitResult(params, opt_state, history, state)


def plot_history(
    history: History, path: str | Path, title: str | None = None, dpi: int = 120
) -> Path:
    """Write the loss curves (left) and the other per-epoch metrics (right) to a PNG.

    Needs the optional extra ``kenaz[plot]`` (matplotlib). Uses no global
    pyplot state, so it is safe in scripts, tests and servers.

    Parameters
    ----------
    history : dict of lists
        As returned by :func:`fit`: every key with ``"loss"`` in its name is
        drawn on the left, every other per-epoch key (but ``"epoch_time"``)
        on the right; ``"step_loss"`` is drawn faintly behind the epoch losses.
    path : str or Path
        Where to write the image (its directory is created).
    title : str, optional

    Returns
    -------
    Path
        The path written.

    Examples
    --------
    >>> plot_history({"loss": [1.0, 0.5], "test_accuracy": [0.8, 0.9]}, "/tmp/curves.png")
    PosixPath('/tmp/curves.png')
    """
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError(
            "kenaz.train.plot_history needs matplotlib: pip install 'kenaz[plot]'"
        ) from None
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    epochs_run = len(history.get("loss", [])) or max((len(v) for v in history.values()), default=0)
    epochs = list(range(1, epochs_run + 1))
    figure = Figure(figsize=(10, 4), layout="constrained")
    loss_axes, metric_axes = figure.subplots(1, 2)
    step_loss = history.get("step_loss", [])
    if step_loss and epochs_run:
        steps_per_epoch = len(step_loss) / epochs_run
        steps = [(i + 1) / steps_per_epoch for i in range(len(step_loss))]
        loss_axes.plot(
            steps, step_loss, color="tab:blue", alpha=0.25, linewidth=0.8, label="step loss"
        )
    for name, values in history.items():
        if name in ("step_loss", "epoch_time") or len(values) != epochs_run:
            continue
        axes = loss_axes if "loss" in name else metric_axes
        label = "train loss (epoch mean)" if name == "loss" else name.replace("_", " ")
        axes.plot(epochs, values, marker="o", markersize=3, label=label)
    loss_axes.set(xlabel="epoch", ylabel="loss", yscale="log", title="loss")
    metric_axes.set(xlabel="epoch", title="metrics")
    for axes in (loss_axes, metric_axes):
        axes.grid(alpha=0.3)
        if axes.get_legend_handles_labels()[0]:
            axes.legend()
    if title:
        figure.suptitle(title)
    figure.savefig(path, dpi=dpi)
    return path
