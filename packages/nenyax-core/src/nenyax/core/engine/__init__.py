"""The engine layer: environment bases for the three modes, policies, episode loops, rollouts and sinks."""
