"""The Dask backend: lazy gradients equal NumPy's, and data-parallel ``fit`` on a LocalCluster."""

from __future__ import annotations

import os

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp
from kenaz import optim
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


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        worker_dashboard_address=None,
    )
    client = distributed.Client(cluster)
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


def test_fit_with_a_client_refuses_state_and_key(client):
    params, x, y = _problem()
    with pytest.raises(NotImplementedError, match="client="):
        fit(_mlp_loss, params, optim.sgd(0.1), (x, y), key=0, client=client, progress=False)
