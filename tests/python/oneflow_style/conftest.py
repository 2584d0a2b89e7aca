"""Lets OneFlow-style files `import test_util` / `import test_global_storage` as in OneFlow's tree."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
