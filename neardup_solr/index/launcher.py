"""Building the local Solr's launcher, on Solr's own jars.

The package's ``launcher/`` folder holds a one-class launcher and
``jars.txt``, the list of the jars Solr runs on (coordinates, SHA-256,
size). On first use :func:`build_launcher` fetches those jars from Maven
Central (or the repository ``NEARDUP_MAVEN_URL`` names), refuses any whose
SHA-256 differs, and compiles the launcher with the JDK's ``javac``: Java
17 is all a user installs. The jars are kept in the cache folder by their
coordinates, so a new launcher fetches only jars it has not seen; the
launcher is built into a folder named after a hash of its sources and list,
so a changed one is rebuilt and an unchanged one never is.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import zipfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import requests

from ..errors import NeardupError

# The launcher's sources and the list of Solr's jars, as the package carries them.
LAUNCHER_SOURCES = Path(__file__).resolve().parent.parent / "launcher"
MAVEN_CENTRAL = "https://repo1.maven.org/maven2"
# Jars fetched at once: Maven Central serves each from a CDN, and four
# streams fill a line without a long tail of one slow file.
FETCHES = 4
# Seconds one jar (the largest is some 10 MB) may take to arrive.
FETCH_TIMEOUT = 300


def resource(path: Path) -> Path:
    """A file or folder the package carries (:data:`LAUNCHER_SOURCES`,
    :data:`~neardup_solr.index.local_solr.CONFIGSET`)."""
    if not path.exists():
        raise NeardupError(f"{path} is missing from the installed neardup-solr",
                           hint="reinstall neardup-solr (pip install --force-reinstall neardup-solr)")
    return path


def cache_dir() -> Path:
    if "NEARDUP_CACHE_DIR" in os.environ:
        return Path(os.environ["NEARDUP_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "neardup-solr"


def find_java() -> str:
    home = os.environ.get("JAVA_HOME")
    java = str(Path(home) / "bin" / "java") if home and (Path(home) / "bin" / "java").exists() else shutil.which("java")
    if not java:
        raise NeardupError(
            "Java was not found (JAVA_HOME or java on PATH)",
            hint="install Java 17 or newer, e.g. `apt install openjdk-17-jdk-headless`",
        )
    return java


def find_javac() -> str:
    home = os.environ.get("JAVA_HOME")
    javac = str(Path(home) / "bin" / "javac") if home and (Path(home) / "bin" / "javac").exists() \
        else shutil.which("javac")
    if not javac:
        raise NeardupError(
            "javac was not found (JAVA_HOME or javac on PATH); it compiles the Solr launcher on first use",
            hint="install a Java 17 JDK, not only a runtime, e.g. `apt install openjdk-17-jdk-headless`",
        )
    return javac


@dataclass(frozen=True)
class Jar:
    """One jar of ``jars.txt``: its Maven coordinates, SHA-256 and size."""

    group: str
    artifact: str
    version: str
    classifier: str
    sha256: str
    size: int

    @property
    def name(self) -> str:
        return f"{self.artifact}-{self.version}{'-' + self.classifier if self.classifier else ''}.jar"

    @property
    def path(self) -> str:
        """Where a Maven repository keeps it."""
        return f"{self.group.replace('.', '/')}/{self.artifact}/{self.version}/{self.name}"


def jars() -> list[Jar]:
    """The jars Solr runs on, as ``launcher/jars.txt`` lists them."""
    listed = []
    for line in resource(LAUNCHER_SOURCES / "jars.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            coordinates, sha256, size = line.split()
            group, artifact, version, *classifier = coordinates.split(":")
            listed.append(Jar(group, artifact, version, "".join(classifier), sha256, int(size)))
    return listed


def maven_url() -> str:
    return os.environ.get("NEARDUP_MAVEN_URL", MAVEN_CENTRAL).rstrip("/")


def _sources_digest(src: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in src.rglob("*") if p.is_file() and p.suffix in (".java", ".xml", ".txt")):
        digest.update(str(path.relative_to(src)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]  # 64 bits: a folder name, no collision in practice


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def kept(jar: Jar, repository: Path) -> bool:
    """Whether the local ``repository`` folder holds ``jar`` with its listed SHA-256."""
    target = repository / jar.path
    return target.is_file() and target.stat().st_size == jar.size and _sha256(target) == jar.sha256


def fetch_jar(jar: Jar, repository: Path) -> Path:
    """``jar`` in the local ``repository`` folder, fetched first unless it is
    there with the right SHA-256; a download is checked before it is kept.

    Raises:
        NeardupError: it could not be fetched, or arrived with another SHA-256.
    """
    target = repository / jar.path
    if kept(jar, repository):
        return target
    url = f"{maven_url()}/{jar.path}"
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.part-{os.getpid()}-{id(jar)}")
    try:
        with requests.get(url, stream=True, timeout=FETCH_TIMEOUT) as answer:
            answer.raise_for_status()
            with open(partial, "wb") as out:
                for chunk in answer.iter_content(1 << 20):
                    out.write(chunk)
        if _sha256(partial) != jar.sha256:
            raise NeardupError(f"{jar.name} from {url} does not have the SHA-256 jars.txt lists",
                               hint=f"check what serves {maven_url()} (NEARDUP_MAVEN_URL)")
        os.replace(partial, target)
    except requests.RequestException as err:
        raise NeardupError(f"could not fetch {jar.name} from {url}: {type(err).__name__} {err}",
                           hint="check network access to Maven Central, or name a mirror in NEARDUP_MAVEN_URL") \
            from None
    finally:
        partial.unlink(missing_ok=True)
    return target


def build_launcher(echo: Callable[[str], None] = print) -> Path:
    """The built launcher folder (``solr-launcher.jar`` and ``lib/``), built if
    needed: Solr's jars fetched and checked (:func:`fetch_jar`), the launcher
    compiled with ``javac``.

    Raises:
        NeardupError: Java or javac is missing, a jar could not be fetched or
            was not the one listed, or the launcher did not compile.
    """
    src = resource(LAUNCHER_SOURCES)
    out = cache_dir() / f"launcher-{_sources_digest(src)}"
    if (out / "solr-launcher.jar").is_file():
        return out
    find_java()
    javac = find_javac()
    listed = jars()
    repository = cache_dir() / "maven"
    work = Path(f"{out}.build-{os.getpid()}")
    shutil.rmtree(work, ignore_errors=True)
    (work / "lib").mkdir(parents=True)
    if missing := [jar for jar in listed if not kept(jar, repository)]:
        echo(f"fetching {len(missing)} of Solr's {len(listed)} jars ({sum(j.size for j in missing) / 1e6:.0f} MB) "
             f"from {maven_url()}, each checked by its SHA-256...")
    with ThreadPoolExecutor(FETCHES) as pool:
        for jar, fetched in zip(listed, pool.map(lambda j: fetch_jar(j, repository), listed)):
            _link(fetched, work / "lib" / jar.name)
    echo("compiling the Solr launcher with javac...")
    classes = work / "classes"
    done = subprocess.run([javac, "--release", "17", "-encoding", "UTF-8", "-nowarn", "-d", str(classes),
                           "-cp", str(work / "lib" / "*"), *(str(path) for path in sorted(src.glob("*.java")))],
                          capture_output=True, text=True)
    if done.returncode != 0:
        first = next((ln for ln in done.stderr.splitlines() if ln.strip()), "no output")
        raise NeardupError(f"compiling the Solr launcher failed: {first}", hint="use a Java 17 (or newer) JDK")
    with zipfile.ZipFile(work / "solr-launcher.jar", "w", zipfile.ZIP_DEFLATED) as jar:
        jar.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\n\r\n")
        for path in sorted(p for p in classes.rglob("*") if p.is_file()):
            jar.write(path, path.relative_to(classes).as_posix())
        jar.write(src / "log4j2.xml", "log4j2.xml")
    shutil.rmtree(classes)
    try:
        work.rename(out)
    except OSError:
        if not (out / "solr-launcher.jar").is_file():
            raise
    shutil.rmtree(work, ignore_errors=True)
    return out


def _link(source: Path, target: Path) -> None:
    """``target`` as a hard link to ``source`` (a copy where links cannot be made)."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)
