"""Fleet: check every node of a multi-node deployment (on Ray, or from snapshot files) and find what differs."""
