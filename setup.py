"""Build hook for pyproject.toml: the wheel carries the workflow rules (.cursorrules, which `init`
copies into projects) inside core/ as core/cursorrules.md, since a wheel holds only packages and
modules. Everything else about the package is in pyproject.toml."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


class BuildWithRules(build_py):
    def run(self):
        super().run()
        target = Path(self.build_lib) / "core" / "cursorrules.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(HERE / ".cursorrules", target)


setup(cmdclass={"build_py": BuildWithRules})
