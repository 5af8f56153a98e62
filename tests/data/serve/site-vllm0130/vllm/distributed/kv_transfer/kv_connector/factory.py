# Test fixture written for ascend-doctor: the shape of vLLM 0.13.0's connector registrations (names as that release
# registers them; module paths shortened), read by ascend_doctor.parsers.release_names.
class KVConnectorFactory:
    _registry: dict = {}

    @classmethod
    def register_connector(cls, name, module_path, class_name):
        cls._registry[name] = (module_path, class_name)


KVConnectorFactory.register_connector("ExampleConnector", "v1.example_connector", "ExampleConnector")
KVConnectorFactory.register_connector("NixlConnector", "v1.nixl_connector", "NixlConnector")
KVConnectorFactory.register_connector("MooncakeConnector", "v1.mooncake_connector", "MooncakeConnector")
