"""The plugins layer: the seven kinds, their interfaces, and the registry that discovers them lazily."""
