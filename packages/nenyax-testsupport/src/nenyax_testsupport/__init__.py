"""Helpers only this repository's tests, bench/ and CI use; never published (see this distribution's README).

A top-level package of its own, not under ``nenyax``, so that it never reads as part of the product: what
plugin authors use is the conformance kit, ``nenyax.testing``, shipped in nenyax-core.
"""
