"""The integration suite's shared fixtures."""

from nenyax.testing.suites.isolation import own_checks_dir  # noqa: F401 - autouse: no test writes the user's tier cache
