#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Entry point of the report package bench/report/ (see bench/report/__init__.py):

    python3 bench/report.py [--no-plots | --plots a.png,b.png] [--partial REASON] [RESULTS_DIR]
"""
import os
import sys

# This file's directory is sys.path[0]; the package bench/report/ is found before this module.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report.__main__ import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
