"""Helpers of scripts/plot.py, scripts/reproduce.py and scripts/sensitivity.py."""
