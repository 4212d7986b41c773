"""OpenID CIBA against a real server, played by a bank's backend written with an independent JOSE library
(joserfc): it registers a backend client through the admin API, signs its client assertions and request
objects, and drives the backchannel authentication and token endpoints while a simulated phone
(`countersign device`) approves, denies or lets the request expire. Every refusal of the client's
authentication and of a request is performed as an attack and must fail.

With COUNTERSIGN_CIBA_POSTGRES_URL (a PostgreSQL server whose user may create databases, as
`postgres://user:password@host:port`) and COUNTERSIGN_CIBA_PSQL (its psql), each test runs on a database of
its own with two instances on it: the backend asks one and redeems at the other, and a ping is sent once.

Run: python -m unittest discover -s Tests/CIBA -v   (scripts/test.sh does, after building, on SQLite and on
PostgreSQL)
"""

import base64
import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from joserfc import jwt
from joserfc.jwk import ECKey, KeySet, OctKey, RSAKey

REPOSITORY = Path(__file__).resolve().parents[2]
COUNTERSIGN = os.environ.get("COUNTERSIGN_BIN", str(REPOSITORY / ".build" / "debug" / "countersign"))
ADMIN_KEY = "ciba-tests-admin-key-0123456789"
POSTGRES = os.environ.get("COUNTERSIGN_CIBA_POSTGRES_URL")
PSQL = os.environ.get("COUNTERSIGN_CIBA_PSQL", "psql")
GRANT_TYPE = "urn:openid:params:grant-type:ciba"
ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
PAYMENT = {
    "type": "payment_initiation",
    "actions": ["initiate"],
    "instructedAmount": {"currency": "EUR", "amount": "123.50"},
    "creditorName": "Merchant A",
    "creditorAccount": {"iban": "DE02100100109307118603"},
    "remittanceInformationUnstructured": "Invoice 42",
}


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Server:
    """`countersign serve --dev` on a free port, with its database, keys and logs in `directory`."""

    def __init__(self, directory, name="server", database=None, issuer=None, journeys=None):
        self.url = f"http://127.0.0.1:{free_port()}"
        self.issuer = issuer or self.url
        self.log = open(directory / f"{name}.log", "wb")
        environment = dict(
            os.environ,
            COUNTERSIGN_PORT=self.url.rsplit(":", 1)[1],
            COUNTERSIGN_PUBLIC_URL=self.issuer,
            COUNTERSIGN_DATABASE_URL=database or str(directory / "countersign.sqlite"),
            COUNTERSIGN_MASTER_KEY_FILE=str(directory / "master-key"),
            COUNTERSIGN_JOURNEYS_DIR=str(journeys or REPOSITORY / "journeys"),
            COUNTERSIGN_ADMIN_KEY=ADMIN_KEY,
        )
        self.process = subprocess.Popen(
            [COUNTERSIGN, "serve", "--dev"], cwd=directory, env=environment, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{self.url}/.well-known/openid-configuration", timeout=2) as response:
                    self.discovery = json.load(response)
                    return
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the server did not start; see {self.log.name}")
                time.sleep(0.1)

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=20)
        self.log.close()

    def admin(self, method, path, body=None):
        request = urllib.request.Request(
            f"{self.url}/admin/v1/{path}", method=method, data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {ADMIN_KEY}", "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, json.load(response)
        except urllib.error.HTTPError as error:
            return error.code, json.load(error)


class Phone:
    """A `countersign device` profile registered for `email` in the demo application."""

    def __init__(self, server, directory, email):
        self.profile = str(directory)
        registered = self.run("register", "--server", server.url, "--email", email, "--name", "Ada's phone")
        self.device_id = registered.stdout.split()[2]

    def run(self, *arguments, check=True):
        result = subprocess.run(
            [COUNTERSIGN, "device", *arguments, "--profile", self.profile], capture_output=True, text=True, timeout=60)
        if check and result.returncode != 0:
            raise AssertionError(f"device {arguments[0]} exited {result.returncode}: {result.stdout}{result.stderr}")
        return result


class Backend:
    """A bank's backend: a backend client of the demo application with its own key."""

    def __init__(self, server, client_id, mode="poll", key=None, register=True, **extra):
        self.server = server
        self.client_id = client_id
        self.key = key or ECKey.generate_key("P-256", parameters={"kid": f"{client_id}-key"})
        self.alg = "PS256" if isinstance(self.key, RSAKey) else "ES256"
        if register:
            body = {
                "id": client_id, "name": "Bank backend", "kind": "backend",
                "jwks": {"keys": [self.key.as_dict(private=False)]},
                "backchannel_token_delivery_mode": mode,
                "authorization_details_types": ["payment_initiation"],
                **extra,
            }
            status, answer = server.admin("POST", "applications/demo/clients", body)
            assert status == 201, answer

    def assertion(self, audience=None, key=None, alg=None, **changes):
        now = int(time.time())
        claims = {
            "iss": self.client_id, "sub": self.client_id, "aud": audience or self.server.issuer,
            "exp": now + 60, "iat": now, "jti": str(uuid.uuid4()),
        }
        claims.update(changes)
        key = key or self.key
        alg = alg or self.alg
        return jwt.encode({"alg": alg, "kid": key.kid} if key.kid else {"alg": alg}, claims, key, algorithms=[alg])

    def post(self, path, parameters, assertion=None, server=None):
        server = server or self.server
        form = {
            "client_assertion_type": ASSERTION_TYPE,
            "client_assertion": assertion or self.assertion(),
            **parameters,
        }
        request = urllib.request.Request(
            f"{server.url}{path}", method="POST", data=urllib.parse.urlencode(form).encode(),
            headers={"Content-Type": "application/x-www-form-urlencoded"})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, dict(response.headers), json.load(response)
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), json.load(error)

    def authorize(self, assertion=None, **parameters):
        parameters.setdefault("scope", "openid")
        return self.post("/oauth2/bc-authorize", parameters, assertion)

    def token(self, auth_req_id, assertion=None, server=None):
        return self.post("/oauth2/token", {"grant_type": GRANT_TYPE, "auth_req_id": auth_req_id}, assertion, server)


