"""The judge conformance kit against the installed `acme`: each check is a test.

`nenyax judge-check acme` runs the same checks from the command line.
"""

from nenyax.testing import conformance_suite


class TestAcmeConformance(conformance_suite("judge")):  # type: ignore[misc]
    plugin = "acme"
