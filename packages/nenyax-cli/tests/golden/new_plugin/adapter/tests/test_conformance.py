"""The adapter conformance kit against the installed `acme`: each check is a test.

`nenyax adapter-check acme` runs the same checks from the command line.
"""

from nenyax.testing import conformance_suite


class TestAcmeConformance(conformance_suite("adapter")):  # type: ignore[misc]
    plugin = "acme"
