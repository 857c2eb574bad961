"""A protected Solr: basic authentication and TLS, against real nodes, reached
by URL and through ZooKeeper."""

import base64
import hashlib
import json
import os
import subprocess

import pytest

from conftest import free_port, one_line_error, run_cli

from neardup_solr.index import cloud, local_solr

pytestmark = pytest.mark.solr  # it starts a Solr of its own

USER, PASSWORD = "indexer", "correct horse battery staple"
KEYSTORE_PASSWORD = "keystore-secret"
REFUSED_HINT = "(hint: check --user (SOLR_USER) and the password (SOLR_PASSWORD or --password-file))"
UNVERIFIED_HINT = "(hint: give its CA certificate with --ca-cert FILE (or SOLR_CA_CERT))"


def security_json(user: str, password: str) -> str:
    """Solr's BasicAuthPlugin credentials: base64(sha256(sha256(salt + password))) and the salt."""
    salt = os.urandom(32)
    digest = hashlib.sha256(hashlib.sha256(salt + password.encode()).digest()).digest()
    return json.dumps({
        "authentication": {"class": "solr.BasicAuthPlugin", "blockUnknown": True,
                           "credentials": {user: f"{base64.b64encode(digest).decode()} {base64.b64encode(salt).decode()}"}},
        "authorization": {"class": "solr.RuleBasedAuthorizationPlugin", "user-role": {user: "admin"},
                          "permissions": [{"name": "all", "role": "admin"}]},
    })


@pytest.fixture(scope="module")
def protected(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("protected")
    (data_dir / "home").mkdir()
    (data_dir / "home" / "security.json").write_text(security_json(USER, PASSWORD))
    node = local_solr.start(data_dir, free_port(), exit_with=os.getpid(), echo=lambda _: None)
    records = data_dir / "records.txt"
    records.write_text("1 Art's Deli 12224 Ventura Blvd. Studio City\n2 Art's Deli 12224 Ventura Blvd Studio City\n")
    yield node, records
    local_solr.stop(data_dir)


def no_secret_in(done):
    assert PASSWORD not in done.stdout + done.stderr
    assert "wrong-" not in done.stdout + done.stderr


def refused(done, url: str) -> None:
    """Exit 5 and the one line saying Solr refused the credentials at ``url``."""
    assert done.returncode == 5
    line = one_line_error(done)
    assert line.startswith(f"neardup: error: Solr refused the credentials at {url}: "), line
    assert "(HTTP 401)" in line and line.endswith(REFUSED_HINT), line


def unverified(url: str) -> str:
    return f"neardup: error: the TLS certificate of {url} could not be verified {UNVERIFIED_HINT}"


def test_without_credentials_solr_refuses_with_a_one_line_hint(protected):
    node, records = protected
    refused(run_cli("index", str(records), "--solr-url", node.url), node.url)


def test_user_from_the_environment_and_password_from_the_environment_or_a_file(protected, tmp_path):
    node, records = protected
    done = run_cli("index", str(records), "--solr-url", node.url, env={"SOLR_USER": USER, "SOLR_PASSWORD": PASSWORD})
    assert done.returncode == 0, done.stderr
    no_secret_in(done)
    secret = tmp_path / "password"
    secret.write_text(PASSWORD + "\n")
    done = run_cli("report", str(tmp_path / "pairs.tsv"), "--solr-url", node.url, "--user", USER,
                   "--password-file", str(secret))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "pairs.tsv").read_text().startswith("1\t2\t0\t")
    no_secret_in(done)


def test_a_wrong_password_is_refused_and_never_shown(protected, tmp_path):
    node, records = protected
    done = run_cli("index", str(records), "--solr-url", node.url, "--user", USER, env={"SOLR_PASSWORD": "wrong-pw"})
    refused(done, node.url)
    no_secret_in(done)
    in_url = node.url.replace("http://", f"http://{USER}:wrong-pw@")
    done = run_cli("report", str(tmp_path / "p.tsv"), "--solr-url", in_url)
    refused(done, node.url)
    no_secret_in(done)
    assert not (tmp_path / "p.tsv").exists()


