"""The exporter conformance kit against the installed `acme`: each check is a test.

`nenyax exporter-check acme` runs the same checks from the command line.
"""

from nenyax.testing import conformance_suite


class TestAcmeConformance(conformance_suite("exporter")):  # type: ignore[misc]
    plugin = "acme"
