"""The extension module loads and reports the core's version."""

import iwlab


def test_the_extension_reports_the_package_version():
    assert iwlab.core_version() == iwlab.__version__
