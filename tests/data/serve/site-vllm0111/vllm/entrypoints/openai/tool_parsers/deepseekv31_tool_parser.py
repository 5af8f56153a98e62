from vllm.entrypoints.openai.tool_parsers.abstract_tool_parser import ToolParser, ToolParserManager


@ToolParserManager.register_module(name="deepseek_v31")
class DeepSeekV31ToolParser(ToolParser):
    pass