def test_a_user_without_a_password_is_an_error(protected, monkeypatch):
    node, records = protected
    monkeypatch.setenv("SOLR_PASSWORD", PASSWORD)  # the caller's own: never passed on to the command
    done = run_cli("index", str(records), "--solr-url", node.url, "--user", USER)
    assert done.returncode == 1
    assert one_line_error(done) == ("neardup: error: no password for user 'indexer' "
                                    "(hint: set SOLR_PASSWORD or use --password-file)")


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory):
    """A self-signed certificate for 127.0.0.1, made by the JDK's keytool: the
    keystore a node serves with, and the certificate as a client's CA."""
    folder = tmp_path_factory.mktemp("tls")
    keystore, certificate = folder / "node.p12", folder / "ca.pem"
    subprocess.run(["keytool", "-genkeypair", "-alias", "solr", "-keyalg", "RSA", "-keysize", "2048",
                    "-keystore", str(keystore), "-storetype", "PKCS12", "-storepass", KEYSTORE_PASSWORD,
                    "-keypass", KEYSTORE_PASSWORD, "-dname", "CN=localhost", "-validity", "2",
                    "-ext", "SAN=ip:127.0.0.1,dns:localhost"], check=True, capture_output=True)
    subprocess.run(["keytool", "-exportcert", "-rfc", "-alias", "solr", "-keystore", str(keystore),
                    "-storepass", KEYSTORE_PASSWORD, "-file", str(certificate)], check=True, capture_output=True)
    return keystore, certificate


@pytest.fixture(scope="module")
def tls_node(tls_files, tmp_path_factory):
    """A node serving HTTPS, started as users start it: `neardup solr start --tls-keystore`."""
    keystore, certificate = tls_files
    data = tmp_path_factory.mktemp("tls-node")
    port = free_port()
    done = run_cli("solr", "start", "--port", str(port), "--data-dir", str(data), "--tls-keystore", str(keystore),
                   "--exit-with", str(os.getpid()), env={"NEARDUP_KEYSTORE_PASSWORD": KEYSTORE_PASSWORD})
    assert done.returncode == 0, done.stderr
    url = f"https://127.0.0.1:{port}/solr/neardup"
    assert done.stderr.strip().splitlines()[-1].startswith(f"Solr is running at {url} ")
    records = data / "records.txt"
    records.write_text("1 Hotel Bel-Air 701 Stone Canyon Rd. Bel Air\n")
    yield url, certificate, records, data
    run_cli("solr", "stop", "--data-dir", str(data))


def test_tls_certificates_are_verified_unless_their_ca_is_given(tls_node):
    url, certificate, records, data = tls_node
    done = run_cli("index", str(records), "--solr-url", url, "--retries", "0")
    assert done.returncode == 3
    assert one_line_error(done) == unverified(url)
    done = run_cli("index", str(records), "--solr-url", url, "--ca-cert", str(certificate))
    assert done.returncode == 0, done.stderr
    status = run_cli("solr", "status", "--data-dir", str(data))
    assert status.returncode == 3 and one_line_error(status) == unverified(url)
    status = run_cli("solr", "status", "--data-dir", str(data), "--ca-cert", str(certificate))
    assert status.returncode == 0 and status.stdout.startswith(f"running at {url} pid="), status.stderr
    assert " records=1 " in status.stdout
    done = run_cli("query", "Hotel Bel-Air 701 Stone Canyon Road Bel Air", "--solr-url", url,
                   env={"SOLR_CA_CERT": str(certificate)})
    assert done.stdout.split("\t")[2] == "1"


def test_plain_http_to_the_tls_port_gets_no_answer(tls_node):
    url, certificate, records, _ = tls_node
    plain = url.replace("https:", "http:")
    done = run_cli("index", str(records), "--solr-url", plain, "--retries", "0")
    assert done.returncode == 3  # the node drops the connection: nothing that looks like Solr answered
    assert one_line_error(done).startswith(f"neardup: error: Solr is not reachable at {plain} (hint: ")


