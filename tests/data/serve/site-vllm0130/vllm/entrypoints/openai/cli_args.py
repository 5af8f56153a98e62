# Fixture shaped like vllm/entrypoints/openai/cli_args.py: FrontendArgs fields and a few explicit arguments.
from dataclasses import dataclass
from typing import Optional


@dataclass
class FrontendArgs:
    host: Optional[str] = None
    port: int = 8000
    api_key: Optional[list[str]] = None
    chat_template: Optional[str] = None
    enable_auto_tool_choice: bool = False
    tool_call_parser: Optional[str] = None
    tool_parser_plugin: str = ""


def make_arg_parser(parser):
    parser.add_argument("model_tag", type=str, nargs="?")
    parser.add_argument("--config", type=str, default="")
    parser.add_argument("--headless", action="store_true")
    return parser
