from nenyax.testing import AdapterConformance


class TestReasoningGymConformance(AdapterConformance):
    plugin = "reasoning_gym"
