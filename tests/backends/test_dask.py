"""The Dask backend: lazy gradients equal NumPy's, and data-parallel ``fit`` on a LocalCluster."""

from __future__ import annotations

import os

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp
from kenaz import nn, optim
from kenaz.distributed import average_states, shard_bounds, shard_keys
from kenaz.train import fit

da = pytest.importorskip("dask.array")


def _mlp_loss(params, x, y):
    hidden = knp.tanh(x @ params["w1"] + params["b1"])
    out = hidden @ params["w2"]
    return knp.mean((out - y) ** 2) + 1e-3 * knp.sum(params["w1"][1:3] ** 2)


def _problem(seed: int = 0, examples: int = 64):
    rng = np.random.default_rng(seed)
    params = {
        "w1": rng.normal(size=(5, 8)) * 0.5,
        "b1": np.zeros(8),
        "w2": rng.normal(size=(8, 2)) * 0.5,
    }
    x = rng.normal(size=(examples, 5))
    y = np.stack([np.sin(x[:, 0]), x[:, 1] * x[:, 2]], axis=1)
    return params, x, y


def test_a_gradient_with_chunked_data_is_lazy_and_equals_numpys():
    params, x, y = _problem()
    expected = kenaz.grad(_mlp_loss)(params, x, y)
    lazy = kenaz.grad(_mlp_loss)(
        params, da.from_array(x, chunks=(16, 5)), da.from_array(y, chunks=(16, 2))
    )
    assert all(isinstance(g._value, da.Array) for g in kenaz.tree.leaves(lazy))
    computed = kenaz.materialize(lazy)
    for name in expected:
        assert isinstance(computed[name]._value, np.ndarray)
        np.testing.assert_allclose(computed[name].numpy(), expected[name].numpy(), rtol=1e-12)


def test_materialize_computes_a_pytree_in_one_call_and_leaves_the_rest():
    tree = {"a": kenaz.Tensor(da.ones(4, chunks=2)), "b": da.arange(3, chunks=2), "c": 1.5}
    out = kenaz.materialize(tree)
    assert isinstance(out["a"], kenaz.Tensor) and isinstance(out["a"]._value, np.ndarray)
    np.testing.assert_array_equal(out["b"], np.arange(3))
    assert out["c"] == 1.5


def test_jvp_and_vmap_on_dask_values_equal_numpys():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(6, 3))
    f = lambda v: knp.sum(knp.exp(knp.sin(v)) * v, axis=-1)
    _, tangent = kenaz.jvp(f, (da.from_array(x, chunks=3),), (da.ones((6, 3), chunks=3),))
    _, expected = kenaz.jvp(f, (x,), (np.ones((6, 3)),))
    np.testing.assert_allclose(kenaz.materialize(tangent).numpy(), expected.numpy(), rtol=1e-12)
    batched = kenaz.vmap(kenaz.grad(lambda v: knp.sum(knp.sin(v) ** 2)))(da.from_array(x, chunks=3))
    expected = kenaz.vmap(kenaz.grad(lambda v: knp.sum(knp.sin(v) ** 2)))(x)
    np.testing.assert_allclose(kenaz.materialize(batched).numpy(), expected.numpy(), rtol=1e-12)


# -- data-parallel fit on a LocalCluster of 2 worker processes ------------------------------
distributed = pytest.importorskip("dask.distributed")


# The tests that use the cluster run in this order on one pytest-xdist worker, as the whole
# file does (--dist loadfile, tests/conftest.py): one cluster, and the worker-restart test
# followed by the tests that wait for the restarted worker.
@pytest.fixture(scope="module")
def client():
    # Loopback only, every port chosen by the OS, no dashboards: another pytest-xdist
    # worker, or another checkout's test run on the same machine, can start its own at once.
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        scheduler_port=0,  # workers' and nannies' ports are the OS's choice by default
        dashboard_address=None,
        worker_dashboard_address=None,
        # The scheduler's HTTP server (health routes) runs without a dashboard too, on 8787
        # unless told otherwise: an ephemeral port on the loopback instead.
        scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
    )
    # Not the default scheduler: the other tests of this module compute on Dask's local
    # schedulers (and count their graphs), whichever worker and order they run in.
    client = distributed.Client(cluster, set_as_default=False, timeout=60)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


