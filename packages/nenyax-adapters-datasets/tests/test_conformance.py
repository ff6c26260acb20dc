from nenyax.testing import AdapterConformance


class TestDatasetsConformance(AdapterConformance):
    plugin = "hf"