class CIBATestCase(unittest.TestCase):
    def setUp(self):
        self.directory = Path(tempfile.mkdtemp(prefix="countersign-ciba-"))
        if not os.environ.get("COUNTERSIGN_KEEP_TEST_FILES"):
            self.addCleanup(shutil.rmtree, self.directory, ignore_errors=True)
        if POSTGRES:
            database = f"ciba_{uuid.uuid4().hex[:12]}"
            self.psql(f"CREATE DATABASE {database}")
            self.addCleanup(self.psql, f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
            url = f"{POSTGRES}/{database}?sslmode=disable"
            self.server = Server(self.directory, database=url)
            self.addCleanup(self.server.stop)
            # A second instance on the same database, under the same issuer.
            self.other = Server(self.directory, name="other", database=url, issuer=self.server.issuer)
            self.addCleanup(self.other.stop)
        else:
            self.server = Server(self.directory)
            self.addCleanup(self.server.stop)
            self.other = self.server

    def psql(self, statement):
        subprocess.run([PSQL, f"{POSTGRES}/countersign?sslmode=disable", "-q", "-c", statement], check=True, capture_output=True, timeout=60)

    def phone(self, email="ada@example.com"):
        directory = self.directory / f"phone-{uuid.uuid4().hex[:8]}"
        directory.mkdir()
        return Phone(self.server, directory, email)

    def payment_request(self, backend, **parameters):
        status, headers, answer = backend.authorize(
            login_hint="ada@example.com", binding_message="Pay Merchant A 123.50 EUR",
            authorization_details=json.dumps([PAYMENT]), **parameters)
        self.assertEqual(status, 200, answer)
        self.assertEqual(headers.get("Cache-Control"), "no-store")
        return answer

    def verify_evidence(self, bundle):
        return subprocess.run(
            [COUNTERSIGN, "evidence", "verify", "-"], input=json.dumps(bundle), capture_output=True, text=True, timeout=30)

    def verified(self, token):
        with urllib.request.urlopen(f"{self.server.url}/.well-known/jwks.json", timeout=5) as response:
            keys = KeySet.import_key_set(json.load(response))
        return jwt.decode(token, keys, algorithms=["ES256"])

    def assertRefused(self, answer, status, error):
        self.assertEqual(answer[0], status, answer[2])
        self.assertEqual(answer[2]["error"], error, answer[2])
        self.assertEqual(set(answer[2]), {"error", "error_description"})
        self.assertEqual(answer[1].get("Cache-Control"), "no-store")


class PollTests(CIBATestCase):
    def test_discovery_names_the_endpoints_and_what_they_take(self):
        discovery = self.server.discovery
        self.assertEqual(discovery["backchannel_authentication_endpoint"], f"{self.server.url}/oauth2/bc-authorize")
        self.assertEqual(discovery["token_endpoint"], f"{self.server.url}/oauth2/token")
        self.assertIn(GRANT_TYPE, discovery["grant_types_supported"])
        self.assertEqual(discovery["backchannel_token_delivery_modes_supported"], ["poll", "ping"])
        self.assertEqual(discovery["backchannel_authentication_request_signing_alg_values_supported"], ["ES256", "PS256"])
        self.assertEqual(discovery["token_endpoint_auth_methods_supported"], ["private_key_jwt"])
        self.assertEqual(discovery["token_endpoint_auth_signing_alg_values_supported"], ["ES256", "PS256"])
        self.assertIs(discovery["backchannel_user_code_parameter_supported"], False)
        self.assertEqual(discovery["authorization_details_types_supported"], ["payment_initiation"])

    def test_a_payment_approved_on_the_phone_gives_tokens_carrying_exactly_the_signed_details(self):
        phone = self.phone()
        backend = Backend(self.server, "bank-backend")
        started = self.payment_request(backend)
        self.assertGreaterEqual(len(base64.urlsafe_b64decode(started["auth_req_id"] + "==")), 20)
        self.assertEqual((started["expires_in"], started["interval"]), (300, 5))
        time.sleep(started["interval"])
        self.assertRefused(backend.token(started["auth_req_id"]), 400, "authorization_pending")

        approved = phone.run("approve")
        self.assertIn("binding message: Pay Merchant A 123.50 EUR", approved.stdout)
        self.assertIn("[0].instructedAmount.amount: 123.50", approved.stdout)
        self.assertIn("[0].creditorName: Merchant A", approved.stdout)

        # On PostgreSQL, redeemed at the other instance.
        status, headers, tokens = backend.token(started["auth_req_id"], server=self.other)
        self.assertEqual(status, 200, tokens)
        self.assertEqual(headers.get("Cache-Control"), "no-store")
        self.assertEqual(tokens["token_type"], "Bearer")
        self.assertEqual(tokens["authorization_details"], [PAYMENT])
        id_token = self.verified(tokens["id_token"]).claims
        self.assertEqual(id_token["iss"], self.server.url)
        self.assertEqual(id_token["aud"], "bank-backend")
        self.assertEqual(id_token["amr"], ["mobile_biometrics", "hwk", "mfa"])
        self.assertEqual(id_token["urn:openid:params:jwt:claim:auth_req_id"], started["auth_req_id"])
        self.assertIn("auth_time", id_token)
        access = self.verified(tokens["access_token"])
        self.assertEqual(access.header["typ"], "at+jwt")
        self.assertEqual(access.claims["client_id"], "bank-backend")
        self.assertEqual(access.claims["sub"], id_token["sub"])
        self.assertEqual(access.claims["scope"], "openid")
        self.assertEqual(access.claims["authorization_details"], [PAYMENT])

        # Redeemed once.
        self.assertRefused(backend.token(started["auth_req_id"]), 400, "invalid_grant")

        # The evidence holds what was signed, and checks offline; a binding message changed afterwards does not.
        status, listed = self.server.admin("GET", "evidence?limit=1")
        self.assertEqual(status, 200, listed)
        bundle = listed["evidence"][0]
        self.assertEqual(bundle["authorization_request"], {
            "authorization_details": [PAYMENT], "binding_message": "Pay Merchant A 123.50 EUR"})
        self.assertEqual(bundle["approval_data"], {})
        verified = self.verify_evidence(bundle)
        self.assertEqual(verified.returncode, 0, verified.stderr)
        self.assertIn("Pay Merchant A 123.50 EUR", verified.stdout)
        bundle["authorization_request"]["binding_message"] = "Pay Merchant A 12.50 EUR"
        self.assertEqual(self.verify_evidence(bundle).returncode, 1)

    def test_a_sign_in_without_details_is_approved_and_signed_over_an_empty_list(self):
        phone = self.phone()
        backend = Backend(self.server, "bank-backend")
        status, _, started = backend.authorize(login_hint="ada@example.com")
        self.assertEqual(status, 200, started)
        # `device watch` shows the request before it answers.
        watched = phone.run("watch", "--auto-approve", "--count", "1")
        self.assertIn("binding message: (none)", watched.stdout)
        self.assertIn("approved", watched.stdout)
        status, _, tokens = backend.token(started["auth_req_id"])
        self.assertEqual(status, 200, tokens)
        self.assertNotIn("authorization_details", tokens)

    def test_an_id_token_this_server_issued_to_the_client_names_the_user(self):
        phone = self.phone()
        backend = Backend(self.server, "bank-backend")
        started = self.payment_request(backend)
        phone.run("approve")
        status, _, tokens = backend.token(started["auth_req_id"])
        self.assertEqual(status, 200, tokens)
        status, _, again = backend.authorize(id_token_hint=tokens["id_token"], binding_message="Sign in again")
        self.assertEqual(status, 200, again)
        self.assertIn("binding message: Sign in again", phone.run("approve").stdout)
        # Issued to another client, it names no one here; nor is an access token an id token.
        other = Backend(self.server, "other-backend")
        self.assertRefused(other.authorize(id_token_hint=tokens["id_token"]), 400, "unknown_user_id")
        self.assertRefused(backend.authorize(id_token_hint=tokens["access_token"]), 400, "unknown_user_id")

    def test_polling_faster_than_the_interval_is_slowed_down_and_the_interval_grows(self):
        self.phone()
        backend = Backend(self.server, "bank-backend")
        started = self.payment_request(backend)
        # The first poll too waits the interval.
        slowed = backend.token(started["auth_req_id"])
        self.assertRefused(slowed, 400, "slow_down")
        self.assertIn("10 seconds", slowed[2]["error_description"])
        slowed = backend.token(started["auth_req_id"])
        self.assertRefused(slowed, 400, "slow_down")
        self.assertIn("15 seconds", slowed[2]["error_description"])

    def test_denied_is_access_denied_and_the_push_fatigue_limits_hold_the_next_request(self):
        phone = self.phone()
        backend = Backend(self.server, "bank-backend")
        started = self.payment_request(backend)
        phone.run("deny")
        self.assertRefused(backend.token(started["auth_req_id"]), 400, "access_denied")
        refused = backend.authorize(login_hint="ada@example.com")
        self.assertRefused(refused, 403, "access_denied")
        self.assertIn("try again", refused[2]["error_description"])

    def test_not_me_is_access_denied(self):
        phone = self.phone()
        backend = Backend(self.server, "bank-backend")
        started = self.payment_request(backend)
        phone.run("deny", "--not-me")
        self.assertRefused(backend.token(started["auth_req_id"]), 400, "access_denied")

    def test_a_request_not_answered_in_its_requested_expiry_is_expired(self):
        self.phone()
        backend = Backend(self.server, "bank-backend")
        started = self.payment_request(backend, requested_expiry="2")
        self.assertEqual(started["expires_in"], 2)
        time.sleep(3)
        self.assertRefused(backend.token(started["auth_req_id"]), 400, "expired_token")

    def test_another_clients_auth_req_id_is_an_invalid_grant(self):
        self.phone()
        backend = Backend(self.server, "bank-backend")
        other = Backend(self.server, "other-backend")
        started = self.payment_request(backend)
        self.assertRefused(other.token(started["auth_req_id"]), 400, "invalid_grant")
        self.assertRefused(backend.token("not-an-auth-req-id"), 400, "invalid_grant")

    def test_no_token_once_the_approving_phone_is_revoked(self):
        phone = self.phone()
        backend = Backend(self.server, "bank-backend")
        started = self.payment_request(backend)
        phone.run("approve")
        status, revoked = self.server.admin("POST", f"devices/{phone.device_id}/revoke")
        self.assertEqual(status, 200, revoked)
        self.assertRefused(backend.token(started["auth_req_id"]), 400, "access_denied")


class NotificationEndpoint:
    """A backend's ping endpoint on the loopback: records every request, answers with `status` (and
    `location`, for a redirect). With `port` it listens there, once `start()` is called."""

    def __init__(self, status=204, location=None, port=None):
        self.received = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                endpoint.received.append((self.path, dict(self.headers), body))
                self.send_response(status)
                if location:
                    self.send_header("Location", location)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *arguments):
                pass

        self.handler = Handler
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}/notify"
        self.httpd = None

    def start(self):
        self.httpd = ThreadingHTTPServer(("127.0.0.1", self.port), self.handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def stop(self):
        if self.httpd:
            self.httpd.shutdown()
            self.httpd.server_close()

    def wait_for(self, count, seconds=15):
        deadline = time.monotonic() + seconds
        while len(self.received) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"{len(self.received)} notifications arrived, not {count}")
            time.sleep(0.1)


