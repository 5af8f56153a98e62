"""The host seam: the only code that touches the machine (commands, files, the environment), recorded into snapshots
and answered back by replay; user files read with caps; atomic writes; whose files may load code."""
