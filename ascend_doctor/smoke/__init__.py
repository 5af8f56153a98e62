"""The live smoke stage: scenarios gather facts from an OpenAI-compatible server, checks/smoke_*.py judge them."""
