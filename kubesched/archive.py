"""Zip archives that may be hostile (a model ``.npz``, a stable-baselines3 ``ppo.zip``), read as data.

Only the members asked for are read, one at a time; each one's declared size is checked against
a limit (per member and in total) before anything is decompressed, and zipfile never returns more
than the declared size (a member that inflates past it fails its CRC check). Only stored and
deflated members are read (what numpy, torch and stable-baselines3 write); encrypted ones are
refused. Every way the bytes can be wrong is one ``InputError`` naming the file and the member.
"""

from __future__ import annotations

import io
import os
import stat
import zipfile
import zlib
from pathlib import Path
from typing import IO

from kubesched.errors import InputError

MiB = 1 << 20
#: what zipfile raises on a malformed archive or member stream (a bad deflate stream is
#: ``zlib.error``; a truncated one ``EOFError``; a bad name ``UnicodeDecodeError``, a ValueError)
ZIP_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError)
METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflated"}


class Archive:
    """A zip file (a path or bytes) whose members are read within ``max_member`` bytes each
    (decompressed) and ``max_total`` bytes together; a file over ``max_file`` bytes is refused
    before its directory is read. ``what`` names the kind of file in errors ("``.npz`` model")."""

    def __init__(self, file: str | Path | bytes, source: str, *, what: str, max_file: int, max_member: int,
                 max_total: int, inner: str | None = None) -> None:
        self.source = source
        self.inner = inner  # the member of an outer archive this one is (errors name it)
        self.max_member = max_member
        self.left = max_total
        fp: IO[bytes]
        if isinstance(file, bytes):
            fp = io.BytesIO(file)
        else:
            try:
                if not stat.S_ISREG(os.stat(file).st_mode):  # a FIFO or a device would block or never end
                    raise InputError("not a regular file", source=source)
                fp = open(file, "rb")  # noqa: SIM115 - closed by close()
            except FileNotFoundError:
                raise InputError("no such file", source=source) from None
            except OSError as e:
                raise InputError(f"cannot read: {e.strerror or e}", source=source) from None
        self._fp = fp
        try:
            size = fp.seek(0, io.SEEK_END)
            if size > max_file:
                raise self.error(f"{size:,} bytes, over the limit of {max_file:,}")
            fp.seek(0)
            self._zip = zipfile.ZipFile(fp)
        except ZIP_ERRORS as e:
            fp.close()
            raise self.error(f"not a readable {what} ({why(e)})") from None
        except InputError:
            fp.close()
            raise

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._zip.close()
        self._fp.close()

    def error(self, message: str, member: str | None = None) -> InputError:
        path = "/".join(p for p in (self.inner, member) if p) or None
        return InputError(message, source=self.source, path=path)

    def __contains__(self, name: str) -> bool:
        try:
            self._zip.getinfo(name)
        except KeyError:
            return False
        return True

    def check(self, info: zipfile.ZipInfo, limit: int | None = None, field: str | None = None) -> None:
        """Refuse ``info`` before reading it: encrypted, another method, or over the limits."""
        name = field or info.filename
        if info.flag_bits & 0x1:
            raise self.error("encrypted", name)
        if info.compress_type not in METHODS:
            raise self.error(f"compression method {info.compress_type} (only stored or deflated are read)", name)
        limit = self.max_member if limit is None else min(limit, self.max_member)
        if info.file_size > limit:
            raise self.error(f"{info.file_size:,} bytes decompressed, over the limit of {limit:,}", name)
        if info.file_size > self.left:
            raise self.error(f"{info.file_size:,} bytes decompressed would pass the archive's limit", name)

    def check_all(self, methods: tuple[int, ...] = tuple(METHODS)) -> None:
        """Every member within the limits, as if all were read (for a reader that reads them itself)."""
        total = 0
        for info in self._zip.infolist():
            self.check(info)
            if info.compress_type not in methods:
                raise self.error(f"{METHODS[info.compress_type]} (expected {METHODS[methods[0]]})", info.filename)
            total += info.file_size
        if total > self.left:
            raise self.error(f"members of {total:,} bytes together, over the limit of {self.left:,}")

    def read(self, name: str, limit: int | None = None, field: str | None = None) -> bytes:
        """The member ``name`` decompressed, within ``limit`` (and the archive's limits);
        ``field`` names it in errors (default: the member's name)."""
        try:
            info = self._zip.getinfo(name)
        except KeyError:
            raise self.error("missing", field or name) from None
        self.check(info, limit, field)
        try:
            with self._zip.open(info) as f:
                data = f.read(info.file_size)
                trailing = f.read(1)  # reaches the end of the stream, where zipfile checks the CRC
        except ZIP_ERRORS as e:
            raise self.error(f"unreadable ({why(e)})", field or name) from None
        if len(data) != info.file_size or trailing:
            raise self.error(f"{len(data):,} bytes where {info.file_size:,} are declared", field or name)
        self.left -= info.file_size
        return data


def why(e: BaseException) -> str:
    """The exception's type and the first line of its message, short."""
    text = str(e).split("\n", 1)[0]
    text = text if len(text) <= 100 else text[:97] + "..."
    return f"{type(e).__name__}: {text}" if text else type(e).__name__
