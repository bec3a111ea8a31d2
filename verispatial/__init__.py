"""verispatial: a certifying compiler and checker for spatial dataflow accelerators."""

__version__ = "0.1.0"
