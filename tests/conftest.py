"""Shared test configuration."""

pytest_plugins = ["pytester"]


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: builds a wheel or a virtualenv (still part of the default run)")