class PingTests(CIBATestCase):
    """Ping mode: the notification is sent once the answer is known, with the client's bearer token, and
    never more than needed; polling works whatever became of it."""

    def endpoint(self, **arguments):
        endpoint = NotificationEndpoint(**arguments)
        self.addCleanup(endpoint.stop)
        return endpoint

    def ping_client(self, endpoint):
        return Backend(
            self.server, "ping-backend", mode="ping", backchannel_client_notification_endpoint=endpoint.url)

    def started(self, backend, **parameters):
        status, _, started = backend.authorize(login_hint="ada@example.com", client_notification_token="bank-token-123", **parameters)
        self.assertEqual(status, 200, started)
        return started

    def test_the_notification_is_sent_once_with_the_bearer_token_and_names_the_request(self):
        phone = self.phone()
        endpoint = self.endpoint().start()
        backend = self.ping_client(endpoint)
        started = self.started(backend)
        self.assertRefused(backend.authorize(login_hint="ada@example.com"), 400, "invalid_request")
        phone.run("approve")
        endpoint.wait_for(1)
        path, headers, body = endpoint.received[0]
        self.assertEqual(path, "/notify")
        self.assertEqual(headers["Authorization"], "Bearer bank-token-123")
        self.assertTrue(headers["Content-Type"].startswith("application/json"))
        self.assertEqual(json.loads(body), {"auth_req_id": started["auth_req_id"]})
        status, _, tokens = backend.token(started["auth_req_id"])
        self.assertEqual(status, 200, tokens)
        time.sleep(3)
        self.assertEqual(len(endpoint.received), 1)
        with urllib.request.urlopen(f"{self.server.url}/metrics", timeout=5) as response:
            metrics = response.read().decode()
        self.assertIn('countersign_ciba_requests_total{endpoint="backchannel",outcome="accepted"}', metrics)
        self.assertIn('countersign_ciba_requests_total{endpoint="token",outcome="issued"}', metrics)
        if self.other is self.server:
            self.assertIn('countersign_ciba_pings_total{outcome="delivered"} 1', metrics)

    def test_an_endpoint_answering_401_is_not_retried_and_polling_still_redeems(self):
        phone = self.phone()
        endpoint = self.endpoint(status=401).start()
        backend = self.ping_client(endpoint)
        started = self.started(backend)
        phone.run("approve")
        endpoint.wait_for(1)
        time.sleep(4)
        self.assertEqual(len(endpoint.received), 1)
        status, _, tokens = backend.token(started["auth_req_id"])
        self.assertEqual(status, 200, tokens)

    def test_a_redirect_is_not_followed(self):
        phone = self.phone()
        elsewhere = self.endpoint().start()
        endpoint = self.endpoint(status=307, location=elsewhere.url).start()
        backend = self.ping_client(endpoint)
        self.started(backend)
        phone.run("approve")
        endpoint.wait_for(1)
        time.sleep(3)
        self.assertEqual((len(endpoint.received), len(elsewhere.received)), (1, 0))

    def test_an_endpoint_down_at_first_gets_the_notification_once_it_is_up(self):
        phone = self.phone()
        endpoint = self.endpoint()
        backend = self.ping_client(endpoint)
        started = self.started(backend)
        phone.run("approve")
        time.sleep(2.5)
        endpoint.start()
        endpoint.wait_for(1, seconds=20)
        self.assertEqual(json.loads(endpoint.received[0][2]), {"auth_req_id": started["auth_req_id"]})

    def test_a_notification_due_when_the_server_stops_is_sent_after_it_starts_again(self):
        if self.other is not self.server:
            self.skipTest("one instance: the restart is of the only one")
        phone = self.phone()
        endpoint = self.endpoint()
        backend = self.ping_client(endpoint)
        started = self.started(backend)
        phone.run("approve")
        time.sleep(1.5)
        self.server.stop()
        endpoint.start()
        restarted = Server(self.directory, name="restarted")
        self.addCleanup(restarted.stop)
        endpoint.wait_for(1, seconds=20)
        self.assertEqual(json.loads(endpoint.received[0][2]), {"auth_req_id": started["auth_req_id"]})

    def test_an_expired_request_is_notified_and_redeems_as_expired(self):
        self.phone()
        endpoint = self.endpoint().start()
        backend = self.ping_client(endpoint)
        started = self.started(backend, requested_expiry="2")
        endpoint.wait_for(1, seconds=10)
        self.assertRefused(backend.token(started["auth_req_id"]), 400, "expired_token")


