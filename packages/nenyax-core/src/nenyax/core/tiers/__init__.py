"""The tiers layer: the environment checks behind `nenyax check` (connectable < evaluable < trainable < audited)."""
