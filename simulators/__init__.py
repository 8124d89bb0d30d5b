"""Hardware simulators: pure device models behind the same wire protocols and URLs.

`simulators.install.install()` registers their URLs with the drivers; the drivers never import
this package.
"""