ACCOUNT_INFORMATION = {
    "type": "object",
    "required": ["type", "accounts"],
    "properties": {
        "type": {"type": "string"},
        "accounts": {"type": "array", "maxItems": 3, "items": {"type": "string", "pattern": "^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$"}},
        "access": {"type": "string", "enum": ["balances", "transactions"]},
        "days": {"type": "integer", "minimum": 1, "maximum": 90},
    },
}


class OperatorTypeTests(unittest.TestCase):
    """A type an operator declares as a JSON Schema file beside the journeys: checked at start, offered in
    discovery, and held to its schema at the endpoint."""

    def setUp(self):
        self.directory = Path(tempfile.mkdtemp(prefix="countersign-ciba-types-"))
        self.addCleanup(shutil.rmtree, self.directory, ignore_errors=True)
        self.journeys = self.directory / "journeys"
        shutil.copytree(REPOSITORY / "journeys", self.journeys)
        (self.journeys / "authorization_details").mkdir()

    def declare(self, schema, name="account_information"):
        (self.journeys / "authorization_details" / f"{name}.json").write_text(json.dumps(schema))

    def test_a_declared_type_is_offered_and_its_schema_holds(self):
        self.declare(ACCOUNT_INFORMATION)
        server = Server(self.directory, journeys=self.journeys)
        self.addCleanup(server.stop)
        self.assertEqual(server.discovery["authorization_details_types_supported"], ["account_information", "payment_initiation"])
        (self.directory / "phone").mkdir()
        Phone(server, self.directory / "phone", "ada@example.com")
        backend = Backend(server, "bank-backend", authorization_details_types=["account_information"])
        detail = {"type": "account_information", "accounts": ["DE02100100109307118603"], "access": "balances", "days": 30}
        status, _, answer = backend.authorize(login_hint="ada@example.com", authorization_details=json.dumps([detail]))
        self.assertEqual(status, 200, answer)
        for wrong in ({**detail, "days": 365}, {**detail, "access": "payments"}, {**detail, "extra": 1},
                      {**detail, "accounts": ["not-an-iban"]}, {"type": "account_information"}):
            status, _, answer = backend.authorize(login_hint="ada@example.com", authorization_details=json.dumps([wrong]))
            self.assertEqual((status, answer["error"]), (400, "invalid_authorization_details"), wrong)
        # Not allowed to this client: the built-in type it did not register.
        status, _, answer = backend.authorize(login_hint="ada@example.com", authorization_details=json.dumps([PAYMENT]))
        self.assertEqual((status, answer["error"]), (400, "invalid_authorization_details"))

    def test_a_schema_the_checks_cannot_hold_to_stops_the_start_naming_the_file(self):
        for schema, reason in (
            ({**ACCOUNT_INFORMATION, "properties": {**ACCOUNT_INFORMATION["properties"], "days": {"type": "number"}}}, "not one of"),
            ({**ACCOUNT_INFORMATION, "additionalProperties": True}, "additionalProperties"),
            ({**ACCOUNT_INFORMATION, "properties": {**ACCOUNT_INFORMATION["properties"], "access": {"type": "string", "format": "x"}}},
             "unknown keyword 'format'"),
            ({**ACCOUNT_INFORMATION, "required": ["accounts"]}, "requires its 'type'"),
        ):
            with self.subTest(reason=reason):
                self.declare(schema)
                result = subprocess.run(
                    [COUNTERSIGN, "serve", "--dev"], cwd=self.directory, capture_output=True, text=True, timeout=60,
                    env=dict(os.environ, COUNTERSIGN_PORT=str(free_port()), COUNTERSIGN_JOURNEYS_DIR=str(self.journeys),
                             COUNTERSIGN_DATABASE_URL=str(self.directory / "refused.sqlite"),
                             COUNTERSIGN_MASTER_KEY_FILE=str(self.directory / "master-key"), COUNTERSIGN_ADMIN_KEY=ADMIN_KEY))
                self.assertNotEqual(result.returncode, 0)
                output = result.stdout + result.stderr
                self.assertIn("authorization_details/account_information.json", output)
                self.assertIn(reason, output)