def _assert_same_training(local, remote):
    for name in local.params:
        np.testing.assert_allclose(
            np.asarray(remote.params[name]), np.asarray(local.params[name]), rtol=1e-9, atol=1e-12
        )
    np.testing.assert_allclose(remote.history["loss"], local.history["loss"], rtol=1e-9)


@pytest.mark.timeout(120)
def test_distributed_fit_equals_local_fit(client):
    params, x, y = _problem(examples=96)
    settings = dict(epochs=2, batch_size=32, progress=False)
    local = fit(_mlp_loss, params, optim.adam(1e-2), (x, y), **settings)
    remote = fit(_mlp_loss, params, optim.adam(1e-2), (x, y), client=client, **settings)
    _assert_same_training(local, remote)
    assert local.history["loss"][-1] < local.history["loss"][0]


def _loss_that_kills_its_worker_once(marker: str):
    def loss(params, x, y):
        try:
            os.remove(marker)  # only the first task to get here finds the marker
        except FileNotFoundError:
            pass
        else:
            os._exit(1)  # the worker process dies mid-task, mid-epoch
        return _mlp_loss(params, x, y)

    return loss


@pytest.mark.timeout(180)
def test_distributed_fit_survives_a_worker_killed_mid_epoch(client, tmp_path):
    params, x, y = _problem(examples=96)
    settings = dict(epochs=1, batch_size=32, progress=False)
    local = fit(_mlp_loss, params, optim.adam(1e-2), (x, y), **settings)
    marker = tmp_path / "kill-a-worker"
    marker.write_text("")
    loss = _loss_that_kills_its_worker_once(str(marker))
    remote = fit(loss, params, optim.adam(1e-2), (x, y), client=client, **settings)
    assert not marker.exists()  # a worker did die
    _assert_same_training(local, remote)


# -- key= (dropout) and state= (batch-norm statistics) with a client --------------------------
def _dropout_loss(params, x, y, key):
    hidden = nn.dropout(knp.tanh(x @ params["w1"] + params["b1"]), 0.3, key)
    return knp.mean((hidden @ params["w2"] - y) ** 2)


_norm = nn.BatchNorm(5)


def _batch_norm_loss(params, state, x, y):
    normalized, state = _norm(params["bn"], state, x, training=True)
    return _mlp_loss(params["mlp"], normalized, y), state


@pytest.fixture
def two_workers(client):
    """The cluster with both workers up (a test before may have killed one; the nanny restarts
    it): the shard count, and so the keys' split, is the number of workers at the first step."""
    client.wait_for_workers(2, timeout=60)
    return client


def _sharded(loss_fn, shards, stateful=False):
    """The local reference of distributed training: ``loss_fn`` on each shard (with its own
    key, from the same state), losses and states averaged weighted by shard size."""

    def loss(params, *arguments, key=None):
        state, batch = (arguments[0], arguments[1:]) if stateful else (None, arguments)
        bounds = shard_bounds(len(batch[0]), shards)
        keys = [None] * shards if key is None else shard_keys(key, shards)
        total, states = 0.0, []
        for shard_key, start, stop in zip(keys, bounds[:-1], bounds[1:]):
            weight = (stop - start) / len(batch[0])
            shard = tuple(part[start:stop] for part in batch)
            keyword = {} if shard_key is None else {"key": shard_key}
            out = loss_fn(params, *((state,) if stateful else ()), *shard, **keyword)
            if stateful:
                out, new_state = out
                states.append(kenaz.tree.map(lambda leaf, w=weight: w * leaf, new_state))
            total = total + weight * out
        if not stateful:
            return total
        return total, kenaz.tree.map(lambda *leaves: sum(leaves), *states)

    return loss


