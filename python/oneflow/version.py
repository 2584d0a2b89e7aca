"""The package version: the OneFlow API level this package implements (0.3), as
`oneflow.__version__`. setup.py reads it from here."""
__version__ = "0.3.0"
