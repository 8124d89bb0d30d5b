"""The build step that makes the wheel the product: the shipped configuration, the service's
deploy files and the table PC's lock file go into the package as `controller/shipped/`.

They stay at the top of the source tree (config/, deploy/, requirements/), where people look
for them; setuptools' package data reaches only files inside a package, so build_py copies
them in after building the packages. An installed wheel then finds them through
importlib.resources (controller/settings/locations.py), whatever the working directory; an editable
install or a plain checkout reads the top-level folders (the copy is not made there).
Everything else is declared in pyproject.toml.
"""
import runpy
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

#: source folder → the files of it that ship; one list, the one the software identity uses
SHIPPED = runpy.run_path(str(Path(__file__).parent / "controller" / "settings" / "locations.py"))["SHIPPED"]


class BuildWithShipped(build_py):
    def run(self) -> None:
        super().run()
        for part, patterns in SHIPPED.items():
            for pattern in patterns:
                for src in sorted(Path(part).glob(pattern)):
                    if src.is_file():
                        dest = Path(self.build_lib, "controller", "shipped", part,
                                    src.relative_to(part))
                        self.mkpath(str(dest.parent))
                        self.copy_file(str(src), str(dest))


setup(cmdclass={"build_py": BuildWithShipped})
