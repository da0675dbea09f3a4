"""More of NumPy's namespace, composed from kenaz primitives (so differentiable for free).

What HIPS autograd differentiates beyond the basics, and the Array API names, one
module per family:

- :mod:`.elementwise`: the Array API's aliases, zero-derivative helpers (``signbit``,
  ``trunc``...), ``fmod``, ``copysign``, ``frexp``, ``nan_to_num``...;
- :mod:`.reductions`: NaN-aware reductions, ``ptp``, ``cumulative_sum``/``_prod``;
- :mod:`.statistics`: quantiles, percentiles, medians, ``cov``, ``corrcoef``;
- :mod:`.products`: ``kron``, ``vecdot``, ``matvec``, ``vecmat``...;
- :mod:`.signals`: ``convolve``, ``correlate``, ``interp``, ``trapezoid``, ``gradient``,
  ``unwrap``...;
- :mod:`.polynomials`: ``polyval``, ``polyfit``, ``vander``, polynomial arithmetic;
- :mod:`.grids`: ``logspace``, ``geomspace``, ``meshgrid``, ``indices``;
- :mod:`.shape_manipulation`: splitting, joining, ``rot90``, ``insert``, ``delete``...;
- :mod:`.selection`: ``select``, ``choose``, ``compress``, ``partition``...;
- :mod:`.indices_and_sets`: ``unique`` (differentiable in the values it returns), and
  functions whose result depends on values in a way no derivative can follow
  (``searchsorted``, ``argwhere``...), which return constant tensors;
- :mod:`.predicates`: ``can_cast``, ``isdtype``, ``array_equal``...;
- :mod:`.conversions`: the ``asarray`` variants and ``copy``;
- :mod:`.padding`: ``pad`` in every one of NumPy's modes;
- :mod:`.writes`: ``put``, ``place``, ``put_along_axis``, ``fill_diagonal`` (in place, and
  followed by the derivatives);
- :mod:`.counting`: ``bincount`` and ``histogram``, differentiable in their weights;
- :mod:`.functional`: ``piecewise``, ``apply_along_axis``, ``apply_over_axes``;
- :mod:`.polynomial_roots`: ``roots``, ``polydiv``, ``sort_complex``.

``kenaz.numpy`` takes every name in ``__all__`` below; no two families define the
same name, and none redefines one of ``kenaz.numpy``'s own.
"""

from . import (
    conversions,
    counting,
    elementwise,
    functional,
    grids,
    indices_and_sets,
    padding,
    polynomial_roots,
    polynomials,
    predicates,
    products,
    reductions,
    selection,
    shape_manipulation,
    signals,
    statistics,
    writes,
)
from .conversions import *  # noqa: F403
from .counting import *  # noqa: F403
from .elementwise import *  # noqa: F403
from .functional import *  # noqa: F403
from .grids import *  # noqa: F403
from .indices_and_sets import *  # noqa: F403
from .padding import *  # noqa: F403
from .polynomial_roots import *  # noqa: F403
from .polynomials import *  # noqa: F403
from .predicates import *  # noqa: F403
from .products import *  # noqa: F403
from .reductions import *  # noqa: F403
from .selection import *  # noqa: F403
from .shape_manipulation import *  # noqa: F403
from .signals import *  # noqa: F403
from .statistics import *  # noqa: F403
from .writes import *  # noqa: F403

# One `+=` per family: the form type checkers read.
__all__: list[str] = []
__all__ += conversions.__all__
__all__ += counting.__all__
__all__ += elementwise.__all__
__all__ += functional.__all__
__all__ += grids.__all__
__all__ += indices_and_sets.__all__
__all__ += padding.__all__
__all__ += polynomials.__all__
__all__ += predicates.__all__
__all__ += products.__all__
__all__ += reductions.__all__
__all__ += polynomial_roots.__all__
__all__ += selection.__all__
__all__ += shape_manipulation.__all__
__all__ += signals.__all__
__all__ += statistics.__all__
__all__ += writes.__all__