class ClientAuthenticationTests(CIBATestCase):
    """Every assertion the server must refuse, refused as `invalid_client` at both endpoints."""

    def setUp(self):
        super().setUp()
        self.backend = Backend(self.server, "bank-backend")

    def assertInvalidClient(self, assertion):
        self.assertRefused(self.backend.authorize(assertion, login_hint="ada@example.com"), 401, "invalid_client")
        self.assertRefused(self.backend.token("any", assertion), 401, "invalid_client")

    def test_a_reused_jti_is_refused(self):
        assertion = self.backend.assertion()
        self.assertRefused(self.backend.authorize(assertion, login_hint="nobody@example.com"), 400, "unknown_user_id")
        self.assertRefused(self.backend.authorize(assertion, login_hint="nobody@example.com"), 401, "invalid_client")

    def test_alg_none_is_refused(self):
        now = int(time.time())
        claims = {"iss": "bank-backend", "sub": "bank-backend", "aud": self.server.url, "exp": now + 60, "jti": str(uuid.uuid4())}
        unsigned = b64url(json.dumps({"alg": "none"}).encode()) + "." + b64url(json.dumps(claims).encode()) + "."
        self.assertInvalidClient(unsigned)

    def test_hs256_keyed_with_the_public_key_is_refused(self):
        public = json.dumps(self.backend.key.as_dict(private=False)).encode()
        self.assertInvalidClient(self.backend.assertion(key=OctKey.import_key(public), alg="HS256"))

    def test_rs256_is_refused_even_with_a_registered_rsa_key(self):
        rsa = RSAKey.generate_key(2048, parameters={"kid": "rsa-key"})
        backend = Backend(self.server, "rsa-backend", key=rsa)
        self.assertRefused(backend.authorize(backend.assertion(alg="RS256"), login_hint="ada@example.com"), 401, "invalid_client")
        self.assertRefused(backend.authorize(backend.assertion(), login_hint="nobody@example.com"), 400, "unknown_user_id")

    def test_another_clients_key_is_refused(self):
        other = Backend(self.server, "other-backend")
        self.assertInvalidClient(self.backend.assertion(key=other.key))

    def test_a_wrong_audience_is_refused(self):
        self.assertInvalidClient(self.backend.assertion(audience="https://another.example"))

    def test_an_expired_or_too_long_lived_assertion_is_refused(self):
        self.assertInvalidClient(self.backend.assertion(exp=int(time.time()) - 5))
        self.assertInvalidClient(self.backend.assertion(exp=int(time.time()) + 7200))

    def test_sub_other_than_iss_is_refused(self):
        self.assertInvalidClient(self.backend.assertion(sub="someone-else"))

    def test_a_web_clients_id_is_unauthorized_client_whatever_it_sends(self):
        web = Backend(self.server, "demo-web", register=False)
        self.assertRefused(web.authorize(login_hint="ada@example.com"), 400, "unauthorized_client")
        self.assertRefused(web.authorize(web.assertion(alg="HS256", key=OctKey.import_key(b"x" * 32)), login_hint="ada@example.com"),
                           400, "unauthorized_client")
        request = urllib.request.Request(
            f"{self.server.url}/oauth2/token", method="POST", data=b"client_id=demo-native&grant_type=x",
            headers={"Content-Type": "application/x-www-form-urlencoded"})
        with self.assertRaises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        self.assertEqual((refused.exception.code, json.load(refused.exception)["error"]), (400, "unauthorized_client"))


