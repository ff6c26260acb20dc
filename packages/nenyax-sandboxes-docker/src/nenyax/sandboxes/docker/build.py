"""One image build through the engine's ``/build`` endpoint (the classic builder, API 1.41).

The SDK's `APIClient.build` takes no ``cgroupparent``; without it a local engine runs each ``RUN``
step in a group of its own at the root of every hierarchy (podman: ``/buildah-...``), out of our
memory bound, and out of reach when a build runs past its timeout. So the request is made here, with
the SDK's own context packing, and each step runs in a group we own and can empty.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import docker.api.build
import docker.utils
from nenyax.sandboxes.docker import cgroups


class Build:
    """A build of the context `context` (its `dockerfile`) into the image `tag`; `wait` runs it."""

    def __init__(self, api: Any, context: Path, dockerfile: str, tag: str) -> None:
        self.api, self.context, self.dockerfile, self.tag = api, context, dockerfile, tag
        self.said: list[str] = []
        """The build's last lines of output."""
        self.error: str | None = None
        """What the engine said failed, if the build did."""

    def _packed(self) -> bytes:
        # What the SDK's own build does: .dockerignore patterns, and the Dockerfile named in the context.
        ignore = self.context / ".dockerignore"
        lines = ignore.read_text().splitlines() if ignore.is_file() else []
        exclude = [line.strip() for line in lines if line.strip() and not line.strip().startswith("#")]
        dockerfile = docker.api.build.process_dockerfile(self.dockerfile, str(self.context))
        packed = docker.utils.tar(str(self.context), exclude=exclude, dockerfile=dockerfile)
        data: bytes = packed.read()
        packed.close()
        return data

    def wait(self, args: dict[str, str], network: str, group: str | None) -> BaseException | None:
        """Run the build to its end (blocking); the failure to reach the engine, if any, is returned."""
        params: dict[str, Any] = {
            "t": self.tag,
            "dockerfile": self.dockerfile,
            "buildargs": json.dumps(args),
            "pull": False,
            "rm": True,
            "forcerm": True,
            "networkmode": network,
        }
        if group is not None:
            params["cgroupparent"] = group
        try:
            response = self.api._post(
                self.api._url("/build"),
                params=params,
                data=self._packed(),
                headers={"Content-Type": "application/tar"},
                stream=True,
                timeout=None,
            )
            self.api._raise_for_status(response)
            for item in self.api._stream_helper(response, decode=True):
                if "stream" in item:
                    self.said.extend(line for line in str(item["stream"]).splitlines() if line.strip())
                    del self.said[:-20]
                if item.get("error") or item.get("errorDetail"):
                    self.error = str(item.get("error") or item.get("errorDetail"))
        except Exception as exc:  # noqa: BLE001 - handed to the caller's thread, which says it
            return exc
        return None


def kill_group(group: str) -> None:
    """SIGKILL every process in `group` and the groups below it (what a build step still runs)."""
    if os.geteuid() != 0:
        return
    for folder in cgroups.folders(group):
        for procs in folder.rglob("cgroup.procs"):
            try:
                pids = procs.read_text().split()
            except OSError:
                continue
            for pid in pids:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, PermissionError, ValueError):
                    continue
