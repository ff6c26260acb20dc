"""P4: 100k small trajectories to Parquet, rows/s, against the plain pyarrow write of the same rows.

    python bench/export_parquet.py [--trajectories 100000 --shape raw --repeats 3]

Needs nenyax-core and nenyax-exporters-parquet installed. The trajectories are small question/answer
episodes (a system and user prompt, one assistant reply, one recorded model call with 8-24 prompt and
4-16 completion token ids and their logprobs, a judgment), built in memory first (not timed).

Timed, each the median of `--repeats`:

- ``shape``: `nenyax.core.contract.rows.rows` making the rows of `--shape` from the trajectories;
- ``nenyax``: the ``parquet`` exporter writing those rows (`write_batch` in `export`'s batches, the
  columns built one by one, zstd) - what `nenyax export` adds once rows exist;
- ``anchor``: ``pa.Table.from_pylist(rows, schema=...)`` + ``pq.write_table(compression="zstd")`` on the
  same rows, the plain pyarrow write;
- ``export``: the whole `nenyax.core.engine.export.export` from a trajectories.jsonl of the same
  episodes (reading and structuring each record, shaping, writing), what the command does end to end.

Prints rows/s of each and the ratio nenyax / anchor (goal: the writer >= 100k rows/s).
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from _report import figure

from nenyax.core.contract import rows as row_shapes
from nenyax.core.contract import serde
from nenyax.core.contract.manifest import Mode
from nenyax.core.contract.trajectory import Judgment, ModelCall, PolicyInfo, Status, Step, Timing, Trajectory
from nenyax.core.engine.export import BATCH, export
from nenyax.core.plugins.registry import default_registry
from nenyax.exporters.parquet.arrow import arrow_schema, arrow_type, json_text


def trajectories(n: int, seed: int = 0) -> list[Trajectory]:
    """`n` small question/answer episodes, 4 per group."""
    rng = random.Random(seed)
    policy = PolicyInfo(kind="endpoint", name="local:smollm2-135m", provider="local", model="smollm2-135m")
    made = []
    for i in range(n):
        task = random.Random(i // 4)  # the 4 samples of a group answer the same question
        a, b = task.randrange(100), task.randrange(100)
        question = f"What is {a} + {b}?"
        answer = str(a + b + rng.choice((0, 0, 1)))
        messages = ({"role": "system", "content": "Answer briefly."}, {"role": "user", "content": question})
        reply = {"role": "assistant", "content": f"<answer>{answer}</answer>"}
        prompt_ids = tuple(rng.randrange(49152) for _ in range(rng.randint(8, 24)))
        completion_ids = tuple(rng.randrange(49152) for _ in range(rng.randint(4, 16)))
        call = ModelCall(
            messages=messages,
            response=reply,
            provider="local",
            model="smollm2-135m",
            prompt_token_ids=prompt_ids,
            completion_token_ids=completion_ids,
            logprobs=tuple(-rng.random() for _ in completion_ids),
            finish_reason="stop",
            usage={"prompt_tokens": len(prompt_ids), "completion_tokens": len(completion_ids)},
        )
        score = float(answer == str(a + b))
        made.append(
            Trajectory(
                env_uri="reasoning_gym:basic_arithmetic",
                manifest_digest="sha256:0",
                mode=Mode.STEP,
                task_id=f"basic_arithmetic/{i // 4}",
                seed=i // 4,
                policy=policy,
                status=Status.OK,
                judgment=Judgment(score=score, passed=score == 1.0, judge="reasoning_gym:basic_arithmetic"),
                steps=(Step(observation=question, action=reply["content"], reward=score, terminated=True),),
                model_calls=(call,),
                messages=(*messages, reply),
                timing=Timing(started=1.7e9 + i, ended=1.7e9 + i + 0.5),
                group_id=f"g{i // 4}",
                sample=i % 4,
            )
        )
    return made


def _median(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    """Run P4 and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trajectories", type=int, default=100_000)
    parser.add_argument("--shape", default="raw", choices=("raw", "sft", "sft-tokens", "dpo"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-export", action="store_true", help="Leave out the end-to-end export row.")
    args = parser.parse_args()
    options = row_shapes.RowOptions(tokenized=args.shape == "sft-tokens")
    shape = "sft" if args.shape == "sft-tokens" else args.shape
    made = trajectories(args.trajectories)
    schema = row_shapes.schema(shape, options)
    shaped: list[dict] = []

    def make_rows() -> None:
        shaped[:] = row_shapes.rows(made, shape, options)

    shape_s = _median(make_rows, args.repeats)
    exporter = default_registry().create("exporter", "parquet")
    with tempfile.TemporaryDirectory() as folder:
        ours_path, anchor_path = Path(folder) / "nenyax.parquet", Path(folder) / "anchor.parquet"

        def ours() -> None:
            writer = exporter.open(str(ours_path), schema=schema)
            for start in range(0, len(shaped), BATCH):
                writer.write_batch(shaped[start : start + BATCH])
            writer.close()

        arrow = arrow_schema(schema)
        # pyarrow builds no `arrow.json` value from Python objects: the anchor gets those fields as JSON text
        # already (untimed, in its favour) and casts its table to the schema.
        storage = pa.schema([pa.field(c.name, arrow_type(c.type, storage=True)) for c in schema.columns])
        texted = [{c.name: json_text(row.get(c.name), c.type) for c in schema.columns} for row in shaped]

        def anchor() -> None:
            table = pa.Table.from_pylist(texted, schema=storage).cast(arrow)
            pq.write_table(table, anchor_path, compression="zstd")

        # pyarrow's first conversion of a process pays a one-off set-up (over a second here): paid before timing.
        pa.Table.from_pylist(texted[:100], schema=storage)
        anchor_s = _median(anchor, args.repeats)
        ours_s = _median(ours, args.repeats)
        assert pq.read_table(ours_path).equals(pq.read_table(anchor_path)), "the two files hold different rows"
        n = len(shaped)
        print(f"{len(made):,} trajectories -> {n:,} {args.shape} rows; median of {args.repeats}")
        print(f"shape   rows()                       {shape_s:7.3f} s  {n / shape_s:>10,.0f} rows/s")
        print(f"anchor  from_pylist + write_table    {anchor_s:7.3f} s  {n / anchor_s:>10,.0f} rows/s")
        print(f"nenyax  parquet exporter (batches)   {ours_s:7.3f} s  {n / ours_s:>10,.0f} rows/s")
        print(f"ratio   nenyax / anchor rows/s       {anchor_s / ours_s:7.2f}")
        print(f"size    {ours_path.stat().st_size / 1e6:.1f} MB (anchor {anchor_path.stat().st_size / 1e6:.1f} MB)")
        said = f"{args.shape} rows, the writer; anchor {n / anchor_s:,.0f} rows/s ({anchor_s / ours_s:.2f}x it)"
        figure(f"P4.{args.shape}", n / ours_s, goal=100_000, better="higher", unit="rows/s", detail=said)
        if not args.skip_export:
            source = Path(folder) / "trajectories.jsonl"
            source.write_bytes(b"".join(serde.dumps(t) + b"\n" for t in made))
            flag = {"tokenized": True} if options.tokenized else {}
            out = Path(folder) / "export.parquet"
            whole_s = _median(lambda: export(source, to="parquet", rows=shape, out=out, **flag), 1)
            print(f"export  jsonl -> parquet, end to end {whole_s:7.3f} s  {n / whole_s:>10,.0f} rows/s")


if __name__ == "__main__":
    main()
