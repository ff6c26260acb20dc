from nenyax.testing import AdapterConformance, conformance_suite


class TestDatasetsConformance(AdapterConformance):
    plugin = "hf"


class TestExactJudgeConformance(conformance_suite("judge")):  # type: ignore[misc]
    plugin = "exact"


class TestNumericJudgeConformance(conformance_suite("judge")):  # type: ignore[misc]
    plugin = "numeric"


class TestMathJudgeConformance(conformance_suite("judge")):  # type: ignore[misc]
    plugin = "math"


class TestChoiceJudgeConformance(conformance_suite("judge")):  # type: ignore[misc]
    plugin = "choice"
