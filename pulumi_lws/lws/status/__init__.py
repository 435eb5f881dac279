"""LeaderWorkerSet status: Ordinal and Hash counts and conditions, failure conditions."""
