from django.apps import AppConfig


class LayerlessConfig(AppConfig):
    name = "tests.system.layerless_app"
    label = "layerless_app"
