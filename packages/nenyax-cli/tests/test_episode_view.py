"""The one view both replays render: the terminal and the HTML replay show the same facts of a trajectory."""

import html.parser

import attrs
import pytest
from rich.console import Console

from nenyax.cli.episode_view import episode_view, shown
from nenyax.cli.html_replay import render_html
from nenyax.cli.replay import render
from nenyax.core import Judgment, Mode, ModelCall, PolicyInfo, Status, Step, Timing, Trajectory

CALL = ModelCall(
    messages=({"role": "user", "content": "What is 2 + 2?"},),
    response={"role": "assistant", "content": "four <b>4</b>"},
    prompt_token_ids=(1, 2, 3),
    completion_token_ids=(7, 8),
    duration_s=0.25,
)


def _traj(**fields):
    base = {
        "env_uri": "arith:add",
        "manifest_digest": "sha256:0",
        "mode": Mode.STEP,
        "task_id": "add/0/0",
        "seed": 3,
        "policy": PolicyInfo(kind="endpoint", name="openai:m", revision="sha256:" + "ab" * 32),
        "status": Status.OK,
        "judgment": Judgment(score=1.0, passed=True, feedback="exact match", judge="arith:exact"),
        "timing": Timing(started=10.0, ended=11.5),
    }
    return Trajectory(**{**base, **fields})


