"""Primitives by family. Import order matters only for the cycle with ``kenaz.tensor``."""
