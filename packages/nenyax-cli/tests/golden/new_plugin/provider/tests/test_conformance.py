"""The provider conformance kit against the installed `acme`: each check is a test.

`nenyax provider-check acme` runs the same checks from the command line.
"""

from nenyax.testing import conformance_suite


class TestAcmeConformance(conformance_suite("provider")):  # type: ignore[misc]
    plugin = "acme"