@pytest.fixture(scope="module")
def secure_cloud(tls_files, tmp_path_factory):
    """A SolrCloud node that asks for credentials and serves HTTPS only, as
    ZooKeeper tells its clients (``urlScheme``), with a collection ``secure``."""
    from kazoo.client import KazooClient

    keystore, certificate = tls_files
    data = tmp_path_factory.mktemp("secure-cloud")
    zk_port, port = free_port(), free_port()
    started = []
    try:
        zookeeper = local_solr.launch(["--zookeeper", str(data / "zookeeper"), "--port", str(zk_port)], data,
                                  "zookeeper.log", heap="256m", exit_with=os.getpid(), echo=lambda _: None)
        started.append(zookeeper.pid)
        local_solr.wait_until(lambda: cloud._zk_answers(zk_port), zookeeper, "ZooKeeper", data / "logs" / "zookeeper.log",
                          120)
        zk = KazooClient(hosts=f"127.0.0.1:{zk_port}")
        zk.start(timeout=30)
        zk.create("/security.json", security_json(USER, PASSWORD).encode())
        zk.create("/clusterprops.json", json.dumps({"urlScheme": "https"}).encode())
        zk.stop()
        zk.close()
        home = data / "node1"
        home.mkdir()
        (home / "solr.xml").write_text(cloud.CLOUD_SOLR_XML)
        # The node's own requests to itself (creating the collection) go over HTTPS too.
        trust = (f"-Djavax.net.ssl.trustStore={keystore} -Djavax.net.ssl.trustStorePassword={KEYSTORE_PASSWORD} "
                 "-Djavax.net.ssl.trustStoreType=PKCS12")
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("NEARDUP_KEYSTORE_PASSWORD", KEYSTORE_PASSWORD)
            patch.setenv("JAVA_TOOL_OPTIONS", trust)
            node = local_solr.launch(["--home", str(home), "--port", str(port), "--zk-host", f"127.0.0.1:{zk_port}",
                                  "--keystore", str(keystore)], data, "node1.log", heap="768m",
                                 exit_with=os.getpid(), echo=lambda _: None)
        started.append(node.pid)
        local_solr.wait_until(lambda: local_solr.answers(f"https://127.0.0.1:{port}/solr", "admin/info/system"), node,
                          "Solr node", data / "logs" / "node1.log", 180)
        url = f"https://127.0.0.1:{port}/solr/secure"
        made = run_cli("solr", "create-collection", "--solr-url", url, "--shards", "1", "--user", USER,
                       "--ca-cert", str(certificate), env={"SOLR_PASSWORD": PASSWORD})
        assert made.returncode == 0, made.stderr
        records = data / "records.txt"
        records.write_text("1 Art's Deli 12224 Ventura Blvd. Studio City\n2 Art's Deli 12224 Ventura Blvd Studio City\n"
                           "3 Hotel Bel-Air 701 Stone Canyon Rd. Bel Air\n")
        yield f"127.0.0.1:{zk_port}", url, certificate, records
    finally:
        for pid in reversed(started):
            local_solr.stop_process(pid)


def test_basic_auth_and_tls_work_through_zookeeper(secure_cloud, tmp_path):
    zk_host, url, certificate, records = secure_cloud
    where = ["--zk-host", zk_host, "--collection", "secure"]
    done = run_cli("index", str(records), *where, "--user", USER, "--ca-cert", str(certificate),
                   env={"SOLR_PASSWORD": PASSWORD})
    assert done.returncode == 0, done.stderr
    no_secret_in(done)
    out = tmp_path / "pairs.tsv"
    done = run_cli("report", str(out), *where, env={"SOLR_USER": USER, "SOLR_PASSWORD": PASSWORD,
                                                    "SOLR_CA_CERT": str(certificate)})
    assert done.returncode == 0, done.stderr
    assert [line.split("\t")[:3] for line in out.read_text().splitlines()] == [["1", "2", "0"]]
    # ZooKeeper names the node; its certificate and its credentials are checked as by URL.
    done = run_cli("index", str(records), *where, "--user", USER, "--retries", "0", env={"SOLR_PASSWORD": PASSWORD})
    assert done.returncode == 3
    assert one_line_error(done) == unverified(url)
    done = run_cli("index", str(records), *where, "--ca-cert", str(certificate))
    refused(done, url)
