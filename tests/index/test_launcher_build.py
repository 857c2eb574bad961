"""The Solr launcher is built without Maven: Solr's jars fetched from a
Maven repository over HTTP, each checked against the SHA-256 of
launcher/jars.txt, and the launcher compiled with javac. A repository on
127.0.0.1 serves the jars the session's own build fetched from Maven Central."""

import hashlib
import shutil
import threading
import zipfile
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import run_cli

from neardup_solr.index import launcher


@pytest.fixture
def repository(solr_node):
    """A Maven repository on 127.0.0.1 serving the jars the session's build
    fetched (the solr_node fixture built the launcher); ``wrong`` names
    paths it serves other bytes for. Yields its URL, the paths asked, and ``wrong``."""
    served = launcher.cache_dir() / "maven"
    asked: list[str] = []
    wrong: set[str] = set()

    class Repository(SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            asked.append(self.path.lstrip("/"))
            if self.path.lstrip("/") in wrong:
                body = b"PK\x03\x04 not the listed jar"
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            super().do_GET()

    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Repository, directory=str(served)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", asked, wrong
    server.shutdown()
    server.server_close()


def jdk_only_path(folder):
    """A PATH with java and javac and nothing else (no mvn)."""
    folder.mkdir()
    for tool in ("java", "javac"):
        (folder / tool).symlink_to(shutil.which(tool))
    return str(folder)


def test_the_launcher_is_built_from_checked_jars_and_javac_without_maven(repository, tmp_path):
    url, asked, _ = repository
    cache = tmp_path / "cache"
    env = {"PATH": jdk_only_path(tmp_path / "bin"), "JAVA_HOME": "", "NEARDUP_CACHE_DIR": str(cache),
           "NEARDUP_MAVEN_URL": url}
    done = run_cli("solr", "build", env=env)
    assert done.returncode == 0, done.stderr
    listed = launcher.jars()
    assert len(listed) > 100
    assert sorted(asked) == sorted(jar.path for jar in listed)  # each listed jar fetched once
    built = next(cache.glob("launcher-*"))
    # Every listed jar, byte for byte as listed, and the launcher compiled into its jar.
    lib = {path.name: path for path in (built / "lib").iterdir()}
    assert sorted(lib) == sorted(jar.name for jar in listed)
    assert all(hashlib.sha256(lib[jar.name].read_bytes()).hexdigest() == jar.sha256 for jar in listed)
    with zipfile.ZipFile(built / "solr-launcher.jar") as jar:
        assert {"neardup/SolrLauncher.class", "log4j2.xml"} <= set(jar.namelist())
    assert not list(cache.glob("*.build-*"))
    # Built once: a second build asks for nothing.
    asked.clear()
    again = run_cli("solr", "build", env=env)
    assert again.returncode == 0, again.stderr
    assert asked == []


def test_a_jar_with_another_sha256_is_refused_and_not_kept(repository, tmp_path):
    url, asked, wrong = repository
    cache = tmp_path / "cache"
    listed = launcher.jars()
    bad = listed[len(listed) // 2]
    # Every other jar is in the cache already (checked, so not fetched again).
    for jar in listed:
        if jar is not bad:
            (cache / "maven" / jar.path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(launcher.cache_dir() / "maven" / jar.path, cache / "maven" / jar.path)
    wrong.add(bad.path)
    env = {"PATH": jdk_only_path(tmp_path / "bin"), "JAVA_HOME": "", "NEARDUP_CACHE_DIR": str(cache),
           "NEARDUP_MAVEN_URL": url}
    done = run_cli("solr", "build", env=env)
    assert done.returncode == 1
    told, error = done.stderr.strip().splitlines()
    assert told == f"fetching 1 of Solr's {len(listed)} jars ({bad.size / 1e6:.0f} MB) from {url}, each checked by its SHA-256..."
    assert error == (
        f"neardup: error: {bad.name} from {url}/{bad.path} does not have the SHA-256 jars.txt lists "
        f"(hint: check what serves {url} (NEARDUP_MAVEN_URL))")
    assert asked == [bad.path]
    assert not (cache / "maven" / bad.path).exists()
    assert list((cache / "maven").rglob("*.part-*")) == []
    assert not [p for p in cache.glob("launcher-*") if (p / "solr-launcher.jar").exists()]
