from typing import Literal

TokenizerMode = Literal["auto", "slow", "mistral", "custom"]
