"""Everything the doctor knows about releases, chips and thresholds: the shipped tables under matrices/, their
schemas, the layering of --matrix files, and the queries checks ask. The door: `knowledge.door.Knowledge`."""
