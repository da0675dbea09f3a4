"""The jit pipeline: trace a function into a program, optimize it, compile it, stage it.

Read in this order:

- :mod:`~kenaz.compiler.program`: tracing (``make_program``) into a flat
  :class:`~kenaz.compiler.program.Program` of equations, and replaying one;
- :mod:`~kenaz.compiler.passes`: the optimization passes on a program's equations;
- :mod:`~kenaz.compiler.codegen`: a program compiled into one generated Python
  function on NumPy values;
- :mod:`~kenaz.compiler.staged`: a program as a function, compiled with no handler
  installed and one call op with derived rules under transformations;
- :mod:`~kenaz.compiler.api`: ``kenaz.jit``, the cache of traces per signature.

The package is not named ``jit``: ``kenaz.jit`` is the function, and a module of
the same name would be shadowed by it.
"""
