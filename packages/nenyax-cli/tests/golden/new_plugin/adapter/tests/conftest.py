"""Keep the `nenyax check` runs of these tests out of your own tier cache (what `nenyax list` shows)."""

from nenyax.testing.suites.isolation import own_checks_dir  # noqa: F401 - an autouse fixture
