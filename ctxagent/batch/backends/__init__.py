"""Where batch tasks run: `local` (a pool of worker processes) or `ray` (Ray tasks)."""
