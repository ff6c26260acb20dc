"""What noxfile.py builds its sessions from: the workspace's declared needs, the host, the podman engine."""