@pytest.mark.timeout(120)
def test_distributed_fit_with_a_key_equals_local_fit_with_the_same_shard_keys(two_workers):
    params, x, y = _problem(examples=96)
    settings = dict(epochs=1, batch_size=32, progress=False, key=7)
    remote = fit(_dropout_loss, params, optim.adam(1e-2), (x, y), client=two_workers, **settings)
    local = fit(_sharded(_dropout_loss, 2), params, optim.adam(1e-2), (x, y), **settings)
    _assert_same_training(local, remote)
    # The shards draw their own masks: one mask over the whole batch trains differently,
    # and so does another key.
    unsharded = fit(_dropout_loss, params, optim.adam(1e-2), (x, y), **settings)
    assert not np.allclose(unsharded.history["step_loss"], remote.history["step_loss"])
    other = fit(
        _sharded(_dropout_loss, 2), params, optim.adam(1e-2), (x, y), **settings | {"key": 8}
    )
    assert not np.allclose(other.history["step_loss"], remote.history["step_loss"])


@pytest.mark.timeout(120)
def test_distributed_fit_with_batch_norm_state_averages_the_shards_states(two_workers):
    _, x, y = _problem(examples=96)
    x = 3 * x + 2  # statistics far from the initial running ones
    mlp, _, _ = _problem()
    params = {"bn": _norm.init(0), "mlp": mlp}
    settings = dict(epochs=1, batch_size=32, progress=False, state=_norm.init_state())
    remote = fit(_batch_norm_loss, params, optim.adam(1e-2), (x, y), client=two_workers, **settings)
    local = fit(_sharded(_batch_norm_loss, 2, True), params, optim.adam(1e-2), (x, y), **settings)
    for part in ("bn", "mlp"):
        _assert_same_training(
            local._replace(params=local.params[part]), remote._replace(params=remote.params[part])
        )
    for name in ("mean", "var"):
        np.testing.assert_allclose(
            np.asarray(remote.state[name]), np.asarray(local.state[name]), rtol=1e-12
        )
    # The running mean moves exactly as on whole minibatches (the mean of the shard means).
    whole = fit(_batch_norm_loss, params, optim.adam(1e-2), (x, y), **settings)
    np.testing.assert_allclose(
        np.asarray(remote.state["mean"]), np.asarray(whole.state["mean"]), rtol=1e-12
    )
    assert float(np.min(np.asarray(remote.state["mean"]))) > 0.1


def test_shard_states_average_floating_leaves_and_keep_the_first_shards_others():
    states = [
        {"mean": np.array([1.0, 2.0]), "count": 4},
        {"mean": np.array([4.0, 8.0]), "count": 5},
    ]
    averaged = average_states(states, [0.25, 0.75])
    np.testing.assert_allclose(np.asarray(averaged["mean"]), [3.25, 6.5])
    assert averaged["count"] == 4


# -- decompositions stay lazy on Dask --------------------------------------------------------
class _ComputeCounter:
    """Counts the graphs Dask's local schedulers run (``dask.compute``, ``.compute()``, and
    the computes ``numpy.linalg`` makes when it is handed a Dask array)."""

    def __enter__(self):
        from dask.callbacks import Callback

        self.count = 0
        self._callback = Callback(start=self._started)
        self._callback.__enter__()
        return self

    def _started(self, dsk):
        self.count += 1

    def __exit__(self, *exc):
        self._callback.__exit__(*exc)


def _stack(seed=3, n=4):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(3, n, n))
    return a, a @ np.swapaxes(a, -1, -2) + n * np.eye(n)  # general, and positive definite


_la = knp.linalg
DASK_DECOMPOSITIONS = {  # a scalar of each decomposition, invariant to the vectors' signs
    "cholesky": (lambda a, spd: knp.sum(_la.cholesky(spd) ** 2)),
    "eigh": (lambda a, spd: knp.sum(_la.eigh(spd)[0] ** 2 + _la.eigh(spd)[1][..., 0, :] ** 2)),
    "eigvalsh": (lambda a, spd: knp.sum(_la.eigvalsh(spd) ** 3)),
    "svd": (
        lambda a, spd: knp.sum(_la.svd(a, full_matrices=False)[1] + _la.svd(a)[0][..., 0] ** 2)
    ),
    "svdvals": (lambda a, spd: knp.sum(_la.svdvals(a))),
    "qr": (lambda a, spd: knp.sum(_la.qr(a)[1] ** 2)),
    "slogdet": (lambda a, spd: knp.sum(_la.slogdet(a)[1])),
    "det": (lambda a, spd: knp.sum(_la.det(spd))),
    "pinv": (lambda a, spd: knp.sum(_la.pinv(a) ** 2)),
    "eig": (lambda a, spd: knp.sum(knp.real(_la.eig(spd)[0]) ** 2)),
    "eigvals": (lambda a, spd: knp.sum(knp.real(_la.eigvals(a) ** 2))),
    "solve": (lambda a, spd: knp.sum(_la.solve(spd, a))),
    "inv": (lambda a, spd: knp.sum(_la.inv(spd))),
}