class RequestTests(CIBATestCase):
    """Every request the server must refuse, with the error DESIGN §7 names, nothing reaching a phone."""

    def setUp(self):
        super().setUp()
        self.phone_ = self.phone()
        self.backend = Backend(self.server, "bank-backend")

    def refused(self, status, error, **parameters):
        parameters.setdefault("login_hint", "ada@example.com")
        self.assertRefused(self.backend.authorize(**parameters), status, error)

    def test_bad_parameters_are_refused_with_their_error(self):
        cases = [
            (400, "invalid_scope", {"scope": "profile"}),
            # A scope the phone never shows would ride along with what it signs.
            (400, "invalid_scope", {"scope": "openid payments:write"}),
            (400, "invalid_request", {"id_token_hint": "x.y.z"}),
            (400, "invalid_request", {"login_hint": "", "login_hint_token": "abc"}),
            (400, "invalid_request", {"requested_expiry": "soon"}),
            (400, "unknown_user_id", {"login_hint": "nobody@example.com"}),
            (400, "unknown_user_id", {"login_hint": "", "id_token_hint": "not.a.token"}),
            (400, "invalid_binding_message", {"binding_message": "Pay \u202eAUE 05.321"}),
            (400, "invalid_binding_message", {"binding_message": "Pay\u200bMerchant"}),
            (400, "invalid_binding_message", {"binding_message": "x" * 65}),
            # Drawn over its neighbours, or blank though not empty.
            (400, "invalid_binding_message", {"binding_message": "Pay 1" + "\u0301" * 40 + "0 EUR"}),
            (400, "invalid_binding_message", {"binding_message": "\u0301Pay"}),
            (400, "invalid_binding_message", {"binding_message": "Pay\u3164Merchant"}),
            (400, "invalid_authorization_details", {"authorization_details": "{}"}),
            (400, "invalid_authorization_details", {"authorization_details": json.dumps([{"type": "account_information"}])}),
            (400, "invalid_authorization_details", {"authorization_details": json.dumps([{**PAYMENT, "creditorName": "Merchant\u200dA"}])}),
            (400, "invalid_authorization_details", {"authorization_details": json.dumps([{**PAYMENT, "creditorName": "Merchant\u115fA"}])}),
            (400, "invalid_authorization_details", {"authorization_details": json.dumps([{**PAYMENT, "instructedAmount": {"currency": "EUR", "amount": 123.5}}])}),
            (400, "invalid_authorization_details", {"authorization_details": json.dumps([{**PAYMENT, "instructedAmount": {"currency": "eur", "amount": "1"}}])}),
            (400, "invalid_authorization_details", {"authorization_details": json.dumps([{**PAYMENT, "extra": "x"}])}),
            (400, "invalid_authorization_details", {"authorization_details": json.dumps([PAYMENT] * 6)}),
        ]
        for status, error, parameters in cases:
            with self.subTest(parameters=parameters):
                self.refused(status, error, **parameters)
        # Nothing reached the phone.
        self.assertEqual(self.phone_.run("pending", check=False).returncode, 3)

    def test_a_form_body_is_required_and_each_parameter_once(self):
        request = urllib.request.Request(
            f"{self.server.url}/oauth2/bc-authorize", method="POST", data=b'{"scope": "openid"}',
            headers={"Content-Type": "application/json"})
        with self.assertRaises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        self.assertEqual(refused.exception.code, 400)
        self.assertEqual(json.load(refused.exception)["error"], "invalid_request")
        form = urllib.parse.urlencode([
            ("client_assertion_type", ASSERTION_TYPE), ("client_assertion", self.backend.assertion()),
            ("scope", "openid"), ("login_hint", "ada@example.com"), ("login_hint", "eve@example.com")]).encode()
        request = urllib.request.Request(
            f"{self.server.url}/oauth2/bc-authorize", method="POST", data=form,
            headers={"Content-Type": "application/x-www-form-urlencoded"})
        with self.assertRaises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        self.assertEqual(json.load(refused.exception)["error"], "invalid_request")

    def test_a_client_that_must_sign_its_requests_sends_a_request_object(self):
        backend = Backend(self.server, "signing-backend", backchannel_authentication_request_signing_alg="ES256")
        self.assertRefused(backend.authorize(login_hint="ada@example.com"), 400, "invalid_request")
        now = int(time.time())
        claims = {
            "iss": "signing-backend", "aud": self.server.url, "exp": now + 300, "iat": now, "nbf": now, "jti": str(uuid.uuid4()),
            "scope": "openid", "login_hint": "ada@example.com", "binding_message": "Sign in to the bank",
            "authorization_details": [PAYMENT],
        }
        signed = jwt.encode({"alg": "ES256", "kid": backend.key.kid}, claims, backend.key, algorithms=["ES256"])
        status, _, started = backend.post("/oauth2/bc-authorize", {"request": signed})
        self.assertEqual(status, 200, started)
        # The same request object again: its jti was used.
        self.assertRefused(backend.post("/oauth2/bc-authorize", {"request": signed}), 400, "invalid_request")
        # Signed by another client's key, or living longer than an hour.
        other = Backend(self.server, "other-backend")
        forged = jwt.encode({"alg": "ES256", "kid": other.key.kid}, {**claims, "jti": str(uuid.uuid4())}, other.key, algorithms=["ES256"])
        self.assertRefused(backend.post("/oauth2/bc-authorize", {"request": forged}), 400, "invalid_request")
        lasting = jwt.encode(
            {"alg": "ES256", "kid": backend.key.kid}, {**claims, "jti": str(uuid.uuid4()), "exp": now + 7200}, backend.key,
            algorithms=["ES256"])
        self.assertRefused(backend.post("/oauth2/bc-authorize", {"request": lasting}), 400, "invalid_request")
        approved = self.phone_.run("approve")
        self.assertIn("binding message: Sign in to the bank", approved.stdout)
        status, _, tokens = backend.token(started["auth_req_id"])
        self.assertEqual(status, 200, tokens)
        self.assertEqual(tokens["authorization_details"], [PAYMENT])


if __name__ == "__main__":
    unittest.main()
