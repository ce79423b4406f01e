"""The wheel holds every subpackage and every data file the program reads at run time."""

from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def package_folder(package: str) -> Path:
    """The source folder setuptools maps ``package`` to (nearest mapped parent, then the rest)."""
    mapping = CONFIG["package-dir"]
    parts = package.split(".")
    for cut in range(len(parts), 0, -1):
        parent = ".".join(parts[:cut])
        if parent in mapping:
            return ROOT / mapping[parent] / Path(*parts[cut:])
    raise AssertionError(f"{package} has no package-dir mapping")


def test_every_python_folder_is_a_listed_package():
    listed = set(CONFIG["packages"])
    folders = {package_folder(package) for package in listed}
    for code in ("app", "gpu", "transforms", "brushes", "shaders", "resources"):
        for init in (ROOT / code).rglob("__init__.py"):
            assert init.parent in folders, (
                f"{init.parent.relative_to(ROOT)} is not in [tool.setuptools] packages"
            )
    for package in listed:
        assert (package_folder(package) / "__init__.py").is_file(), package


def test_every_data_file_matches_a_package_data_pattern():
    """Each data file matches a pattern of the package whose folder holds it (setuptools warns of
    a data folder that is not a package, on every install)."""
    patterns = CONFIG["package-data"]
    packages = {package_folder(package): package for package in CONFIG["packages"]}
    for folder in ("shaders", "resources"):
        for path in (ROOT / folder).rglob("*"):
            if path.is_dir() or path.suffix in (".py", ".pyc") or "__pycache__" in path.parts:
                continue
            if path.name == "screenshot.png":  # the README's picture, not read by the program
                continue
            assert path.parent in packages, f"{path.parent.relative_to(ROOT)} is not a package"
            package = packages[path.parent]
            assert any(Path(path.name).match(pattern) for pattern in patterns.get(package, ())), (
                f"{path.relative_to(ROOT)} is not installed by package-data"
            )
