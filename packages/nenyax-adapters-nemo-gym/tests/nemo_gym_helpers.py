"""Helpers the tests share: URIs of started servers and rows files of their own."""

import json


def uri(server, **params):
    """``nemo_gym:<url>?rows=<the server's example rows>`` plus `params`."""
    query = {"rows": server.datasets["example"], **params} if "rows" not in params else params
    return f"nemo_gym:{server.url}?" + "&".join(f"{k}={v}" for k, v in query.items())


def write_rows(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def question(text="Say yes.", **fields):
    return {"responses_create_params": {"input": [{"role": "user", "content": text}]}, **fields}
