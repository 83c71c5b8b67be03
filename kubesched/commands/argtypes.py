"""argparse types shared by the commands: a bad value is one line, exit code 2."""

from __future__ import annotations

import argparse
import re

_SEED_RE = re.compile(r"[0-9]{1,19}")


def seed(text: str) -> int:
    """--seed: a whole number from 0 (the random generators take no negative seed)."""
    if not _SEED_RE.fullmatch(text) or int(text) >= 2**63:
        raise argparse.ArgumentTypeError(f'invalid value "{text}": expected a whole number from 0 to 2^63-1')
    return int(text)


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line (``kubesched schedule: error: ...``)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())}\n")


#: strconv.ParseBool's spellings, which kubectl's --validate takes as strict (true) or ignore (false)
_TRUE = ("1", "t", "T", "TRUE", "true", "True")
_FALSE = ("0", "f", "F", "FALSE", "false", "False")


def validate_mode(text: str) -> str:
    """--validate: kubectl's strict|warn|ignore, with true (strict) and false (ignore)."""
    if text in ("strict", "warn", "ignore"):
        return text
    if text in _TRUE:
        return "strict"
    if text in _FALSE:
        return "ignore"
    raise argparse.ArgumentTypeError(
        f'invalid - validate option "{text}"; must be one of: strict (or true), warn, ignore (or false)'
    )
