"""The contract layer: the data every format is routed into, and the one converter that persists it."""
