"""Fleet: Ray runner, FLEET checks, fleet report and diff."""
