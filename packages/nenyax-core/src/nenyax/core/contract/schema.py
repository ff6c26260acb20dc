"""The layout version of every persisted record (manifests, trajectories, reports, run files)."""

SCHEMA_VERSION = 1
"""Bumped on any incompatible change to a persisted record; readers refuse newer records with a clear error."""
