"""Helpers shared by the test suites (fixtures, fakes, harnesses, the bad-input families);
imported as ``support.<module>`` (tests/ is on sys.path through its conftest)."""