TRAJECTORIES = {
    "a chat model on a step env": _traj(
        steps=(
            Step(observation="2 + 2", action="4", reward=1.0, terminated=True, text="four <b>4</b>", info={"k": "v"}),
        ),
        model_calls=(CALL,),
        messages=(*CALL.messages, CALL.response),
    ),
    "a numeric env, no model": _traj(
        policy=PolicyInfo(kind="reference"),
        steps=(
            Step(observation=[0.5, 1], action=1, reward=1.0),
            Step(observation=[0.25, 2], action=0, reward=0.0, truncated=True),
        ),
        judgment=Judgment(score=1.0),
    ),
    "a native loop with a tool call": _traj(
        mode=Mode.ROLLOUT,
        model_calls=(
            ModelCall(
                messages=({"role": "system", "content": "be brief"}, {"role": "user", "content": "add 1 and 2"}),
                response={"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "add"}}]},
                usage={"prompt_tokens": 9, "completion_tokens": 4},
            ),
            ModelCall(messages=({"role": "user", "content": "tool said 3"},), response={"content": "3"}),
        ),
        judgment=Judgment(score=0.0, passed=False),
    ),
    "an infrastructure failure": _traj(
        status=Status.INFRA_ERROR, judgment=None, error="The model server kept failing.", timing=None
    ),
}


class _Text(html.parser.HTMLParser):
    def __init__(self, page):
        super().__init__()
        self.parts = []
        self.feed(page)

    def handle_data(self, data):
        self.parts.append(data)


def _both(traj):
    console = Console(record=True, width=400, color_system=None)
    render(traj, console)
    terminal = console.export_text()
    page = render_html(traj)
    visible = "\n".join(_Text(page.split('<script type="application/json"')[0]).parts)
    return terminal, visible


@pytest.mark.parametrize("name", TRAJECTORIES)
def test_both_replays_show_every_fact_of_the_view(name):
    traj = TRAJECTORIES[name]
    view = episode_view(traj)
    terminal, page = _both(traj)
    facts = [view.env_uri, view.policy, f"{view.calls} model call(s), {view.completion_tokens} completion tokens"]
    for turn in view.turns:
        facts += [f"turn {turn.index}", *(v for _, v in turn.info), *(k for k, _ in turn.info)]
        facts += [x for x in (turn.observation, turn.prompt, turn.text, turn.action, turn.ended) if x]
        facts += [turn.call.summary] if turn.call else []
        facts += [f"reward {turn.reward:g}"] if turn.reward is not None else []
    facts += [view.feedback, view.judge, view.error, view.no_score]
    for fact in filter(None, facts):
        assert fact in terminal, (fact, terminal)
        assert fact in page, (fact, page)
    assert view.verdict("  ") in terminal
    assert view.verdict(" · ") in page


def test_a_step_turn_shows_the_prompt_the_reply_and_its_tokens():
    [turn] = episode_view(TRAJECTORIES["a chat model on a step env"]).turns
    # The observation is inside what the model was shown: that text is shown once, as the prompt.
    assert (turn.observation, turn.prompt, turn.text, turn.action) == (None, "What is 2 + 2?", "four <b>4</b>", "4")
    assert turn.call.summary == "3 prompt / 2 completion tokens, 0.25 s"
    assert (turn.reward, turn.ended, turn.info) == (1.0, "terminated", (("k", "v"),))


def test_numeric_values_read_as_their_json_and_an_unchanged_prompt_is_not_repeated():
    view = episode_view(TRAJECTORIES["a numeric env, no model"])
    assert [(t.observation, t.action, t.prompt, t.text, t.ended) for t in view.turns] == [
        ("[0.5,1]", "1", None, None, ""),
        ("[0.25,2]", "0", None, None, "truncated"),
    ]
    assert view.policy == "reference: reference"
    assert view.verdict("  ") == "score 1"


def test_recorded_arrays_read_as_their_numbers_or_as_what_they_are():
    small = {"__ndarray__": "float32", "values": [0.5, -1.0]}
    image = {"__ndarray__": "uint8", "shape": [210, 160, 3], "data": "AAAA"}
    assert shown(small) == "[0.5,-1.0]"
    assert (
        shown({"image": image, "pair": [small, 1]})
        == '{"image":"<uint8 array of shape (210, 160, 3)>","pair":[[0.5,-1.0],1]}'
    )


def test_a_native_loop_is_replayed_call_by_call():
    view = episode_view(TRAJECTORIES["a native loop with a tool call"])
    first, second = view.turns
    assert (first.observation, first.prompt, first.text, first.reward) == (None, "add 1 and 2", None, None)
    assert first.action == '[{"id":"c1","function":{"name":"add"}}]'
    assert first.call.summary == "9 prompt / 4 completion tokens, 0.00 s"  # from usage: no token ids recorded
    assert (second.prompt, second.text, second.call.summary) == (
        "tool said 3",
        "3",
        "? prompt / ? completion tokens, 0.00 s",
    )
    assert view.completion_tokens == 4
    assert view.verdict(" · ") == "score 0 · not passed"


def test_an_unjudged_episode_says_why_there_is_no_score():
    view = episode_view(TRAJECTORIES["an infrastructure failure"])
    assert not view.judged
    assert view.score is None
    assert view.verdict(" · ") == "not judged"
    assert view.no_score == "the infrastructure failed"
    assert view.seconds is None


def test_an_unseeded_episode_reads_unseeded_never_seed_none():
    traj = _traj(seed=None, steps=(Step(observation="q", action="a", reward=0.0, terminated=True),))
    console = Console(record=True, width=200)
    render(traj, console=console)
    text = console.export_text()
    assert "(unseeded)" in text
    assert "seed None" not in text
    assert "unseeded" in render_html(traj)
    assert "seed None" not in render_html(traj)


def test_an_interrupted_episode_says_so():
    traj = _traj(
        status=Status.INTERRUPTED, judgment=None, error="The run was interrupted (Ctrl-C) before the episode ended."
    )
    assert episode_view(traj).no_score == "the run was interrupted (Ctrl-C)"


HOSTILE = "red\x1b[31m text\x1b]0;pwned\x07 bell\x08 and \u202eevil [bold]markup[/bold]"


def test_environment_text_reaches_the_terminal_as_data():
    traj = _traj(steps=(Step(observation=HOSTILE, action=HOSTILE, reward=0.0, terminated=True, text=HOSTILE),))
    console = Console(record=True, width=300, force_terminal=True, color_system="truecolor")
    render(traj, console=console)
    raw = console.export_text(styles=False)
    assert "\x1b]" not in raw
    assert "\x07" not in raw
    assert "\x08" not in raw
    assert "\u202e" not in raw
    assert "\x1b[31m" not in raw  # the model's own escape, not rich's styling
    assert "red\\x1b[31m text\\x1b]0;pwned\\x07 bell\\x08 and \\u202eevil [bold]markup[/bold]" in raw


def test_check_evidence_is_data_too(capsys):
    from nenyax.cli.commands.check import render_report
    from nenyax.core.tiers.report import Tier, TierOutcome, TierReport, TierResult

    result = TierResult(id="x/y", tier=Tier.CONNECTABLE, outcome=TierOutcome.PASSED, evidence=HOSTILE, seconds=0.1)
    render_report(TierReport(uri="a:b", tier=Tier.CONNECTABLE, results=(result,)))
    out = capsys.readouterr().out
    assert "[bold]markup[/bold]" in out
    assert "\x1b]0;" not in out
    assert "\\x1b]0;pwned" in out


LONG = "word " * 60  # 300 characters: past any 80-column wrap


def _reply_turn(reply, finish_reason="stop", passed=True, info=None, system=None):
    call = ModelCall(
        messages=({"role": "user", "content": "q?"},),
        response={"role": "assistant", "content": reply},
        prompt_token_ids=(1, 2),
        completion_token_ids=tuple(range(5)),
        finish_reason=finish_reason,
    )
    messages = ({"role": "system", "content": system},) if system else ()
    return _traj(
        steps=(
            Step(observation="q?", action=reply, reward=float(passed), terminated=True, text=reply, info=info or {}),
        ),
        model_calls=(call,),
        messages=(*messages, *call.messages, call.response),
        judgment=Judgment(score=float(passed), passed=passed, judge="j"),
    )


def _panels(traj):
    console = Console(record=True, width=120, force_terminal=True, color_system="truecolor")
    render(traj, console)
    return console.export_text(styles=True)


def test_the_verdict_colour_follows_the_judgment_not_the_status():
    failed, passed = _reply_turn("1", passed=False), _reply_turn("1", passed=True)
    assert failed.status is Status.OK
    assert episode_view(failed).tone == "fail"
    assert 'class="verdict fail"' in render_html(failed)
    assert 'class="verdict pass"' in render_html(passed)
    red, green = "\x1b[1;31mscore 0", "\x1b[1;32mscore 1"
    assert red in _panels(failed)
    assert green not in _panels(failed)
    assert green in _panels(passed)
    undecided = _traj(judgment=Judgment(score=0.5), steps=(Step(observation="q", action="a", reward=0.5),))
    assert episode_view(undecided).tone == "partial"
    assert 'class="verdict partial"' in render_html(undecided)


def test_the_system_prompt_is_shown_once_in_both_replays():
    traj = _reply_turn("1", system="You are a careful adder.")
    terminal, page = _both(traj)
    assert terminal.count("You are a careful adder.") == 1
    assert page.count("You are a careful adder.") == 1
    assert "system prompt" in terminal
    assert "system prompt" in page
    assert _panels(traj).count("You are a careful adder.") == 1


def test_a_reply_cut_at_the_token_limit_is_marked_and_counts_agree():
    traj = _reply_turn("a b c", finish_reason="length")
    terminal, page = _both(traj)
    summary = "2 prompt / 5 completion tokens, 0.00 s, cut off at the token limit"
    assert summary in terminal
    assert summary in page
    assert "1 model call(s), 5 completion tokens" in terminal
    assert "1 model call(s), 5 completion tokens" in page
    assert "cut off" not in _both(_reply_turn("a b c"))[0]


def test_a_reply_is_printed_once_even_when_it_is_also_the_answer():
    traj = _reply_turn("just 4", info={"answer": "just 4"})
    terminal, page = _both(traj)
    assert terminal.count("just 4") == 1
    assert page.count("just 4") == 1
    assert "(the whole reply)" in terminal
    assert "(the whole reply)" in page


def test_piped_output_keeps_each_text_on_one_line(capsys):
    traj = _reply_turn(LONG.strip(), system=LONG.strip())
    render(traj)  # to pytest's captured stdout: not a terminal
    out = capsys.readouterr().out
    assert out.count(LONG.strip()) == 2  # the system prompt and the reply, each whole on its own line
    assert "\u2502" not in out
    assert "\u256d" not in out
    assert any(line.strip() == LONG.strip() for line in out.splitlines())


def test_piped_check_evidence_is_not_wrapped(capsys):
    from nenyax.cli.commands.check import render_report
    from nenyax.core.tiers.report import Floor, Tier, TierOutcome, TierReport, TierResult

    result = TierResult(id="x/y", tier=Tier.CONNECTABLE, outcome=TierOutcome.PASSED, evidence=LONG.strip(), seconds=0.1)
    floor = Floor(probe="a constant answer '0'", score=0.12, reference=1.0, margin=0.88, required=0.3, tasks=20)
    render_report(TierReport(uri="a:b", tier=Tier.CONNECTABLE, results=(result,), floor=floor))
    lines = capsys.readouterr().out.splitlines()
    [row] = [line for line in lines if line.startswith("x/y")]
    assert row.endswith(LONG.strip())
    assert "passed" in row
    # The floor's sentence too stays one line (it was folded at 80 columns).
    [line] = [line for line in lines if line.startswith("Floor: ")]
    assert line.endswith("over 20 tasks (margin 0.88, 0.30 required).")


def _section(page, section_id):
    start = page.index(f'id="{section_id}"')
    return page[start : page.index("</section>", start)]


def test_the_episode_status_and_the_verdict_are_labelled_apart():
    page = render_html(_reply_turn("1", passed=False))
    verdict, status = _section(page, "verdict"), _section(page, "status")
    assert "<h2>judgment</h2>" in verdict
    assert "score 0 · not passed" in verdict
    assert " ok" not in verdict  # the status is not in the verdict's heading any more
    assert "<h2>episode status</h2>" in status
    assert "ok" in status
    assert "score" not in status
    terminal = _both(_reply_turn("1", passed=False))[0]
    assert "status ok: the episode ran to its end" in terminal
    assert terminal.index("── judgment") < terminal.index("── episode") < terminal.index("status ok:")


def test_the_sampling_settings_are_shown_in_both_replays():
    call = attrs.evolve(CALL, params={"temperature": 0.7, "max_tokens": 64}, model="smollm2-135m")
    traj = attrs.evolve(TRAJECTORIES["a chat model on a step env"], model_calls=(call,))
    assert episode_view(traj).sampling == "max_tokens=64, temperature=0.7"
    terminal, _ = _both(traj)
    assert "sampling     max_tokens=64, temperature=0.7" in terminal
    assert "<dt>sampling</dt><dd>max_tokens=64, temperature=0.7</dd>" in render_html(traj)
    assert "sampling" not in _both(TRAJECTORIES["a numeric env, no model"])[0]


FROZEN = _traj(
    env_uri="gymnasium:FrozenLake-v1",
    policy=PolicyInfo(kind="random"),
    steps=(
        Step(observation=0, action=2, reward=0.0, info={"prob": 0.33333333333333337}),
        Step(observation=4, action=1, reward=0.0, terminated=True, info={"prob": 0.33333333333333337}),
    ),
    judgment=Judgment(score=0.0, passed=False),
)


def test_the_environments_info_is_labelled_as_the_environments():
    terminal, page = _both(FROZEN)
    assert terminal.count("env info: prob=0.333") == 2
    assert "0.33333333333333337" not in terminal
    assert page.count("env info") == 2
    assert page.count("prob=0.333") == 2
    assert "0.33333333333333337" not in page.split('<script type="application/json"')[0]


def test_the_final_observation_and_the_calls_own_time_are_shown_in_both_replays():
    queued = attrs.evolve(CALL, duration_s=80.75, queued_s=80.5)
    traj = _traj(
        steps=(Step(observation="What is 2 + 2?", action="4", reward=1.0, terminated=True, text="four <b>4</b>"),),
        model_calls=(queued,),
        final_observation={"board": [1, 2]},
        timing=Timing(started=10.0, ended=91.5),
    )
    view = episode_view(traj)
    [turn] = view.turns
    # The call's own latency first, what it waited behind other episodes beside it.
    assert turn.call.summary == "3 prompt / 2 completion tokens, 0.25 s (+80.50 s queued)"
    assert view.duration == "1.00 s own (81.50 s wall, 80.50 s queued)"
    assert view.final == '{"board":[1,2]}'
    terminal, page = _both(traj)
    for fact in ("the episode ended on", view.final, view.duration, turn.call.summary):
        assert fact in terminal, (fact, terminal)
        assert fact in page, (fact, page)


def test_an_episode_cut_at_its_step_limit_does_not_say_it_ran_to_its_end():
    """`try ?max_turns=3`: the judge says "cut after 3 steps"; the status line must not say "ran to its end"."""
    cut = _traj(
        policy=PolicyInfo(kind="random"),
        steps=tuple(Step(observation=[i], action=0, reward=1.0) for i in range(3)),
        judgment=Judgment(score=3.0, feedback="cut after 3 step(s) with return 3", judge="return"),
    )
    view = episode_view(cut)
    assert view.cut_after == 3
    terminal, page = _both(cut)
    for shown_text in (terminal, page):
        assert "ran to its end" not in shown_text
        assert "cut at its step limit after 3 step(s)" in shown_text
    # An episode the environment ended (terminated or truncated) still ran to its end.
    ended = episode_view(TRAJECTORIES["a numeric env, no model"])
    assert ended.cut_after is None
    assert "ran to its end" in ended.status_meaning
