"""A protected Solr: basic authentication and TLS, against real nodes."""

import base64
import hashlib
import json
import os
import subprocess

import pytest

from conftest import free_port, run_cli

from neardup_solr import server

USER, PASSWORD = "indexer", "correct horse battery staple"


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
    node = server.start(data_dir, free_port(), exit_with=os.getpid(), echo=lambda _: None)
    records = data_dir / "records.txt"
    records.write_text("1 Art's Deli 12224 Ventura Blvd. Studio City\n2 Art's Deli 12224 Ventura Blvd Studio City\n")
    yield node, records
    server.stop(data_dir)


def no_secret_in(done):
    assert PASSWORD not in done.stdout + done.stderr
    assert "wrong-" not in done.stdout + done.stderr


def test_without_credentials_solr_refuses_with_a_one_line_hint(protected):
    node, records = protected
    done = run_cli("index", str(records), "--solr-url", node.url)
    assert done.returncode == 5
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"neardup: error: Solr refused the credentials at {node.url}: ")
    assert line.endswith("(hint: check --user (SOLR_USER) and the password (SOLR_PASSWORD or --password-file))")


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
    assert done.returncode == 5 and "refused the credentials" in done.stderr
    no_secret_in(done)
    in_url = node.url.replace("http://", f"http://{USER}:wrong-pw@")
    done = run_cli("report", str(tmp_path / "p.tsv"), "--solr-url", in_url)
    assert done.returncode == 5 and f"at {node.url}:" in done.stderr
    no_secret_in(done)


def test_a_user_without_a_password_is_an_error(protected):
    node, records = protected
    assert "SOLR_PASSWORD" not in os.environ
    done = run_cli("index", str(records), "--solr-url", node.url, "--user", USER)
    assert done.returncode == 1
    assert done.stderr.strip() == ("neardup: error: no password for user 'indexer' "
                                   "(hint: set SOLR_PASSWORD or use --password-file)")


@pytest.fixture(scope="module")
def tls_node(tmp_path_factory):
    """A node serving HTTPS with a self-signed certificate made by the JDK's keytool."""
    folder = tmp_path_factory.mktemp("tls")
    keystore, certificate = folder / "node.p12", folder / "ca.pem"
    subprocess.run(["keytool", "-genkeypair", "-alias", "solr", "-keyalg", "RSA", "-keysize", "2048",
                    "-keystore", str(keystore), "-storetype", "PKCS12", "-storepass", "keystore-secret",
                    "-keypass", "keystore-secret", "-dname", "CN=localhost", "-validity", "2",
                    "-ext", "SAN=ip:127.0.0.1,dns:localhost"], check=True, capture_output=True)
    subprocess.run(["keytool", "-exportcert", "-rfc", "-alias", "solr", "-keystore", str(keystore),
                    "-storepass", "keystore-secret", "-file", str(certificate)], check=True, capture_output=True)
    os.environ["NEARDUP_KEYSTORE_PASSWORD"] = "keystore-secret"
    try:
        node = server.start(folder / "data", free_port(), keystore=keystore, exit_with=os.getpid(),
                            echo=lambda _: None)
    finally:
        del os.environ["NEARDUP_KEYSTORE_PASSWORD"]
    records = folder / "records.txt"
    records.write_text("1 Hotel Bel-Air 701 Stone Canyon Rd. Bel Air\n")
    yield node, certificate, records
    server.stop(folder / "data")


def test_tls_certificates_are_verified_unless_their_ca_is_given(tls_node):
    node, certificate, records = tls_node
    assert node.url.startswith("https://127.0.0.1:")
    done = run_cli("index", str(records), "--solr-url", node.url, "--retries", "0")
    assert done.returncode == 3
    assert done.stderr.strip() == (f"neardup: error: the TLS certificate of {node.url} could not be verified "
                                   "(hint: give its CA certificate with --ca-cert FILE (or SOLR_CA_CERT))")
    done = run_cli("index", str(records), "--solr-url", node.url, "--ca-cert", str(certificate))
    assert done.returncode == 0, done.stderr
    done = run_cli("query", "Hotel Bel-Air 701 Stone Canyon Road Bel Air", "--solr-url", node.url,
                   env={"SOLR_CA_CERT": str(certificate)})
    assert done.stdout.split("\t")[2] == "1"
    # Plain HTTP to the TLS port gets no answer that looks like Solr's.
    done = run_cli("index", str(records), "--solr-url", node.url.replace("https:", "http:"), "--retries", "0")
    assert done.returncode != 0
