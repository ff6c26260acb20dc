"""Entry-point module: declares the backend without importing it (nor the docker SDK)."""

from nenyax.core.hookspecs import PluginSpec, hookimpl


@hookimpl
def nenyax_register_sandboxes() -> PluginSpec:
    """The ``docker`` sandbox."""
    return PluginSpec(
        kind="sandbox",
        name="docker",
        factory="nenyax.sandboxes.docker.backend:DockerSandbox",
        summary="containers on a Docker Engine API at DOCKER_HOST (Docker, or podman system service)",
    )
