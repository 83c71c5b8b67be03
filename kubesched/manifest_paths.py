"""``-f`` as kubectl reads it: a file, ``-`` (standard input), or a directory whose manifest files
are read in name order, its subdirectories too with ``-R/--recursive``.

As kubectl (cli-runtime's ``ExpandPathsToFileVisitors``): in a directory only ``.json``, ``.yaml``
and ``.yml`` files are read, in the order a depth-first walk meets them (names sorted, a
subdirectory's files where its name falls); a file named on the command line is read whatever its
name; symbolic links to directories are not followed. A path that does not exist is left for the
reader to report.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from kubesched.errors import InputError

#: cli-runtime's resource.FileExtensions
MANIFEST_EXTENSIONS = (".json", ".yaml", ".yml")


def expand(paths: Iterable[str], recursive: bool = False) -> list[str]:
    """The files ``-f paths`` reads, in order; a directory holding none is an InputError."""
    out: list[str] = []
    for path in paths:
        if path != "-" and os.path.isdir(path):
            found = _walk(path, recursive)
            if not found:
                raise InputError(_nothing_in(path, recursive), source=path)
            out += found
        else:
            out.append(path)
    return out


def _walk(folder: str, recursive: bool) -> list[str]:
    found: list[str] = []
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as e:
        raise InputError(f"cannot read the directory: {e.strerror or e}", source=folder) from None
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            if recursive:
                found += _walk(entry.path, recursive)
        elif entry.name.endswith(MANIFEST_EXTENSIONS):
            found.append(entry.path)
    return found


def _nothing_in(folder: str, recursive: bool) -> str:
    what = "no .json, .yaml or .yml file in this directory"
    if recursive:
        return what + " or below it"
    if any(e.is_dir(follow_symlinks=False) for e in os.scandir(folder)):
        return what + " (-R/--recursive reads its subdirectories)"
    return what
