from nenyax.testing import AdapterConformance


class TestGymnasiumConformance(AdapterConformance):
    plugin = "gymnasium"
