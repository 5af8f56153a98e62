"""The run's skeleton: the engine, the one evaluator, the check registry, run options, the config file, base types."""
