from vllm.entrypoints.openai.tool_parsers.abstract_tool_parser import ToolParser, ToolParserManager


@ToolParserManager.register_module("hermes")
class Hermes2ProToolParser(ToolParser):
    pass