@pytest.mark.parametrize("name", list(DASK_DECOMPOSITIONS))
def test_decompositions_and_their_gradients_stay_lazy_on_dask(name):
    f = DASK_DECOMPOSITIONS[name]
    a, spd = _stack()
    lazy_args = (da.from_array(a, chunks=(2, 2, 2)), da.from_array(spd, chunks=(1, 4, 2)))
    with _ComputeCounter() as computes:
        value, grads = kenaz.value_and_grad(f, argnums=(0, 1))(*lazy_args)
    assert computes.count == 0, f"{name}: building the gradient computed {computes.count} graphs"
    assert isinstance(value._value, da.Array)
    assert all(isinstance(g._value, da.Array) for g in grads)
    expected_value, expected_grads = kenaz.value_and_grad(f, argnums=(0, 1))(a, spd)
    got_value, got_grads = kenaz.materialize((value, grads))
    np.testing.assert_allclose(got_value.numpy(), expected_value.numpy(), rtol=1e-10)
    for got, expected in zip(got_grads, expected_grads):
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-8, atol=1e-10)


def test_each_result_of_a_lazy_decomposition_has_numpys_shape_dtype_and_values():
    a, spd = _stack(n=3)
    for function, argument in [
        (_la.eigh, spd),
        (_la.slogdet, a.astype(np.float32)),
        (_la.eig, a),
        (lambda m: _la.svd(m, full_matrices=False), a[:, :, :2]),
        (_la.qr, a[:, :, :2]),
    ]:
        expected = function(argument)
        with _ComputeCounter() as computes:
            got = function(da.from_array(argument, chunks=(2, 1, 1)))
        assert computes.count == 0
        for g, e in zip(got, expected, strict=True):
            assert isinstance(g._value, da.Array)
            assert (g.shape, g.dtype) == (e.shape, e.dtype)
            np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-5)


def test_dask_blocked_cholesky_of_one_matrix_is_the_lower_factor():
    # Dask's own blocked algorithm (square blocks of one 2-d matrix), not array-api-compat's
    # wrapper, which returns the upper factor.
    _, spd = _stack(n=6)
    with _ComputeCounter() as computes:
        lower = _la.cholesky(da.from_array(spd[0], chunks=3))
    assert computes.count == 0 and len(lower._value.chunks[0]) == 2
    np.testing.assert_allclose(lower.numpy(), np.linalg.cholesky(spd[0]), rtol=1e-12)


def test_a_tall_skinny_svd_keeps_dasks_tsqr():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(40, 3))
    u, s, vh = _la.svd(da.from_array(x, chunks=(10, 3)), full_matrices=False)
    assert len(u._value.chunks[0]) == 4  # still chunked along the rows
    np.testing.assert_allclose(s.numpy(), np.linalg.svd(x, compute_uv=False), rtol=1e-12)
    np.testing.assert_allclose((u * s[None, :]) @ vh, x, atol=1e-12)


def test_complete_svd_and_qr_stay_lazy_and_equal_numpys():
    # Not differentiable (the extra vectors are not unique), but computed on Dask all the same.
    a = np.random.default_rng(6).normal(size=(2, 4, 3))
    lazy = da.from_array(a, chunks=(1, 2, 3))
    with _ComputeCounter() as computes:
        got = [*_la.svd(lazy), *_la.qr(lazy, mode="complete")]
    assert computes.count == 0 and all(isinstance(g._value, da.Array) for g in got)
    expected = [*_la.svd(a), *_la.qr(a, mode="complete")]
    for g, e in zip(got, expected, strict=True):
        assert (g.shape, g.dtype) == (e.shape, e.dtype)
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-10, atol=1e-12)
