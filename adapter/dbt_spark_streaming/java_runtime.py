"""Which Java the driver's JVM runs on: JAVA_HOME when it is set, else the newest supported JDK
found on this machine.

Spark 4.2 runs on Java 17, 21 and 25; its docs deprecate Java 25 before 25.0.3. A JAVA_HOME
outside those is refused with the reason, before any JVM starts: on an older Spark the same
mistake showed only as the first Hive or Delta write failing (`getSubject is not supported`).
Without JAVA_HOME the candidates are the PATH's `java` and the JDKs in the usual install folders;
the newest supported wins, and sessions start with it (`use_chosen_java` sets JAVA_HOME for
pyspark's launcher). A JDK's version comes from its `release` file: no process is started.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, MutableMapping, Optional

from dbt_spark_streaming.errors import StreamingError

SUPPORTED_MAJORS = (17, 21, 25)
OLDEST_25 = (25, 0, 3)
# Where JDKs are installed by package managers and installers (Debian/Ubuntu, Fedora, macOS,
# SDKMAN, Homebrew on Linux); each holds one folder per JDK.
INSTALL_FOLDERS = (
    "/usr/lib/jvm",
    "/usr/java",
    "/Library/Java/JavaVirtualMachines",
    "~/.sdkman/candidates/java",
    "/home/linuxbrew/.linuxbrew/opt",
)
_RELEASE_VERSION = re.compile(r'^JAVA_VERSION="?(?P<version>[^"\n]+)"?', re.MULTILINE)


class JavaVersionError(StreamingError, RuntimeError):
    pass


@dataclass(frozen=True)
class Jdk:
    home: Path
    version: tuple[int, ...]  # (25, 0, 3); (1, 8, 0) for Java 8

    @property
    def version_text(self) -> str:
        return ".".join(map(str, self.version))

    @property
    def major(self) -> int:
        return self.version[1] if self.version[0] == 1 else self.version[0]


def refusal(jdk: Jdk) -> Optional[str]:
    """Why Spark cannot run on this JDK; None when it can."""
    if jdk.major not in SUPPORTED_MAJORS:
        return (f"Java {jdk.version_text} is not one Spark 4.2 supports "
                f"(Java {', '.join(map(str, SUPPORTED_MAJORS))})")
    if jdk.major == 25 and jdk.version < OLDEST_25:
        return (f"Java {jdk.version_text}: Spark 4.2 deprecates Java 25 before "
                f"{'.'.join(map(str, OLDEST_25))}, whose fixes it needs")
    return None


def parse_version(text: str) -> Optional[tuple[int, ...]]:
    """(25, 0, 3) from "25.0.3", "25.0.3+9" or "25"; (1, 8, 0) from "1.8.0_402"."""
    numbers = re.match(r"(\d+)(?:\.(\d+))?(?:\.(\d+))?", text.strip())
    if numbers is None:
        return None
    return tuple(int(part or 0) for part in numbers.groups())


def jdk_at(home: Path) -> Optional[Jdk]:
    """The JDK installed at `home` (its bin/java and its release file); None if it is not one."""
    release = home / "release"
    if not (home / "bin" / "java").is_file() or not release.is_file():
        return None
    found = _RELEASE_VERSION.search(release.read_text(errors="replace"))
    version = parse_version(found["version"]) if found else None
    return Jdk(home.resolve(), version) if version else None


def candidates(environ: Mapping[str, str] = os.environ,
               folders: Iterable[str] = INSTALL_FOLDERS) -> list[Jdk]:
    """The JDKs found: the PATH's java, then each folder in the install folders."""
    homes: list[Path] = []
    on_path = shutil.which("java", path=environ.get("PATH"))
    if on_path:
        homes.append(Path(on_path).resolve().parent.parent)
    for folder in folders:
        root = Path(folder).expanduser()
        if root.is_dir():
            for entry in sorted(root.iterdir()):
                homes.extend([entry, entry / "Contents" / "Home"])  # macOS bundles a JDK's home
    found: dict[Path, Jdk] = {}
    for home in homes:
        jdk = jdk_at(home)
        if jdk is not None:
            found.setdefault(jdk.home, jdk)
    return list(found.values())


def choose_java(environ: Mapping[str, str] = os.environ,
                folders: Iterable[str] = INSTALL_FOLDERS) -> Jdk:
    """JAVA_HOME's JDK if it is set (refused if Spark cannot run on it), else the newest
    supported JDK found."""
    home = environ.get("JAVA_HOME")
    if home:
        jdk = jdk_at(Path(home))
        if jdk is None:
            raise JavaVersionError(
                f"JAVA_HOME is {home}, which holds no JDK (no bin/java and release file there). "
                "Point JAVA_HOME at a JDK 17, 21 or 25 (25.0.3 or later), or unset it to use the "
                "newest one installed.")
        reason = refusal(jdk)
        if reason:
            raise JavaVersionError(
                f"JAVA_HOME is {home}: {reason}. Point JAVA_HOME at a JDK 17, 21 or 25 (25.0.3 or "
                "later), or unset it to use the newest one installed.")
        return jdk
    found = candidates(environ, folders)
    usable = [jdk for jdk in found if refusal(jdk) is None]
    if not usable:
        seen = "; ".join(f"{jdk.home} ({refusal(jdk)})" for jdk in found) or "none"
        raise JavaVersionError(
            f"No JDK Spark 4.2 can run on was found (JDKs seen: {seen}). Install a JDK 17, 21 "
            "or 25 (25.0.3 or later) and set JAVA_HOME to it.")
    return max(usable, key=lambda jdk: jdk.version)


def use_chosen_java(environ: MutableMapping[str, str] = os.environ) -> Jdk:
    """Choose the JDK and set JAVA_HOME to it, for pyspark's launcher and any JVM started after."""
    jdk = choose_java(environ)
    environ["JAVA_HOME"] = str(jdk.home)
    return jdk


def describe(jdk: Jdk, environ: Mapping[str, str] = os.environ) -> str:
    """One line for set-up: which Java, and why that one."""
    why = "JAVA_HOME" if environ.get("JAVA_HOME") else \
        "the newest supported JDK found; set JAVA_HOME to choose another"
    return f"Java {jdk.version_text} at {jdk.home} ({why})"
