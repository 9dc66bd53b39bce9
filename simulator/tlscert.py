"""Self-signed serving certificate for `SimulatedCluster(tls=True)`.

kubectl and oc (client-go) send a bearer token only over TLS, so they need https; the Python kubernetes client
and kubernetes.core also work over plain http. One key pair is made per process and reused.
"""

import datetime
import ipaddress
import os
import ssl
import threading

_lock = threading.Lock()
_cached = None


def serving_cert():
    """(cert_pem: bytes, key_pem: bytes) for 127.0.0.1 / ::1 / localhost."""
    global _cached
    with _lock:
        if _cached is None:
            from cryptography import x509
            from cryptography.hazmat.primitives import hashes, serialization
            from cryptography.hazmat.primitives.asymmetric import ec
            from cryptography.x509.oid import NameOID

            key = ec.generate_private_key(ec.SECP256R1())
            name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "simulated-openshift-apiserver")])
            now = datetime.datetime.now(datetime.timezone.utc)
            cert = (
                x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                .serial_number(x509.random_serial_number())
                .not_valid_before(now - datetime.timedelta(minutes=5))
                .not_valid_after(now + datetime.timedelta(days=7))
                .add_extension(x509.SubjectAlternativeName([
                    x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                    x509.IPAddress(ipaddress.ip_address("::1"))]), critical=False)
                .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                .sign(key, hashes.SHA256())
            )
            _cached = (cert.public_bytes(serialization.Encoding.PEM),
                       key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                         serialization.NoEncryption()))
        return _cached


def server_ssl_context(directory):
    cert_pem, key_pem = serving_cert()
    cert_path = os.path.join(directory, "serving.crt")
    key_path = os.path.join(directory, "serving.key")
    with open(cert_path, "wb") as fh:
        fh.write(cert_pem)
    fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(key_pem)
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cert_path, key_path)
    return ctx, cert_path
