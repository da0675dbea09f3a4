"""``kenaz.scipy.stats``: log-densities, densities and distribution functions, differentiable.

One module per distribution, as in HIPS autograd (``stats.norm.logpdf``,
``stats.multivariate_normal.logpdf`` ...), with SciPy's argument names.
Distribution functions (``cdf``) are differentiable in ``x`` (and in
``loc``/``scale`` where they exist); a derivative in a shape parameter
(``df``, ``a``) raises ``NotImplementedError``, as in autograd.
"""

from . import beta, chi2, dirichlet, gamma, multivariate_normal, norm, poisson, t

__all__ = ["beta", "chi2", "dirichlet", "gamma", "multivariate_normal", "norm", "poisson", "t"]
