"""The shuffle battery (statistical tests of the shuffler's shoes) and its records."""
